//! Live configuration in the site database (migration 0021): requests to re-read the site config
//! (`config_reload_requests`), each worker's answer (`config_reload_results`) and when each worker
//! last polled for requests (`worker_presence`), so a reload reaches every worker process and its
//! result is readable from anywhere.
//!
//! Owns those three tables. Times are the site database's (`db_clock`): workers and the CLI
//! compare them. It must not read a config file or decide what a reload changes (the worker's
//! `live_config` and `hostfw_model::config::ReloadPlan` do).

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::audit::audit_append_in;
use crate::db_clock::now_ms_sql;
use crate::error::{is_unique_violation, Result, StoreError};
use crate::tuning::{SEQ_INSERT_ATTEMPTS, WORKER_LIVE_WITHIN_MS};
use crate::Store;

/// The audit action of a stored reload request.
pub const AUDIT_CONFIG_RELOAD: &str = "config.reload";
/// The audit action of a worker's answer to one.
pub const AUDIT_CONFIG_RELOAD_ANSWER: &str = "config.reload_answer";

/// A request to re-read the site config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = StoredReloadRequest))]
pub struct ReloadRequest {
    /// Site-wide number, from 1.
    pub id: i64,
    /// Who asked (the CLI's actor, or `signal:SIGHUP` for a signal a worker received).
    pub actor: String,
    /// The one worker that answers it; `None`: every worker.
    pub worker: Option<String>,
    /// When, unix ms (the database's clock).
    pub requested_at_ms: i64,
}

/// What a worker did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReloadOutcome {
    /// Live keys changed and are in effect.
    Applied,
    /// The file is the running config: nothing to do.
    Unchanged,
    /// A key that needs a restart changed: nothing applied, the running config kept.
    Refused,
    /// The file does not load (parse or check error): nothing applied.
    Invalid,
}

impl ReloadOutcome {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReloadOutcome::Applied => "applied",
            ReloadOutcome::Unchanged => "unchanged",
            ReloadOutcome::Refused => "refused",
            ReloadOutcome::Invalid => "invalid",
        }
    }

    fn parse(text: &str) -> Option<ReloadOutcome> {
        [ReloadOutcome::Applied, ReloadOutcome::Unchanged, ReloadOutcome::Refused, ReloadOutcome::Invalid]
            .into_iter()
            .find(|o| o.as_str() == text)
    }
}

/// One worker's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReloadAnswer {
    pub request_id: i64,
    /// The worker's identity (`<host>/<pid>`).
    pub worker: String,
    pub outcome: ReloadOutcome,
    /// Applied: the live keys that changed; refused: the keys that need a restart.
    pub keys: Vec<String>,
    /// Invalid: the load error; refused: "needs a restart".
    pub problem: Option<String>,
    /// When, unix ms (the database's clock; set by the store).
    pub answered_at_ms: i64,
}

fn request_from_row(row: &AnyRow) -> std::result::Result<ReloadRequest, sqlx::Error> {
    Ok(ReloadRequest {
        id: row.try_get("id")?,
        actor: row.try_get("actor")?,
        worker: row.try_get("worker")?,
        requested_at_ms: row.try_get("requested_at_ms")?,
    })
}

fn answer_from_row(row: &AnyRow) -> Result<ReloadAnswer> {
    const OP: &str = "config_reload_answers";
    let db = |e| StoreError::db(OP, "")(e);
    let worker: String = row.try_get("worker").map_err(db)?;
    let outcome: String = row.try_get("outcome").map_err(db)?;
    let keys: String = row.try_get("keys").map_err(db)?;
    let corrupt = |detail: String| StoreError::Corrupt { op: OP, id: worker.clone(), detail };
    Ok(ReloadAnswer {
        request_id: row.try_get("request_id").map_err(db)?,
        outcome: ReloadOutcome::parse(&outcome).ok_or_else(|| corrupt(format!("unknown outcome {outcome:?}")))?,
        keys: serde_json::from_str(&keys).map_err(|e| corrupt(format!("keys {keys:?}: {e}")))?,
        problem: row.try_get("problem").map_err(db)?,
        answered_at_ms: row.try_get("answered_at_ms").map_err(db)?,
        worker,
    })
}

