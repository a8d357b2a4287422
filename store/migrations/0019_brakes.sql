-- The operator's brakes (issue 27): freezes and manual pauses of rollout targets.
--
-- `freezes`: one row per freeze ever set; a lifted freeze keeps its row (`lifted_by`,
-- `lifted_at_ms`), so ids are never reused and the history stays. `scope` is `site`,
-- `model=<vendor>/<model>`, `model=<model>` or `label=<key>=<value>` (hostfw_model's
-- `FreezeScope::key`); `drain` is 0/1: in-flight hosts finish all their components.
--
-- `target_pauses`: one row per rollout target an operator paused (`hostfw budget pause`);
-- `hostfw budget resume` deletes it with the target's error-budget record, in one transaction.
--
-- Portable SQL only, like 0001.
CREATE TABLE freezes (
    id           BIGINT NOT NULL PRIMARY KEY,
    scope        TEXT   NOT NULL,
    reason       TEXT   NOT NULL,
    drain        BIGINT NOT NULL,
    set_by       TEXT   NOT NULL,
    set_at_ms    BIGINT NOT NULL,
    lifted_by    TEXT,
    lifted_at_ms BIGINT
);

CREATE TABLE target_pauses (
    vendor       TEXT   NOT NULL,
    model        TEXT   NOT NULL,
    component    TEXT   NOT NULL,
    version      TEXT   NOT NULL,
    paused_by    TEXT   NOT NULL,
    reason       TEXT   NOT NULL,
    paused_at_ms BIGINT NOT NULL,
    PRIMARY KEY (vendor, model, component, version)
);
