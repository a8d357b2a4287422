-- Error budgets per rollout target (`[machine_updater] error_budget_*`): one row per (target,
-- host) that began installing the target since the target was last resumed. A target is a
-- catalog model's component at one desired version; the vendor and model are the catalog
-- entry's names. A failed attempt sets `failed_at_ms` and `failure` on the host's row; a later
-- attempt of the same host keeps them (a host that failed once counts as failed until the
-- target is resumed). `hostfw budget resume` deletes the target's rows, in the same transaction
-- as its audit entry.
--
-- Portable SQL only, like 0001.
CREATE TABLE target_hosts (
    vendor          TEXT   NOT NULL,
    model           TEXT   NOT NULL,
    component       TEXT   NOT NULL,
    version         TEXT   NOT NULL,
    machine_id      TEXT   NOT NULL,
    attempted_at_ms BIGINT NOT NULL,
    failed_at_ms    BIGINT,
    failure         TEXT,
    PRIMARY KEY (vendor, model, component, version, machine_id)
);
CREATE INDEX target_hosts_machine ON target_hosts (machine_id, component, version);
