-- Resets issued by an activation step that has not finished yet, one row per step (the workflow
-- run and the activity id, which every retry of that activity shares). A retry after the worker
-- died finds the row and waits for the reset already under way instead of resetting the host's
-- BMC or system a second time. The row is removed when the step completes.
--
-- Portable SQL only, like 0001: TEXT/BIGINT, times as unix milliseconds.
CREATE TABLE activation_marks (
    run_id       TEXT   NOT NULL,
    activity_id  TEXT   NOT NULL,
    machine_id   TEXT   NOT NULL,
    issued_at_ms BIGINT NOT NULL,
    PRIMARY KEY (run_id, activity_id)
);
