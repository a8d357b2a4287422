-- Core-local script runs in progress, one row per machine and component. The worker that starts
-- a script claims the row first, then records the script's process identity (pid, its start time
-- in clock ticks since boot from /proc/<pid>/stat field 22, the host's boot id and the worker's
-- host name), so a later run can tell whether that very process is still running (a reused pid
-- has another start time) before it runs the script again. The row is removed when the script
-- ends; a row left by a worker that died is judged and taken over by the next run.
--
-- Portable SQL only, like 0001: TEXT/BIGINT, times as unix milliseconds.
CREATE TABLE script_locks (
    machine_id      TEXT   NOT NULL,
    component       TEXT   NOT NULL,
    holder          TEXT   NOT NULL,
    script          TEXT   NOT NULL,
    worker_host     TEXT   NOT NULL,
    boot_id         TEXT   NOT NULL,
    pid             BIGINT NULL,
    pid_start_ticks BIGINT NULL,
    started_at_ms   BIGINT NOT NULL,
    deadline_ms     BIGINT NOT NULL,
    PRIMARY KEY (machine_id, component)
);
