//! Firmware update windows of several machines at once (`managed-host start-updates`).
//!
//! Owns the all-or-nothing write: every machine gets the same window (or has it cleared) in one
//! transaction, or none does. It must not decide whether a window is sensible beyond
//! `start < end` (the caller checks times against now) and must not create update requests.

use hostfw_model::TimeWindow;

use crate::error::{Result, StoreError};
use crate::revisions::next_rev;
use crate::{now_ms, Store};

impl Store {
    /// Sets (`Some`, start before end) or clears (`None`) the update window
    /// of every machine in `ids`, in one transaction. Any unknown id: `NotFound { what: "machine" }`
    /// naming every unknown id (comma-separated), and nothing is written. Duplicates are harmless.
    pub async fn machine_set_update_windows(&self, ids: &[String], window: Option<TimeWindow>) -> Result<()> {
        const OP: &str = "machine_set_update_windows";
        let label = ids.join(",");
        if let Some(TimeWindow { start_ms: start, end_ms: end }) = window {
            if start >= end {
                return Err(StoreError::Invalid {
                    op: OP,
                    id: label,
                    reason: format!("window must start ({start}) before it ends ({end})"),
                });
            }
        }
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, label.as_str()))?;
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, label.as_str()))?;
        let mut unknown: Vec<&str> = Vec::new();
        for id in ids {
            let done = sqlx::query(
                "UPDATE machines SET window_start_ms = $2, window_end_ms = $3, updated_at_ms = $4, rev = $5 \
                 WHERE id = $1",
            )
            .bind(id.as_str())
            .bind(window.map(|w| w.start_ms))
            .bind(window.map(|w| w.end_ms))
            .bind(now)
            .bind(rev)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id.as_str()))?;
            if done.rows_affected() == 0 && !unknown.contains(&id.as_str()) {
                unknown.push(id);
            }
        }
        if !unknown.is_empty() {
            tx.rollback().await.map_err(StoreError::db(OP, label.as_str()))?;
            return Err(StoreError::not_found("machine", unknown.join(", ")));
        }
        // A window cancelled or moved may put a host outside it.
        crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, label.as_str()))?;
        tx.commit().await.map_err(StoreError::db(OP, label.as_str()))?;
        Ok(())
    }
}
