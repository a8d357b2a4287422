//! The `activation_marks` table: "this activation step already issued its reset", so that a
//! retry of the step after a worker crash waits for that reset instead of issuing another.
//!
//! Owns recording, reading and clearing a mark, keyed by the workflow run id and activity id that
//! every attempt of one activity shares. It must not decide whether a mark is still fresh enough
//! to trust (the activation activity does) nor issue anything to a BMC.

use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::tuning::ACTIVATION_MARK_KEEP_MS;
use crate::{now_ms, Store};

impl Store {
    /// Record that the step (`run_id`, `activity_id`) on `machine_id` issued its reset at
    /// `issued_at_ms`; replaces an earlier mark of the same step.
    pub async fn activation_mark_put(
        &self,
        run_id: &str,
        activity_id: &str,
        machine_id: &str,
        issued_at_ms: i64,
    ) -> Result<()> {
        const OP: &str = "activation_mark_put";
        sqlx::query("DELETE FROM activation_marks WHERE issued_at_ms < $1")
            .bind(now_ms() - ACTIVATION_MARK_KEEP_MS)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        sqlx::query(
            "INSERT INTO activation_marks (run_id, activity_id, machine_id, issued_at_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (run_id, activity_id) DO UPDATE SET machine_id = excluded.machine_id, issued_at_ms = excluded.issued_at_ms",
        )
        .bind(run_id)
        .bind(activity_id)
        .bind(machine_id)
        .bind(issued_at_ms)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        Ok(())
    }

    /// When the step (`run_id`, `activity_id`) issued its reset, if a mark is recorded.
    pub async fn activation_mark_get(&self, run_id: &str, activity_id: &str) -> Result<Option<i64>> {
        const OP: &str = "activation_mark_get";
        let row = sqlx::query("SELECT issued_at_ms FROM activation_marks WHERE run_id = $1 AND activity_id = $2")
            .bind(run_id)
            .bind(activity_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db(OP, activity_id))?;
        row.map(|r| r.try_get::<i64, _>("issued_at_ms")).transpose().map_err(StoreError::db(OP, activity_id))
    }

    /// Remove the mark of a finished step (no-op when there is none).
    pub async fn activation_mark_clear(&self, run_id: &str, activity_id: &str) -> Result<()> {
        sqlx::query("DELETE FROM activation_marks WHERE run_id = $1 AND activity_id = $2")
            .bind(run_id)
            .bind(activity_id)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("activation_mark_clear", activity_id))?;
        Ok(())
    }
}
