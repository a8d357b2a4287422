-- Canary waves (`[machine_updater] canary_waves`): when each host's attempt of a rollout target
-- ended. The host workflow's restore sets `finished_at_ms` on the host's rows whose latest
-- attempt has not ended; an attempt has ended when `finished_at_ms` or `failed_at_ms` is at or
-- after `attempted_at_ms`. The scheduler opens a target's next wave when none of its attempts is
-- still open and the soak has passed since the latest end.
--
-- Rows written before this migration whose host has no request any more ended then: they take
-- their attempt time as their end, so no wave waits for a host that finished long ago.
--
-- Portable SQL only, like 0001.
ALTER TABLE target_hosts ADD COLUMN finished_at_ms BIGINT;
UPDATE target_hosts SET finished_at_ms = attempted_at_ms
    WHERE failed_at_ms IS NULL
      AND machine_id NOT IN (SELECT machine_id FROM reprovision_requests);
