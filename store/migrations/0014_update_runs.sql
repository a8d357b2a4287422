-- Window fit (`[machine_updater] window_fit_min_samples`): how long past update runs took, per
-- vendor, model and component set. A row is written when a host's update run ends well (its
-- workflow restored it with no failure standing on the run's attempts): from the state
-- history's entry into HostReprovision to the restore. `components` is the run's component
-- names, sorted and comma-separated. Only the newest 100 runs of each set are kept.
--
-- Portable SQL only, like 0001.
CREATE TABLE update_runs (
    machine_id     TEXT   NOT NULL,
    vendor         TEXT   NOT NULL,
    model          TEXT   NOT NULL,
    components     TEXT   NOT NULL,
    started_at_ms  BIGINT NOT NULL,
    finished_at_ms BIGINT NOT NULL,
    PRIMARY KEY (machine_id, started_at_ms)
);
CREATE INDEX update_runs_set ON update_runs (vendor, model, components, finished_at_ms);
