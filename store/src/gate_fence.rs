//! The gate fence (migration 0024): one counter in the site database that orders the scheduler's
//! decisions against every write that could have changed them.
//!
//! Owns the `gate_fence` table. Every write that can tighten a scheduling gate for a host not yet
//! started calls [`bump_in`] in its own transaction, as its last lock (so no two transactions
//! wait on each other): a request created, a host entering maintenance, a host's first attempt
//! of a target (an error budget counts attempted hosts), a target failure recorded, a run's end
//! (window fit's past durations), a target paused by hand or resumed, a freeze set, update
//! windows changed, the catalog changed. The canary waves' marks a pass writes before its
//! requests hold the fence where the pass read it ([`hold_in`]) without moving it. A decision made from a view (a scheduler pass, a direct request checked
//! against the rollout gates) reads the counter *before* its view ([`Store::gate_fence`]) and
//! makes each request through [`advance_in`]: the request is written only while the counter is
//! still where the decision left it, and moves it by one. On PostgreSQL the conditional update
//! re-reads the row a concurrent transaction committed; on SQLite the single writer serialises.
//!
//! Writes that only loosen a gate (a request ending, unfreeze, maintenance exit) and the site's
//! health (exploration results, health reports) do not move it: a pass that misses them is
//! conservative, and a BMC going dark during a pass's few milliseconds of writes is the next
//! pass's to see. It must not decide anything itself: the callers refuse and say why.

use crate::error::{Result, StoreError};
use crate::Store;

/// Where a decision read the fence: hand it to each request the decision makes
/// (`Store::request_create_guarded`); each request it writes moves it on by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateFence {
    expected: i64,
}

impl GateFence {
    /// The counter value the next fenced write expects.
    pub fn epoch(&self) -> i64 {
        self.expected
    }
}

impl Store {
    /// Reads the fence, before the view a decision is made from.
    pub async fn gate_fence(&self) -> Result<GateFence> {
        const OP: &str = "gate_fence";
        let epoch: i64 = sqlx::query_scalar("SELECT epoch FROM gate_fence WHERE id = 1")
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db(OP, ""))?
            .ok_or_else(|| StoreError::Corrupt {
                op: OP,
                id: String::new(),
                detail: "the gate_fence row is missing (migration 0024 inserts it)".to_string(),
            })?;
        Ok(GateFence { expected: epoch })
    }
}

/// Moves the fence on in `tx`: this write may have made a decision read before it stale.
pub(crate) async fn bump_in(tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> sqlx::Result<()> {
    sqlx::query("UPDATE gate_fence SET epoch = epoch + 1 WHERE id = 1").execute(&mut **tx).await?;
    Ok(())
}

/// Holds the fence where `fence` expects it until `tx` ends, without moving it (a decision's
/// write that is not a request: the canary waves' marks). `false`: it moved already.
pub(crate) async fn hold_in(tx: &mut sqlx::Transaction<'_, sqlx::Any>, fence: &GateFence) -> sqlx::Result<bool> {
    let held = sqlx::query("UPDATE gate_fence SET epoch = epoch WHERE id = 1 AND epoch = $1")
        .bind(fence.expected)
        .execute(&mut **tx)
        .await?;
    Ok(held.rows_affected() == 1)
}

/// Moves the fence on in `tx` only if it is where `fence` expects it (and then expects the next
/// value). `false`: another write moved it since `fence` was read; nothing was changed.
pub(crate) async fn advance_in(tx: &mut sqlx::Transaction<'_, sqlx::Any>, fence: &mut GateFence) -> sqlx::Result<bool> {
    let moved = sqlx::query("UPDATE gate_fence SET epoch = epoch + 1 WHERE id = 1 AND epoch = $1")
        .bind(fence.expected)
        .execute(&mut **tx)
        .await?;
    if moved.rows_affected() == 1 {
        fence.expected += 1;
        return Ok(true);
    }
    Ok(false)
}
