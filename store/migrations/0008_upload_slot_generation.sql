-- A fencing token for the upload slots (firmware_global.max_uploads): every grant of a slot, a
-- retried attempt of the same upload taking it over included, bumps `generation`. Renewal, the
-- check right before the POST and the release all name the generation they were granted, so an
-- attempt whose slot was taken over (its Temporal attempt timed out and was retried) sees it lost
-- the lease and stops before uploading, and can no longer renew or release the new holder's slot.
--
-- Portable SQL only, like 0001.
ALTER TABLE upload_slots ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
