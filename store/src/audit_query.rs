//! Reading the `audit_log` table by target (`hostfw audit --target`).
//!
//! Owns the filtered read only; appending and the unfiltered list stay in `audit`. It must not
//! write audit rows or interpret actions.

use sqlx::any::AnyRow;
use sqlx::Row;

use crate::audit::AuditEntry;
use crate::error::{Result, StoreError};
use crate::Store;

fn entry_from_row(row: &AnyRow) -> std::result::Result<AuditEntry, sqlx::Error> {
    Ok(AuditEntry {
        seq: row.try_get("seq")?,
        at_ms: row.try_get("at_ms")?,
        actor: row.try_get("actor")?,
        action: row.try_get("action")?,
        target: row.try_get("target")?,
        detail: row.try_get("detail")?,
    })
}

impl Store {
    /// The latest `limit` audit entries whose target is exactly `target`, newest first.
    pub async fn audit_list_for_target(&self, target: &str, limit: u32) -> Result<Vec<AuditEntry>> {
        sqlx::query(
            "SELECT seq, at_ms, actor, action, target, detail FROM audit_log WHERE target = $1 \
             ORDER BY seq DESC LIMIT $2",
        )
        .bind(target)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await
        .and_then(|rows| rows.iter().map(entry_from_row).collect())
        .map_err(StoreError::db("audit_list_for_target", target))
    }
}
