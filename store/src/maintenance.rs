//! Putting a machine into maintenance and taking it out (`hostfw machine maintenance`): a
//! maintenance host uses a slot of the site ceiling and is never selected for an update (S9).
//!
//! Owns the two conditional state changes and their history rows (one transaction each). Entering
//! is refused for a host with a reprovisioning request or in a state other than Ready/Assigned;
//! leaving returns the host to Assigned when it carries an instance, else Ready, and ends its repair
//! (`repair`: the hands-on work is done). A request is
//! never created for a machine in maintenance (`request_create`): both take the machine's write
//! lock ([`lock_machine`]) before they read, so they are serialised per machine on PostgreSQL
//! (READ COMMITTED) as on SQLite. It must not decide anything about firmware.

use hostfw_model::HostState;

use crate::error::{Result, StoreError};
use crate::revisions::next_rev;
use crate::{history, now_ms, Store};

/// What a maintenance command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaintenanceChange {
    /// The machine is now in this state.
    Changed(HostState),
    /// Nothing changed, for this reason (operator sentence).
    Refused(String),
}

impl Store {
    /// Enter (`true`) or leave (`false`) maintenance, recording `message` in the state history.
    pub async fn machine_maintenance(&self, id: &str, enter: bool, message: &str) -> Result<MaintenanceChange> {
        const OP: &str = "machine_maintenance";
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
        // The view revision before any row lock (`revisions`), then the machine's write lock, as
        // `request_create` takes it: a request being created for this machine has committed (and
        // is seen below) or waits for us.
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, id))?;
        if !lock_machine(&mut tx, id).await.map_err(StoreError::db(OP, id))? {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return Err(StoreError::not_found("machine", id));
        }
        let sql = if enter {
            "UPDATE machines SET state = 'Maintenance', substate = NULL, updated_at_ms = $2, rev = $3 \
             WHERE id = $1 AND state IN ('Ready', 'Assigned') \
             AND NOT EXISTS (SELECT 1 FROM reprovision_requests WHERE machine_id = $1)"
        } else {
            "UPDATE machines SET state = CASE WHEN instance_id IS NULL THEN 'Ready' ELSE 'Assigned' END, \
             substate = NULL, repair_reason = NULL, repair_by = NULL, repair_at_ms = NULL, \
             updated_at_ms = $2, rev = $3 WHERE id = $1 AND state = 'Maintenance'"
        };
        let updated =
            sqlx::query(sql).bind(id).bind(now).bind(rev).execute(&mut *tx).await.map_err(StoreError::db(OP, id))?;
        if updated.rows_affected() == 0 {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            let Some(machine) = self.machine_get(id).await? else {
                return Err(StoreError::not_found("machine", id));
            };
            let request = self.request_get(id).await?;
            let why = match (enter, machine.state, request) {
                (true, HostState::Maintenance, _) => format!("machine {id} is already in maintenance"),
                (true, _, Some(r)) => format!(
                    "machine {id} has a reprovisioning request ({}, {}); wait for it to finish or clear it first",
                    r.initiator,
                    if r.started_at_ms.is_some() { "started" } else { "not started" }
                ),
                (true, state, None) => {
                    format!("machine {id} is {state}; only a Ready or Assigned host can enter maintenance")
                }
                (false, state, _) => format!("machine {id} is not in maintenance (it is {state})"),
            };
            return Ok(MaintenanceChange::Refused(why));
        }
        let state: String = sqlx::query_scalar("SELECT state FROM machines WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *tx)
            .await
            .map_err(StoreError::db(OP, id))?;
        let state: HostState = state.parse().map_err(|_| StoreError::Corrupt {
            op: OP,
            id: id.to_string(),
            detail: format!("state {state:?} is not a host state"),
        })?;
        history::history_append_in(&mut tx, id, state, None, message, now).await.map_err(StoreError::db(OP, id))?;
        if enter {
            // A host entering maintenance takes a slot of the ceiling and of its failure domains.
            crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, id))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, id))?;
        Ok(MaintenanceChange::Changed(state))
    }
}

/// Take `id`'s write lock for the rest of `tx` (a row lock on PostgreSQL; SQLite's database write
/// lock) by an update that changes nothing. `false`: no such machine.
pub(crate) async fn lock_machine(tx: &mut sqlx::Transaction<'_, sqlx::Any>, id: &str) -> sqlx::Result<bool> {
    let locked = sqlx::query("UPDATE machines SET updated_at_ms = updated_at_ms WHERE id = $1")
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(locked.rows_affected() > 0)
}
