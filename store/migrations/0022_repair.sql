-- Hosts in repair (issue 27): a host aborted to maintenance (`hostfw host reprovision abort
-- --to-maintenance`, or an abort whose platform restore failed) carries why, who and when until
-- it leaves maintenance. The scheduler counts such hosts apart from the update ceiling, under
-- `machine_updater.max_hosts_in_repair`. NULL: not in repair.
--
-- Portable SQL only, like 0001.
ALTER TABLE machines ADD COLUMN repair_reason TEXT;
ALTER TABLE machines ADD COLUMN repair_by TEXT;
ALTER TABLE machines ADD COLUMN repair_at_ms BIGINT;
