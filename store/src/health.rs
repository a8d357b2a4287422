//! The `health_reports` table: health reports attached to machines, one per (machine, source),
//! e.g. source "host-fw-update" with alert "HostUpdateInProgress" while a host is being updated.
//!
//! Owns putting, removing and listing reports. Classifications are stored as a comma-separated
//! list, so a classification may not be empty or contain a comma. It must not decide when a report
//! is due (workflows do) nor count hosts as unhealthy (the model does).

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::{now_ms, Store};

/// One health report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HealthReport {
    /// The machine it is attached to (must exist).
    pub machine_id: String,
    /// Who reports ("host-fw-update", ...); one report per source.
    pub source: String,
    /// Alert id ("HostUpdateInProgress", ...).
    pub alert_id: String,
    /// Human-readable message.
    pub message: String,
    /// Classifications ("PreventAllocations", "SuppressExternalAlerting", ...), in order.
    pub classifications: Vec<String>,
}

fn health_from_row(row: &AnyRow) -> std::result::Result<HealthReport, sqlx::Error> {
    let classifications: String = row.try_get("classifications")?;
    Ok(HealthReport {
        machine_id: row.try_get("machine_id")?,
        source: row.try_get("source")?,
        alert_id: row.try_get("alert_id")?,
        message: row.try_get("message")?,
        classifications: classifications.split(',').filter(|c| !c.is_empty()).map(str::to_owned).collect(),
    })
}

impl Store {
    /// Inserts or replaces the machine's report from `report.source` (the creation time of an
    /// existing report is kept). Unknown machine: `NotFound { what: "machine" }`.
    pub async fn health_report_put(&self, report: &HealthReport) -> Result<()> {
        const OP: &str = "health_report_put";
        let id = report.machine_id.as_str();
        if let Some(bad) = report.classifications.iter().find(|c| c.is_empty() || c.contains(',')) {
            return Err(StoreError::Invalid {
                op: OP,
                id: id.to_owned(),
                reason: format!("classification {bad:?} is empty or contains a comma"),
            });
        }
        let done = sqlx::query(
            "INSERT INTO health_reports (machine_id, source, alert_id, message, classifications, created_at_ms) \
             SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM machines WHERE id = $1) \
             ON CONFLICT (machine_id, source) DO UPDATE SET alert_id = excluded.alert_id, \
               message = excluded.message, classifications = excluded.classifications",
        )
        .bind(id)
        .bind(report.source.as_str())
        .bind(report.alert_id.as_str())
        .bind(report.message.as_str())
        .bind(report.classifications.join(","))
        .bind(now_ms())
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, id))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("machine", id));
        }
        Ok(())
    }

    /// Removes the machine's report from `source`; true if there was one.
    pub async fn health_report_remove(&self, machine_id: &str, source: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM health_reports WHERE machine_id = $1 AND source = $2")
            .bind(machine_id)
            .bind(source)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("health_report_remove", machine_id))?;
        Ok(done.rows_affected() > 0)
    }

    /// The machine's reports, ordered by source.
    pub async fn health_reports_for(&self, machine_id: &str) -> Result<Vec<HealthReport>> {
        sqlx::query(
            "SELECT machine_id, source, alert_id, message, classifications FROM health_reports \
             WHERE machine_id = $1 ORDER BY source",
        )
        .bind(machine_id)
        .fetch_all(&self.pool)
        .await
        .and_then(|rows| rows.iter().map(health_from_row).collect())
        .map_err(StoreError::db("health_reports_for", machine_id))
    }

    /// Every machine's reports, ordered by machine then source (fleet health for the gates).
    pub async fn health_report_list(&self) -> Result<Vec<HealthReport>> {
        sqlx::query(
            "SELECT machine_id, source, alert_id, message, classifications FROM health_reports \
             ORDER BY machine_id, source",
        )
        .fetch_all(&self.pool)
        .await
        .and_then(|rows| rows.iter().map(health_from_row).collect())
        .map_err(StoreError::db("health_report_list", ""))
    }
}
