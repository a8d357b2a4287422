//! Approval deadlines in the site database (migrations 0015, 0016): the holds of hosts whose
//! request was given up at its approval deadline (`skip`), who approved each assigned host's
//! request and when, and the one decision between the tenant's approval and the deadline's skip
//! (`request_approve`, `request_skip_at_deadline`: whichever comes first wins).
//!
//! Owns the `approval_holds` and `approvals` tables and the requests' `user_approval` /
//! `deadline_skipped` pair. It must not decide when a deadline passes or how long a hold lasts
//! (`hostfw_model::gates::approval`), nor delete a request (the workflow's restore does).

use hostfw_model::gates::ApprovalHold;
use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::Store;

/// The requests' approvals kept per machine: the newest ones.
const APPROVALS_KEPT: i64 = 20;

/// Who or what approved a request, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Approval {
    pub machine_id: String,
    /// The request's `requested_at_ms`: which request it approved.
    pub requested_at_ms: i64,
    /// The tenant's actor (`instance reboot --apply-updates-on-reboot`), or how the workflow was
    /// released (the instance autoreboot period).
    pub approved_by: String,
    pub approved_at_ms: i64,
}

/// How the tenant's approval of a request was taken (`Store::request_approve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalTaken {
    /// Recorded now: the update goes on.
    Approved,
    /// It was approved before: nothing changed.
    AlreadyApproved,
    /// The approval deadline gave the request up first (`skip`): nothing changed.
    DeadlineSkipped,
}

