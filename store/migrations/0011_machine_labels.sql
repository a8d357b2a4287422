-- Machine labels (failure domains such as rack=r12) and the per-label-value lock that keeps
-- `[machine_updater] max_concurrent_per_label` exact under concurrency.
--
-- `machines.labels` is a JSON object of strings (`{"rack":"r12"}`), written with the machine row
-- (so it carries the row's `rev` like every other column the scheduler's view reads).
--
-- `label_locks` has one row per (key, value) a request was ever capped on. Creating a request for
-- a host with capped labels first upserts that row inside its transaction (the row's lock on
-- PostgreSQL, the database write lock on SQLite), then counts the hosts in flight with the same
-- label: two requests for one rack serialise there, and the second sees the first.
--
-- Portable SQL only, like 0001.
ALTER TABLE machines ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';

CREATE TABLE label_locks (
    label_key   TEXT   NOT NULL,
    label_value TEXT   NOT NULL,
    touched     BIGINT NOT NULL,
    PRIMARY KEY (label_key, label_value)
);
