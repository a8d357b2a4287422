-- Monotonic counters shared by every worker replica (the Prometheus `*_total` series), so each
-- replica's `/metrics` reports the same site-wide truth instead of its own process's count.
--
-- Portable SQL only, like 0001: TEXT/BIGINT, no autoincrement. Rows are only ever created or
-- incremented (`INSERT … ON CONFLICT (name, label) DO UPDATE SET value = counters.value + …`).
-- `label` is '' for a counter without labels.
CREATE TABLE counters (
    name  TEXT    NOT NULL,
    label TEXT    NOT NULL,
    value BIGINT  NOT NULL,
    PRIMARY KEY (name, label)
);
