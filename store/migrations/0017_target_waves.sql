-- Canary waves frozen per rollout target (issue 26 item 9): one row per target whose first wave
-- started since its last resume. `hosts` is the target's host count when its first wave started
-- (grown since when more hosts joined, never shrunk): the wave sizes are shares of it, so hosts
-- that fail exploration do not shrink the waves and open the next one early. `wave` is the wave
-- reached (from 1): the scheduler starts from it and opens later waves only through their checks.
-- The manager pass writes both (only ever larger) while the target's attempts it read are still
-- on record; `hostfw budget resume` deletes the row with the target's `target_hosts` rows, in one
-- transaction.
--
-- Portable SQL only, like 0001.
CREATE TABLE target_waves (
    vendor        TEXT   NOT NULL,
    model         TEXT   NOT NULL,
    component     TEXT   NOT NULL,
    version       TEXT   NOT NULL,
    hosts         BIGINT NOT NULL,
    wave          BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (vendor, model, component, version)
);
