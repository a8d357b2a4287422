-- The hostfw site database, version 1.
--
-- One file for SQLite and PostgreSQL alike: only portable types (TEXT, BIGINT, DOUBLE PRECISION),
-- booleans as BIGINT 0/1, JSON as TEXT, times as BIGINT unix milliseconds, no autoincrement
-- (sequence numbers are assigned by the store as MAX + 1). Never edit an applied migration: add a new file.

-- Managed hosts and their per-host overrides.
CREATE TABLE machines (
    id              TEXT    NOT NULL PRIMARY KEY,
    bmc_address     TEXT    NOT NULL UNIQUE,
    vendor          TEXT,
    model           TEXT,
    state           TEXT    NOT NULL,          -- "Ready", "Assigned", "HostReprovision", ...
    substate        TEXT,                      -- e.g. "WaitingForFirmwareUpgrade"
    instance_id     TEXT,                      -- tenant instance when assigned
    auto_update     BIGINT,                    -- NULL = site default; 0/1 = per-host override
    window_start_ms BIGINT,                    -- update window, unix ms; NULL = no window
    window_end_ms   BIGINT,
    created_at_ms   BIGINT  NOT NULL,
    updated_at_ms   BIGINT  NOT NULL
);

-- The last Redfish exploration of each BMC (the reported side of drift).
CREATE TABLE explored_reports (
    bmc_address     TEXT    NOT NULL PRIMARY KEY,
    machine_id      TEXT,
    vendor          TEXT,
    model           TEXT,
    report_json     TEXT,                      -- hostfw_model::InventoryReport as JSON; last good one
    error           TEXT,                      -- set when the last exploration failed
    explored_at_ms  BIGINT  NOT NULL
);
CREATE INDEX explored_reports_machine_id ON explored_reports (machine_id);

-- Host reprovision (firmware update) requests: at most one per machine.
CREATE TABLE reprovision_requests (
    machine_id                  TEXT    NOT NULL PRIMARY KEY,
    initiator                   TEXT    NOT NULL,   -- "Automated", "AdminCli", ...
    update_message              TEXT,
    requested_at_ms             BIGINT  NOT NULL,
    started_at_ms               BIGINT,
    user_approval               BIGINT  NOT NULL DEFAULT 0,
    retry_count                 BIGINT  NOT NULL DEFAULT 0,
    workflow_id                 TEXT,
    manual_upgrade_completed_ms BIGINT,
    reset_requested             BIGINT  NOT NULL DEFAULT 0
);

-- Health reports attached to machines (e.g. source "host-fw-update"), one per (machine, source).
CREATE TABLE health_reports (
    machine_id      TEXT    NOT NULL,
    source          TEXT    NOT NULL,
    alert_id        TEXT    NOT NULL,
    message         TEXT    NOT NULL,
    classifications TEXT    NOT NULL,          -- comma-separated list
    created_at_ms   BIGINT  NOT NULL,
    PRIMARY KEY (machine_id, source)
);

-- Machine state transitions, per machine sequence numbers starting at 1.
CREATE TABLE state_history (
    machine_id      TEXT    NOT NULL,
    seq             BIGINT  NOT NULL,
    state           TEXT    NOT NULL,
    substate        TEXT,
    message         TEXT    NOT NULL,
    at_ms           BIGINT  NOT NULL,
    PRIMARY KEY (machine_id, seq)
);

-- BMC logins, resolved by machine id inside activities only.
CREATE TABLE credentials (
    machine_id      TEXT    NOT NULL PRIMARY KEY,
    username        TEXT    NOT NULL,
    password        TEXT    NOT NULL,
    updated_at_ms   BIGINT  NOT NULL
);

-- Who did what, site-wide sequence numbers starting at 1.
CREATE TABLE audit_log (
    seq             BIGINT  NOT NULL PRIMARY KEY,
    at_ms           BIGINT  NOT NULL,
    actor           TEXT    NOT NULL,
    action          TEXT    NOT NULL,
    target          TEXT    NOT NULL,
    detail          TEXT    NOT NULL
);
