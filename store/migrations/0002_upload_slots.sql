-- Site-wide Redfish upload slots (firmware_global.max_uploads), shared by every worker.
-- A slot is held by one upload (holder = an id of that upload) until it is released or its
-- lease expires (a worker that died mid-upload frees its slot when the lease runs out).
CREATE TABLE upload_slots (
    slot BIGINT PRIMARY KEY,
    holder TEXT NULL,
    expires_at_ms BIGINT NOT NULL DEFAULT 0
);
