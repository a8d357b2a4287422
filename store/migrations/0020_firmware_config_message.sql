-- Safe catalog changes (issue 27 item 5): a runtime catalog version carries the change ticket
-- given with `--message` (NULL when none was given, and for every version stored before), and
-- whether it removes the runtime layer (`hostfw firmware-config unset`: the document is then
-- empty and the effective catalog is the static config and the firmware directory alone).
--
-- Portable SQL only, like 0001: booleans as BIGINT 0/1.
ALTER TABLE firmware_config_versions ADD COLUMN message TEXT;
ALTER TABLE firmware_config_versions ADD COLUMN removes_layer BIGINT NOT NULL DEFAULT 0;

-- The two-person rule (`[firmware_global] require_second_admin`): a catalog change waits here,
-- numbered apart from the versions, until an actor other than its proposer approves it (then it
-- is stored as the next version, only on top of `based_on`, the version in effect when it was
-- proposed) or someone rejects it. Rows are never deleted: decided ones are the record of who
-- proposed and who decided.
CREATE TABLE firmware_config_pending (
    id              BIGINT PRIMARY KEY,
    at_ms           BIGINT NOT NULL,
    actor           TEXT   NOT NULL,   -- who proposed it
    action          TEXT   NOT NULL,   -- firmware-config set, unset or rollback
    source          TEXT   NOT NULL,   -- the audit detail's description of its source
    document        TEXT   NOT NULL,
    sha256          TEXT   NOT NULL,
    message         TEXT,
    removes_layer   BIGINT NOT NULL,
    allow_downgrade BIGINT NOT NULL,
    based_on        BIGINT NOT NULL,   -- 0: no version was in effect
    decision        TEXT,              -- NULL while pending, then 'approved' or 'rejected'
    decided_by      TEXT,
    decided_at_ms   BIGINT,
    version         BIGINT             -- the version it was stored as, once approved
);