impl Store {
    /// Store a reload request by `actor` for every worker (`worker` `None`) or one, audited in
    /// the same transaction. Returns the stored request.
    pub async fn config_reload_request(&self, actor: &str, worker: Option<&str>) -> Result<ReloadRequest> {
        const OP: &str = "config_reload_request";
        let target = worker.unwrap_or("all workers");
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.config_reload_request_once(actor, worker, target).await {
                Err(e) if is_unique_violation(&e) && attempt < SEQ_INSERT_ATTEMPTS => continue,
                other => return other.map_err(StoreError::db(OP, target)),
            }
        }
    }

    async fn config_reload_request_once(
        &self,
        actor: &str,
        worker: Option<&str>,
        target: &str,
    ) -> std::result::Result<ReloadRequest, sqlx::Error> {
        let mut tx = self.begin_write().await?;
        let now = format!("SELECT {} AS now_ms", now_ms_sql(self.backend));
        let at_ms: i64 = sqlx::query_scalar(&now).fetch_one(&mut *tx).await?;
        let id: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) + 1 FROM config_reload_requests")
            .fetch_one(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO config_reload_requests (id, actor, worker, requested_at_ms) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(actor)
            .bind(worker)
            .bind(at_ms)
            .execute(&mut *tx)
            .await?;
        audit_append_in(&mut tx, actor, AUDIT_CONFIG_RELOAD, target, &format!("reload request {id}"), at_ms).await?;
        tx.commit().await?;
        Ok(ReloadRequest { id, actor: actor.to_string(), worker: worker.map(str::to_string), requested_at_ms: at_ms })
    }

    /// The newest request's number (0 when there is none): a worker starting now answers only
    /// requests after it.
    pub async fn config_reload_last_id(&self) -> Result<i64> {
        sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM config_reload_requests")
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("config_reload_last_id", ""))
    }

    /// Request `id`, if stored.
    pub async fn config_reload_get(&self, id: i64) -> Result<Option<ReloadRequest>> {
        const OP: &str = "config_reload_get";
        let row = sqlx::query("SELECT id, actor, worker, requested_at_ms FROM config_reload_requests WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db(OP, id.to_string()))?;
        row.as_ref().map(request_from_row).transpose().map_err(StoreError::db(OP, id.to_string()))
    }

    /// Requests after `after_id` that `worker` should answer (for every worker, or for it) and
    /// has not answered yet, oldest first.
    pub async fn config_reload_pending(&self, worker: &str, after_id: i64) -> Result<Vec<ReloadRequest>> {
        const OP: &str = "config_reload_pending";
        let rows = sqlx::query(
            "SELECT id, actor, worker, requested_at_ms FROM config_reload_requests r \
             WHERE r.id > $1 AND (r.worker IS NULL OR r.worker = $2) \
             AND NOT EXISTS (SELECT 1 FROM config_reload_results a WHERE a.request_id = r.id AND a.worker = $2) \
             ORDER BY r.id",
        )
        .bind(after_id)
        .bind(worker)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, worker))?;
        rows.iter().map(request_from_row).collect::<std::result::Result<_, _>>().map_err(StoreError::db(OP, worker))
    }

    /// Record `answer` (its `answered_at_ms` is set here, by the database's clock) with an audit
    /// row by `actor`, in one transaction. A second answer of the same worker to the same
    /// request changes nothing.
    pub async fn config_reload_answer(&self, answer: &ReloadAnswer, actor: &str) -> Result<()> {
        const OP: &str = "config_reload_answer";
        let keys = serde_json::to_string(&answer.keys).unwrap_or_else(|_| "[]".to_string());
        let detail =
            format!("reload request {}: {} {}", answer.request_id, answer.outcome.as_str(), answer.keys.join(", "));
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = async {
                let mut tx = self.begin_write().await?;
                let now = format!("SELECT {} AS now_ms", now_ms_sql(self.backend));
                let at_ms: i64 = sqlx::query_scalar(&now).fetch_one(&mut *tx).await?;
                let done = sqlx::query(
                    "INSERT INTO config_reload_results (request_id, worker, outcome, keys, problem, answered_at_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (request_id, worker) DO NOTHING",
                )
                .bind(answer.request_id)
                .bind(&answer.worker)
                .bind(answer.outcome.as_str())
                .bind(&keys)
                .bind(answer.problem.as_deref())
                .bind(at_ms)
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() > 0 {
                    audit_append_in(
                        &mut tx,
                        actor,
                        AUDIT_CONFIG_RELOAD_ANSWER,
                        &answer.worker,
                        detail.trim_end(),
                        at_ms,
                    )
                    .await?;
                }
                tx.commit().await
            }
            .await;
            match result {
                Err(e) if is_unique_violation(&e) && attempt < SEQ_INSERT_ATTEMPTS => continue,
                other => return other.map_err(StoreError::db(OP, answer.worker.clone())),
            }
        }
    }

    /// Every answer to request `id`, by worker identity.
    pub async fn config_reload_answers(&self, id: i64) -> Result<Vec<ReloadAnswer>> {
        let rows = sqlx::query(
            "SELECT request_id, worker, outcome, keys, problem, answered_at_ms FROM config_reload_results \
             WHERE request_id = $1 ORDER BY worker",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("config_reload_answers", id.to_string()))?;
        rows.iter().map(answer_from_row).collect()
    }

    /// `worker` polls for reload requests now (the database's clock); `started_at_ms` is when it
    /// started. A heartbeat, not an operator's change: not audited.
    pub async fn worker_seen(&self, worker: &str, started_at_ms: i64) -> Result<()> {
        let sql = format!(
            "INSERT INTO worker_presence (worker, started_at_ms, seen_at_ms) VALUES ($1, $2, {now}) \
             ON CONFLICT (worker) DO UPDATE SET seen_at_ms = {now}, started_at_ms = excluded.started_at_ms",
            now = now_ms_sql(self.backend)
        );
        sqlx::query(&sql)
            .bind(worker)
            .bind(started_at_ms)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("worker_seen", worker))?;
        Ok(())
    }

    /// The workers seen at or after `since_ms` (the database's clock), by identity.
    pub async fn workers_seen_since(&self, since_ms: i64) -> Result<Vec<String>> {
        sqlx::query_scalar("SELECT worker FROM worker_presence WHERE seen_at_ms >= $1 ORDER BY worker")
            .bind(since_ms)
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("workers_seen_since", ""))
    }

    /// The workers live at `at_ms` (the database's clock): seen polling within
    /// `WORKER_LIVE_WITHIN_MS` before it.
    pub async fn workers_live_at(&self, at_ms: i64) -> Result<Vec<String>> {
        self.workers_seen_since(at_ms - WORKER_LIVE_WITHIN_MS).await
    }
}
