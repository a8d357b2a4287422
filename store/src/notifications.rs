//! The webhook notification outbox (migration 0023): `notification_events`, written in the same
//! transaction as their cause ([`notify_in`]), and `notification_deliveries`, one per (event,
//! webhook), which the notifier activity fans out, claims with a lease, and marks delivered,
//! retried or given up.
//!
//! Owns the two tables and the lease rule: a delivery is claimed by one worker until
//! `lease_until_ms`; another worker takes it only after that (so replicas do not double-send in
//! the normal case, and a worker killed mid-delivery loses nothing: its claim runs out and the
//! delivery is sent again, at least once, under the same event id). It must not decide the retry
//! schedule or which webhooks exist (the notifier passes them in), nor sign or send anything.

use hostfw_model::NotificationKind;
use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::{now_ms, Store};

/// The counter of delivery attempts by outcome (labels [`OUTCOME_DELIVERED`], [`OUTCOME_FAILED`],
/// [`OUTCOME_GAVE_UP`]).
pub const NOTIFICATION_DELIVERIES_TOTAL: &str = "notification_deliveries_total";
/// A POST answered 2xx.
pub const OUTCOME_DELIVERED: &str = "delivered";
/// A POST failed; the delivery is retried later.
pub const OUTCOME_FAILED: &str = "failed";
/// A delivery was given up (`notifications.give_up_after`).
pub const OUTCOME_GAVE_UP: &str = "gave_up";

/// One recorded event: what a webhook is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationEvent {
    /// Stable id (`X-Hostfw-Event-Id`): the same on every attempt, for the receiver to dedupe.
    pub id: String,
    pub kind: NotificationKind,
    /// What it is about: a target (`Dell/R750/bmc@2.1`), a machine id, a freeze scope, a catalog version.
    pub subject: String,
    /// Kind-specific fields (docs/notifications.md).
    pub data: serde_json::Value,
    pub created_at_ms: i64,
}

/// A delivery a worker claimed and must now send.
#[derive(Debug, Clone, PartialEq)]
pub struct DueDelivery {
    pub event: NotificationEvent,
    pub webhook: String,
    /// Attempts made before this one.
    pub attempts: u32,
}

/// The state of one delivery, for `hostfw notifications list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryState {
    pub webhook: String,
    /// `pending`, `delivered` or `gave_up`.
    pub state: String,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gave_up_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// An event with its deliveries (none yet: not fanned out, or no webhook wants its kind).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationRecord {
    #[serde(flatten)]
    pub event: NotificationEvent,
    pub deliveries: Vec<DeliveryState>,
}

