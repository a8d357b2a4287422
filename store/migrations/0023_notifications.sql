-- Webhook notifications (issue 27 item 7): an outbox of site events and their deliveries.
--
-- `notification_events`: one row per event, written in the same transaction as its cause (a
-- freeze set, a target paused, a catalog revision stored, ...). `id` is a stable random id
-- (the `X-Hostfw-Event-Id` a receiver dedupes on); `seq` (`MAX + 1`, not unique: two
-- concurrent causes may share one) orders events site-wide for reading, with `id` breaking ties;
-- `payload` is the event's JSON document; `fanned_out` (0/1) turns 1 once the notifier has made
-- its delivery rows for the webhooks configured then.
--
-- `notification_deliveries`: one row per (event, webhook). `attempts` counts POSTs tried;
-- `next_attempt_at_ms` is when the next one is due; `lease_owner`/`lease_until_ms` is the
-- worker that claimed it and until when (another worker takes it only after that);
-- `delivered_at_ms` is set by the 2xx answer; `gave_up_at_ms` when it was given up
-- (`notifications.give_up_after`), with `last_error` saying why.
--
-- Portable SQL only, like 0001.
CREATE TABLE notification_events (
    id          TEXT   NOT NULL PRIMARY KEY,
    seq         BIGINT NOT NULL,
    kind        TEXT   NOT NULL,
    subject     TEXT   NOT NULL,
    payload     TEXT   NOT NULL,
    created_at_ms BIGINT NOT NULL,
    fanned_out  BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX notification_events_fanned_out ON notification_events (fanned_out);

CREATE TABLE notification_deliveries (
    event_id          TEXT   NOT NULL,
    webhook           TEXT   NOT NULL,
    attempts          BIGINT NOT NULL DEFAULT 0,
    next_attempt_at_ms BIGINT NOT NULL,
    lease_owner       TEXT,
    lease_until_ms    BIGINT,
    last_error        TEXT,
    delivered_at_ms   BIGINT,
    gave_up_at_ms     BIGINT,
    PRIMARY KEY (event_id, webhook)
);

CREATE INDEX notification_deliveries_due ON notification_deliveries (delivered_at_ms, gave_up_at_ms, next_attempt_at_ms);
