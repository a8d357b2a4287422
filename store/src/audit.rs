//! The `audit_log` table: who did what to which target, numbered site-wide from 1.
//!
//! Owns appending and listing audit entries. It must not interpret actions, and callers must not
//! put secrets in `detail`. Numbers are `MAX(seq) + 1` in the insert itself; a concurrent writer
//! that took the same number makes the insert fail with a unique violation, and it is retried.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{is_unique_violation, Result, StoreError};
use crate::tuning::SEQ_INSERT_ATTEMPTS;
use crate::{now_ms, Store};

/// One audit record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// Site-wide sequence number, starting at 1.
    pub seq: i64,
    /// When, unix ms.
    pub at_ms: i64,
    /// Who (user, "Automated", a workflow id, ...).
    pub actor: String,
    /// What (e.g. "request_create").
    pub action: String,
    /// On what (usually a machine id).
    pub target: String,
    /// Free text.
    pub detail: String,
}

fn audit_from_row(row: &AnyRow) -> std::result::Result<AuditEntry, sqlx::Error> {
    Ok(AuditEntry {
        seq: row.try_get("seq")?,
        at_ms: row.try_get("at_ms")?,
        actor: row.try_get("actor")?,
        action: row.try_get("action")?,
        target: row.try_get("target")?,
        detail: row.try_get("detail")?,
    })
}

/// Appends an audit entry on `conn` (inside the caller's transaction, so the entry commits or
/// rolls back with the change it records). No retry: a concurrent writer taking the same number
/// fails the caller's transaction, which then changed nothing.
pub(crate) async fn audit_append_in(
    conn: &mut sqlx::AnyConnection,
    actor: &str,
    action: &str,
    target: &str,
    detail: &str,
    at_ms: i64,
) -> std::result::Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO audit_log (seq, at_ms, actor, action, target, detail) \
         SELECT COALESCE(MAX(seq), 0) + 1, $1, $2, $3, $4, $5 FROM audit_log",
    )
    .bind(at_ms)
    .bind(actor)
    .bind(action)
    .bind(target)
    .bind(detail)
    .execute(conn)
    .await?;
    Ok(())
}

impl Store {
    /// Appends an audit entry.
    pub async fn audit_append(&self, actor: &str, action: &str, target: &str, detail: &str) -> Result<()> {
        let now = now_ms();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut conn = self.writer.acquire().await.map_err(StoreError::db("audit_append", target))?;
            let res = audit_append_in(&mut conn, actor, action, target, detail, now).await;
            match res {
                Ok(_) => return Ok(()),
                Err(e) if is_unique_violation(&e) && attempt < SEQ_INSERT_ATTEMPTS => continue,
                Err(e) => return Err(StoreError::db("audit_append", target)(e)),
            }
        }
    }

    /// The latest `limit` audit entries, newest first.
    pub async fn audit_list(&self, limit: u32) -> Result<Vec<AuditEntry>> {
        sqlx::query("SELECT seq, at_ms, actor, action, target, detail FROM audit_log ORDER BY seq DESC LIMIT $1")
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .and_then(|rows| rows.iter().map(audit_from_row).collect())
            .map_err(StoreError::db("audit_list", ""))
    }
}
