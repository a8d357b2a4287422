-- Whether a request's retry budget is spent (the host waits in FailedFirmwareUpgrade for
-- `managed-host reset-host-reprovisioning`). Stored by the workflow's retry record, so the
-- `exhausted` gauge counts exactly the hosts that wait for an operator, not a host during its
-- last pending retry (retry_count alone cannot tell the two apart).
--
-- Portable SQL only, like 0001: booleans as BIGINT 0/1.
ALTER TABLE reprovision_requests ADD COLUMN exhausted BIGINT NOT NULL DEFAULT 0;
