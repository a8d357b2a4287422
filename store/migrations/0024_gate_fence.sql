-- The gate fence (issue 31): one counter that every write able to tighten a scheduling gate for a
-- host not yet started moves in its own transaction (a request created, a host entering
-- maintenance, a target failure recorded, a target paused or resumed, a freeze set, an update
-- window changed, the catalog changed). A scheduler pass reads it before its site view and
-- makes its requests only while it has not moved since (each request moves it by one), so a
-- pass never starts a host from a view that another writer has made stale: two passes that
-- overlap (an activity retried while the first attempt still runs) cannot both fill the
-- ceiling, and a pause, a freeze or a failure that lands during a pass holds the pass's starts.
--
-- Portable SQL only, like 0001.
CREATE TABLE gate_fence (
    id BIGINT PRIMARY KEY,
    epoch BIGINT NOT NULL
);
INSERT INTO gate_fence (id, epoch) VALUES (1, 0);
