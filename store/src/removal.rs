//! Decommissioning a machine (`hostfw machine remove`, issue 27): refused while the host has a
//! reprovisioning request (an update may be flashing it: abort it first), otherwise the machine
//! leaves the site in one transaction — its row, its BMC credentials (destroyed, not kept
//! sealed), its explored report, health reports, activation marks, script locks and approval
//! hold go; its state history, the audit trail, past update runs and error-budget records stay,
//! so what happened to it can still be read (`hostfw audit --target <id>`). A last history row
//! and the audit entry are written in the same transaction.
//!
//! Owns that removal. It must not decide whether an update is safe to stop (the abort does).

use hostfw_model::HostState;

use crate::audit::audit_append_in;
use crate::error::{Result, StoreError};
use crate::machines::Machine;
use crate::maintenance::lock_machine;
use crate::revisions::next_rev;
use crate::{history, now_ms, Store};

/// The audit action of a removal.
pub const AUDIT_MACHINE_REMOVE: &str = "machine remove";

/// Rows of a removed machine that go with it (keyed by `machine_id`).
const OWNED_TABLES: &[&str] =
    &["credentials", "explored_reports", "health_reports", "activation_marks", "script_locks", "approval_holds"];

/// What `machine_remove` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// The machine as it was before it went.
    Removed(Box<Machine>),
    /// Nothing changed, for this reason (operator sentence).
    Refused(String),
}

/// Why a machine with a request is not removed (`started`: its update began).
pub fn refusal(id: &str, started: bool) -> String {
    let what = if started { "an update in progress" } else { "a pending reprovisioning request" };
    format!(
        "machine {id} has {what}: a flash is never cut short by a removal; stop it first with \
         `hostfw host reprovision abort --id {id} --reason ...` (add --to-maintenance for a dead BMC), then remove it"
    )
}

impl Store {
    /// Remove machine `id` for `actor`, who gave `reason`. Unknown id: `NotFound`.
    pub async fn machine_remove(&self, id: &str, actor: &str, reason: &str) -> Result<Removal> {
        const OP: &str = "machine_remove";
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
        // The view revision first (`revisions`), then the machine's write lock, as request
        // creation takes it: a request being created now has committed (and refuses us below)
        // or waits and then finds no machine.
        next_rev(&mut tx).await.map_err(StoreError::db(OP, id))?;
        if !lock_machine(&mut tx, id).await.map_err(StoreError::db(OP, id))? {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return Err(StoreError::not_found("machine", id));
        }
        let request: Option<(Option<i64>,)> =
            sqlx::query_as("SELECT started_at_ms FROM reprovision_requests WHERE machine_id = $1")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(OP, id))?;
        if let Some((started,)) = request {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return Ok(Removal::Refused(refusal(id, started.is_some())));
        }
        let row = sqlx::query(concat!("SELECT ", crate::machines::machine_columns!(), " FROM machines WHERE id = $1"))
            .bind(id)
            .fetch_one(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?;
        let machine = crate::machines::machine_from_row(&row)?;
        for table in OWNED_TABLES {
            sqlx::query(&format!("DELETE FROM {table} WHERE machine_id = $1"))
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(OP, id))?;
        }
        sqlx::query("DELETE FROM machines WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?;
        let message = format!("removed from the site by {actor}: {reason}; its BMC credentials were destroyed");
        let state = if machine.state == HostState::HostReprovision { HostState::Ready } else { machine.state };
        history::history_append_in(&mut tx, id, state, None, &message, now).await.map_err(StoreError::db(OP, id))?;
        let detail = format!(
            "bmc {} ({} {}): {reason}",
            machine.bmc_address,
            machine.vendor.as_deref().unwrap_or("?"),
            machine.model.as_deref().unwrap_or("?")
        );
        audit_append_in(&mut tx, actor, AUDIT_MACHINE_REMOVE, id, &detail, now)
            .await
            .map_err(StoreError::db(OP, id))?;
        tx.commit().await.map_err(StoreError::db(OP, id))?;
        Ok(Removal::Removed(Box::new(machine)))
    }
}