/// A new random event id (128 bits, hex).
fn new_event_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).expect("operating system random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Inside the transaction of its cause: records an event of `kind` about `subject` with `data`.
/// Returns its id. Rolled back with its cause, so an event is never recorded without it.
pub(crate) async fn notify_in(
    conn: &mut sqlx::AnyConnection,
    kind: NotificationKind,
    subject: &str,
    data: serde_json::Value,
    at_ms: i64,
) -> std::result::Result<String, sqlx::Error> {
    let id = new_event_id();
    sqlx::query(
        "INSERT INTO notification_events (id, seq, kind, subject, payload, created_at_ms, fanned_out) \
         SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, 0 FROM notification_events",
    )
    .bind(&id)
    .bind(kind.as_str())
    .bind(subject)
    .bind(data.to_string())
    .bind(at_ms)
    .execute(conn)
    .await?;
    Ok(id)
}

fn event_of(row: &sqlx::any::AnyRow, op: &'static str) -> Result<NotificationEvent> {
    let id: String = row.try_get("id").map_err(StoreError::db(op, ""))?;
    let get = |e| StoreError::db(op, id.clone())(e);
    let kind: String = row.try_get("kind").map_err(get)?;
    let kind = kind.parse::<NotificationKind>().map_err(|e| StoreError::Corrupt {
        op,
        id: id.clone(),
        detail: e.to_string(),
    })?;
    let payload: String = row.try_get("payload").map_err(get)?;
    let data = serde_json::from_str(&payload).map_err(|e| StoreError::Corrupt {
        op,
        id: id.clone(),
        detail: format!("payload is not JSON: {e}"),
    })?;
    Ok(NotificationEvent {
        kind,
        subject: row.try_get("subject").map_err(get)?,
        data,
        created_at_ms: row.try_get("created_at_ms").map_err(get)?,
        id,
    })
}

fn count(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

impl Store {
    /// Records an event in its own transaction (for causes that are not a store write of their
    /// own). Returns its id.
    pub async fn notification_record(
        &self,
        kind: NotificationKind,
        subject: &str,
        data: serde_json::Value,
    ) -> Result<String> {
        const OP: &str = "notification_record";
        let mut conn = self.writer.acquire().await.map_err(StoreError::db(OP, subject))?;
        notify_in(&mut conn, kind, subject, data, now_ms()).await.map_err(StoreError::db(OP, subject))
    }

    /// Makes the delivery rows of every event not fanned out yet: one per webhook of `webhooks`
    /// (`(name, wants(kind))`) that wants its kind, due at once. Idempotent (replicas may run it
    /// at once). Returns how many events it fanned out.
    pub async fn notification_fan_out(&self, webhooks: &[(String, Vec<NotificationKind>)]) -> Result<u32> {
        const OP: &str = "notification_fan_out";
        let rows = sqlx::query(
            "SELECT id, kind, subject, payload, created_at_ms FROM notification_events WHERE fanned_out = 0 \
             ORDER BY seq, id LIMIT 500",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        let mut done = 0;
        for row in &rows {
            let event = event_of(row, OP)?;
            let mut tx = self.begin_write().await.map_err(StoreError::db(OP, &event.id))?;
            for (name, kinds) in webhooks {
                if !kinds.contains(&event.kind) {
                    continue;
                }
                sqlx::query(
                    "INSERT INTO notification_deliveries (event_id, webhook, attempts, next_attempt_at_ms) \
                     VALUES ($1, $2, 0, $3) ON CONFLICT (event_id, webhook) DO NOTHING",
                )
                .bind(&event.id)
                .bind(name)
                .bind(event.created_at_ms)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(OP, &event.id))?;
            }
            sqlx::query("UPDATE notification_events SET fanned_out = 1 WHERE id = $1")
                .bind(&event.id)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(OP, &event.id))?;
            tx.commit().await.map_err(StoreError::db(OP, &event.id))?;
            done += 1;
        }
        Ok(done)
    }

    /// Claims up to `limit` due deliveries for `owner` until `now_ms + lease_ms`: not delivered,
    /// not given up, due, and not claimed by a lease still running. Each claim is one conditional
    /// update, so two workers never both claim a delivery while its lease runs.
    pub async fn notification_claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
    ) -> Result<Vec<DueDelivery>> {
        const OP: &str = "notification_claim";
        let rows = sqlx::query(
            "SELECT e.id, e.kind, e.subject, e.payload, e.created_at_ms, d.webhook, d.attempts \
             FROM notification_deliveries d JOIN notification_events e ON e.id = d.event_id \
             WHERE d.delivered_at_ms IS NULL AND d.gave_up_at_ms IS NULL AND d.next_attempt_at_ms <= $1 \
               AND (d.lease_until_ms IS NULL OR d.lease_until_ms <= $1) \
             ORDER BY d.next_attempt_at_ms, e.seq, e.id LIMIT $2",
        )
        .bind(now_ms)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, owner))?;
        let mut claimed = Vec::new();
        for row in &rows {
            let event = event_of(row, OP)?;
            let webhook: String = row.try_get("webhook").map_err(StoreError::db(OP, &event.id))?;
            let attempts: i64 = row.try_get("attempts").map_err(StoreError::db(OP, &event.id))?;
            let took = sqlx::query(
                "UPDATE notification_deliveries SET lease_owner = $3, lease_until_ms = $4 \
                 WHERE event_id = $1 AND webhook = $2 AND delivered_at_ms IS NULL AND gave_up_at_ms IS NULL \
                   AND (lease_until_ms IS NULL OR lease_until_ms <= $5)",
            )
            .bind(&event.id)
            .bind(&webhook)
            .bind(owner)
            .bind(now_ms + lease_ms)
            .bind(now_ms)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db(OP, &event.id))?;
            if took.rows_affected() == 1 {
                claimed.push(DueDelivery { event, webhook, attempts: count(attempts) });
            }
        }
        Ok(claimed)
    }

    /// The delivery of `event_id` to `webhook` was answered 2xx at `at_ms`.
    pub async fn notification_delivered(&self, event_id: &str, webhook: &str, at_ms: i64) -> Result<()> {
        const OP: &str = "notification_delivered";
        sqlx::query(
            "UPDATE notification_deliveries SET delivered_at_ms = $3, attempts = attempts + 1, last_error = NULL, \
             lease_owner = NULL, lease_until_ms = NULL WHERE event_id = $1 AND webhook = $2 AND delivered_at_ms IS NULL",
        )
        .bind(event_id)
        .bind(webhook)
        .bind(at_ms)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, event_id))?;
        self.counter_add(NOTIFICATION_DELIVERIES_TOTAL, OUTCOME_DELIVERED, 1).await
    }

    /// An attempt failed with `error` at `at_ms`: retried at `retry_at_ms`, or given up when it is
    /// `None` (the error is kept as `last_error` either way).
    pub async fn notification_failed(
        &self,
        event_id: &str,
        webhook: &str,
        error: &str,
        retry_at_ms: Option<i64>,
        at_ms: i64,
    ) -> Result<()> {
        const OP: &str = "notification_failed";
        let (next, gave_up) = match retry_at_ms {
            Some(at) => (at, None),
            None => (at_ms, Some(at_ms)),
        };
        sqlx::query(
            "UPDATE notification_deliveries SET attempts = attempts + 1, last_error = $3, next_attempt_at_ms = $4, \
             gave_up_at_ms = $5, lease_owner = NULL, lease_until_ms = NULL \
             WHERE event_id = $1 AND webhook = $2 AND delivered_at_ms IS NULL",
        )
        .bind(event_id)
        .bind(webhook)
        .bind(error)
        .bind(next)
        .bind(gave_up)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, event_id))?;
        let outcome = if gave_up.is_some() { OUTCOME_GAVE_UP } else { OUTCOME_FAILED };
        self.counter_add(NOTIFICATION_DELIVERIES_TOTAL, outcome, 1).await
    }

    /// Deliveries neither delivered nor given up, plus events not fanned out yet (each will be
    /// one delivery per webhook at least): the pending gauge.
    pub async fn notification_pending(&self) -> Result<u64> {
        const OP: &str = "notification_pending";
        let n: i64 = sqlx::query_scalar(
            "SELECT (SELECT COUNT(*) FROM notification_deliveries WHERE delivered_at_ms IS NULL AND gave_up_at_ms IS NULL) \
                  + (SELECT COUNT(*) FROM notification_events WHERE fanned_out = 0)",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// The `limit` most recent events, newest first, each with its deliveries.
    pub async fn notification_list(&self, limit: u32) -> Result<Vec<NotificationRecord>> {
        const OP: &str = "notification_list";
        let rows = sqlx::query(
            "SELECT id, kind, subject, payload, created_at_ms FROM notification_events \
             ORDER BY seq DESC, id DESC LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        let mut out = Vec::new();
        for row in &rows {
            let event = event_of(row, OP)?;
            let deliveries = sqlx::query(
                "SELECT webhook, attempts, next_attempt_at_ms, delivered_at_ms, gave_up_at_ms, last_error \
                 FROM notification_deliveries WHERE event_id = $1 ORDER BY webhook",
            )
            .bind(&event.id)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db(OP, &event.id))?
            .iter()
            .map(|d| {
                let decode = || -> std::result::Result<DeliveryState, sqlx::Error> {
                    let delivered_at_ms: Option<i64> = d.try_get("delivered_at_ms")?;
                    let gave_up_at_ms: Option<i64> = d.try_get("gave_up_at_ms")?;
                    let state = match (delivered_at_ms, gave_up_at_ms) {
                        (Some(_), _) => "delivered",
                        (None, Some(_)) => "gave_up",
                        (None, None) => "pending",
                    };
                    Ok(DeliveryState {
                        webhook: d.try_get("webhook")?,
                        state: state.to_string(),
                        attempts: count(d.try_get("attempts")?),
                        next_attempt_at_ms: if state == "pending" { d.try_get("next_attempt_at_ms")? } else { None },
                        delivered_at_ms,
                        gave_up_at_ms,
                        last_error: d.try_get("last_error")?,
                    })
                };
                decode().map_err(StoreError::db(OP, event.id.clone()))
            })
            .collect::<Result<Vec<_>>>()?;
            out.push(NotificationRecord { event, deliveries });
        }
        Ok(out)
    }

    /// Deletes events older than `before_ms` whose deliveries are all finished (delivered or
    /// given up), with those deliveries. Pending deliveries and their events are kept whatever
    /// their age. Returns how many events were deleted.
    pub async fn notification_prune(&self, before_ms: i64) -> Result<u64> {
        const OP: &str = "notification_prune";
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, ""))?;
        let finished = "SELECT id FROM notification_events e WHERE e.created_at_ms < $1 AND e.fanned_out = 1 \
             AND NOT EXISTS (SELECT 1 FROM notification_deliveries d WHERE d.event_id = e.id \
                             AND d.delivered_at_ms IS NULL AND d.gave_up_at_ms IS NULL)";
        sqlx::query(&format!("DELETE FROM notification_deliveries WHERE event_id IN ({finished})"))
            .bind(before_ms)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, ""))?;
        let done = sqlx::query(&format!("DELETE FROM notification_events WHERE id IN ({finished})"))
            .bind(before_ms)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, ""))?;
        tx.commit().await.map_err(StoreError::db(OP, ""))?;
        Ok(done.rows_affected())
    }
}
