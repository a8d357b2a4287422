//! The `counters` table: site-wide monotonic counters (the Prometheus `*_total` series), one row
//! per (name, label), shared by every worker replica so they all report the same numbers.
//!
//! Owns adding to a counter (one upsert, safe under concurrent writers on both backends) and
//! listing them, plus the names hostfw counts under. It must not decide when something counts
//! (the activities do) nor format anything for Prometheus (the worker's metrics endpoint does).

use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::Store;

/// Host firmware updates by phase; labels [`PHASE_STARTED`], [`PHASE_COMPLETED`], [`PHASE_FAILED`].
pub const FIRMWARE_UPDATES_TOTAL: &str = "firmware_updates_total";
/// Automatic retries of failed host firmware reprovisioning; label `""`.
pub const HOST_REPROVISION_RETRIES_TOTAL: &str = "host_reprovision_retries_total";
/// Label of [`FIRMWARE_UPDATES_TOTAL`]: a request's update started (its first protect).
pub const PHASE_STARTED: &str = "started";
/// Label of [`FIRMWARE_UPDATES_TOTAL`]: a started update restored its host.
pub const PHASE_COMPLETED: &str = "completed";
/// Label of [`FIRMWARE_UPDATES_TOTAL`]: an attempt ended in FailedFirmwareUpgrade.
pub const PHASE_FAILED: &str = "failed";
/// Attempts of the scheduler pass activity by result; labels [`PASS_SUCCEEDED`], [`PASS_FAILED`].
/// A pass that keeps failing is retried by its workflow without end: this is how it shows.
pub const MANAGER_PASSES_TOTAL: &str = "manager_passes_total";
/// Label of [`MANAGER_PASSES_TOTAL`]: the pass ran to its end.
pub const PASS_SUCCEEDED: &str = "succeeded";
/// Label of [`MANAGER_PASSES_TOTAL`]: the pass returned an error (it is retried).
pub const PASS_FAILED: &str = "failed";

impl Store {
    /// Adds `delta` to the counter `name{label}`, creating it at `delta` if absent (one statement,
    /// so concurrent replicas never lose an increment). `label` is `""` for an unlabelled counter.
    pub async fn counter_add(&self, name: &str, label: &str, delta: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO counters (name, label, value) VALUES ($1, $2, $3) \
             ON CONFLICT (name, label) DO UPDATE SET value = counters.value + excluded.value",
        )
        .bind(name)
        .bind(label)
        .bind(delta)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db("counter_add", name))?;
        Ok(())
    }

    /// Every counter as `(name, label, value)`, ordered by name then label.
    pub async fn counter_list(&self) -> Result<Vec<(String, String, i64)>> {
        const OP: &str = "counter_list";
        sqlx::query("SELECT name, label, value FROM counters ORDER BY name, label")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db(OP, ""))?
            .iter()
            .map(|row| {
                let decode = || -> std::result::Result<(String, String, i64), sqlx::Error> {
                    Ok((row.try_get("name")?, row.try_get("label")?, row.try_get("value")?))
                };
                decode().map_err(StoreError::db(OP, ""))
            })
            .collect()
    }
}
