-- Approval deadlines (`[machine_updater] approval_deadline`, `approval_deadline_policy`).
--
-- approval_holds: a host whose tenant let its request's approval deadline pass under the `skip`
-- policy; its workflow gave the request up, and the scheduler does not select the host again
-- before `until_ms` (its next window). One row per machine, replaced by the next skip.
--
-- approvals: who or what approved an assigned host's request, and when: the tenant through
-- `instance reboot --apply-updates-on-reboot` (the CLI's actor), or the instance autoreboot
-- period (written when the update starts). The first approval of a request is kept; the newest
-- 20 requests of each machine are kept.
--
-- Portable SQL only, like 0001.
CREATE TABLE approval_holds (
    machine_id    TEXT   NOT NULL PRIMARY KEY,
    skipped_at_ms BIGINT NOT NULL,
    until_ms      BIGINT NOT NULL
);
CREATE TABLE approvals (
    machine_id      TEXT   NOT NULL,
    requested_at_ms BIGINT NOT NULL,
    approved_by     TEXT   NOT NULL,
    approved_at_ms  BIGINT NOT NULL,
    PRIMARY KEY (machine_id, requested_at_ms)
);