impl Store {
    /// Holds `hold.machine_id` until `hold.until_ms` (replacing an earlier hold of it).
    pub async fn approval_hold_put(&self, hold: &ApprovalHold) -> Result<()> {
        const OP: &str = "approval_hold_put";
        sqlx::query(
            "INSERT INTO approval_holds (machine_id, skipped_at_ms, until_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (machine_id) DO UPDATE SET skipped_at_ms = $2, until_ms = $3",
        )
        .bind(&hold.machine_id)
        .bind(hold.skipped_at_ms)
        .bind(hold.until_ms)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, &hold.machine_id))?;
        Ok(())
    }

    /// Every hold on record, ended or not (the scheduler compares them with its `now`), in
    /// machine id order.
    pub async fn approval_holds(&self) -> Result<Vec<ApprovalHold>> {
        const OP: &str = "approval_holds";
        let rows = sqlx::query("SELECT machine_id, skipped_at_ms, until_ms FROM approval_holds ORDER BY machine_id")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db(OP, ""))?;
        rows.iter()
            .map(|row| {
                let decode = || -> std::result::Result<ApprovalHold, sqlx::Error> {
                    Ok(ApprovalHold {
                        machine_id: row.try_get("machine_id")?,
                        skipped_at_ms: row.try_get("skipped_at_ms")?,
                        until_ms: row.try_get("until_ms")?,
                    })
                };
                decode().map_err(StoreError::db(OP, ""))
            })
            .collect()
    }

    /// The tenant approves the request of `machine_id`: unless the approval deadline gave it up
    /// first (`request_skip_at_deadline`), sets its approval and records who approved it and when,
    /// in one transaction. The approval and the skip are decided once: the conditional update
    /// lets only the first of the two through.
    pub async fn request_approve(&self, machine_id: &str, approved_by: &str, at_ms: i64) -> Result<ApprovalTaken> {
        const OP: &str = "request_approve";
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        let row = sqlx::query(
            "SELECT requested_at_ms, user_approval, deadline_skipped FROM reprovision_requests WHERE machine_id = $1",
        )
        .bind(machine_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        let Some(row) = row else {
            return Err(StoreError::not_found("request", machine_id));
        };
        let decode = |e| StoreError::db(OP, machine_id)(e);
        let requested_at_ms: i64 = row.try_get("requested_at_ms").map_err(decode)?;
        let approved: i64 = row.try_get("user_approval").map_err(decode)?;
        let skipped: i64 = row.try_get("deadline_skipped").map_err(decode)?;
        if approved != 0 {
            return Ok(ApprovalTaken::AlreadyApproved);
        }
        if skipped != 0 {
            return Ok(ApprovalTaken::DeadlineSkipped);
        }
        let done = sqlx::query(
            "UPDATE reprovision_requests SET user_approval = 1 \
             WHERE machine_id = $1 AND user_approval = 0 AND deadline_skipped = 0",
        )
        .bind(machine_id)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        if done.rows_affected() == 0 {
            // The skip (or another approval) committed in between: read again what won.
            tx.rollback().await.map_err(StoreError::db(OP, machine_id))?;
            return Box::pin(self.request_approve(machine_id, approved_by, at_ms)).await;
        }
        sqlx::query(
            "INSERT INTO approvals (machine_id, requested_at_ms, approved_by, approved_at_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (machine_id, requested_at_ms) DO NOTHING",
        )
        .bind(machine_id)
        .bind(requested_at_ms)
        .bind(approved_by)
        .bind(at_ms)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        tx.commit().await.map_err(StoreError::db(OP, machine_id))?;
        Ok(ApprovalTaken::Approved)
    }

    /// The approval deadline passed under `skip`: gives the request of `machine_id` up unless the
    /// tenant approved it first or its update already started (the host was protected, and its
    /// platform may have been changed: only the update's own restore hands it back). True: given
    /// up (or already gone); false: it is approved or started, and the update goes on.
    pub async fn request_skip_at_deadline(&self, machine_id: &str) -> Result<bool> {
        const OP: &str = "request_skip_at_deadline";
        let done = sqlx::query(
            "UPDATE reprovision_requests SET deadline_skipped = 1 \
             WHERE machine_id = $1 AND user_approval = 0 AND started_at_ms IS NULL",
        )
        .bind(machine_id)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        if done.rows_affected() > 0 {
            return Ok(true);
        }
        let row = sqlx::query("SELECT deadline_skipped FROM reprovision_requests WHERE machine_id = $1")
            .bind(machine_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        let Some(row) = row else { return Ok(true) };
        let skipped: i64 = row.try_get("deadline_skipped").map_err(StoreError::db(OP, machine_id))?;
        Ok(skipped != 0)
    }

    /// Records who approved the request of `machine_id` made at `requested_at_ms`, unless its
    /// approval is already on record (the first one is kept). True when this one was recorded.
    pub async fn approval_record(
        &self,
        machine_id: &str,
        requested_at_ms: i64,
        approved_by: &str,
        approved_at_ms: i64,
    ) -> Result<bool> {
        const OP: &str = "approval_record";
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        let inserted = sqlx::query(
            "INSERT INTO approvals (machine_id, requested_at_ms, approved_by, approved_at_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (machine_id, requested_at_ms) DO NOTHING",
        )
        .bind(machine_id)
        .bind(requested_at_ms)
        .bind(approved_by)
        .bind(approved_at_ms)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?
        .rows_affected()
            > 0;
        sqlx::query(
            "DELETE FROM approvals WHERE machine_id = $1 AND requested_at_ms < \
             (SELECT MIN(requested_at_ms) FROM (SELECT requested_at_ms FROM approvals WHERE machine_id = $1 \
              ORDER BY requested_at_ms DESC LIMIT $2) AS newest)",
        )
        .bind(machine_id)
        .bind(APPROVALS_KEPT)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        tx.commit().await.map_err(StoreError::db(OP, machine_id))?;
        Ok(inserted)
    }

    /// The approvals on record for `machine_id`, newest request first.
    pub async fn approvals_of(&self, machine_id: &str) -> Result<Vec<Approval>> {
        const OP: &str = "approvals_of";
        let rows = sqlx::query(
            "SELECT machine_id, requested_at_ms, approved_by, approved_at_ms FROM approvals \
             WHERE machine_id = $1 ORDER BY requested_at_ms DESC",
        )
        .bind(machine_id)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        rows.iter()
            .map(|row| {
                let decode = || -> std::result::Result<Approval, sqlx::Error> {
                    Ok(Approval {
                        machine_id: row.try_get("machine_id")?,
                        requested_at_ms: row.try_get("requested_at_ms")?,
                        approved_by: row.try_get("approved_by")?,
                        approved_at_ms: row.try_get("approved_at_ms")?,
                    })
                };
                decode().map_err(StoreError::db(OP, machine_id))
            })
            .collect()
    }
}
