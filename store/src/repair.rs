//! Hosts in repair (issue 27): a host an abort leaves in maintenance for hands-on work carries a
//! [`RepairMark`] (why, who, when) until it leaves maintenance (`machine_maintenance`, which
//! clears it). The scheduler counts such hosts apart from the update ceiling, under
//! `machine_updater.max_hosts_in_repair` (`hostfw_model::HostView::in_repair`).
//!
//! Owns entering repair: the state change to `Maintenance`, the mark and the history row, in one
//! transaction. It must not decide when a host needs repair (the host workflow's abort does).

use hostfw_model::HostState;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::revisions::next_rev;
use crate::{history, now_ms, Store};

/// Why a host is in repair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RepairMark {
    /// What happened, e.g. "aborted by alice (tok-1): BMC dead".
    pub reason: String,
    /// Who aborted it (the audit actor).
    pub by: String,
    /// When, unix ms.
    pub at_ms: i64,
}

impl Store {
    /// Put `id` in maintenance, marked for repair with `reason` by `by`, and append `message` to
    /// its history, in one transaction. A host already in repair keeps its first mark.
    /// Unknown id: `NotFound` and nothing is written.
    pub async fn machine_enter_repair(&self, id: &str, reason: &str, by: &str, message: &str) -> Result<()> {
        const OP: &str = "machine_enter_repair";
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, id))?;
        let updated = sqlx::query(
            "UPDATE machines SET state = 'Maintenance', substate = NULL, \
             repair_reason = COALESCE(repair_reason, $2), repair_by = COALESCE(repair_by, $3), \
             repair_at_ms = COALESCE(repair_at_ms, $4), updated_at_ms = $4, rev = $5 WHERE id = $1",
        )
        .bind(id)
        .bind(reason)
        .bind(by)
        .bind(now)
        .bind(rev)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, id))?;
        if updated.rows_affected() == 0 {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return Err(StoreError::not_found("machine", id));
        }
        history::history_append_in(&mut tx, id, HostState::Maintenance, None, message, now)
            .await
            .map_err(StoreError::db(OP, id))?;
        tx.commit().await.map_err(StoreError::db(OP, id))?;
        Ok(())
    }
}
