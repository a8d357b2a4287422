-- The approval deadline and the tenant's approval decide a request once (issue 26 item 7).
--
-- reprovision_requests.deadline_skipped: 1 once the request's approval deadline passed under the
-- `skip` policy and its workflow gave it up. The tenant's approval sets user_approval only while
-- this is 0, and the skip sets it only while user_approval is 0: whichever comes first wins, in
-- one statement, and the other is told.
--
-- Portable SQL only, like 0001.
ALTER TABLE reprovision_requests ADD COLUMN deadline_skipped BIGINT NOT NULL DEFAULT 0;
