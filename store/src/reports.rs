//! The `explored_reports` table: the last Redfish exploration of each BMC (the reported side of
//! drift), keyed by BMC address.
//!
//! Owns storing and reading reports as JSON of `hostfw_model::InventoryReport`. A failed
//! exploration records its error but keeps the last good report; a success clears the error. Every
//! write stamps the row with the transaction's view revision (see `revisions`) when it inserts it
//! or changes its machine, inventory or error (not when only the exploration time moves). It must
//! not fetch inventories (that is `hostfw-redfish`) nor compare them with the catalog.

use hostfw_model::{BmcAddress, BmcLookup, InventoryReport};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::address::find_by_bmc;
use crate::error::{Result, StoreError};
use crate::revisions::next_rev;
use crate::{now_ms, Store};

/// What the store knows about one BMC's last exploration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExploredReport {
    /// The BMC address, canonical.
    pub bmc_address: BmcAddress,
    /// The machine behind the BMC, when known.
    pub machine_id: Option<String>,
    /// The last successful inventory (kept when later explorations fail).
    pub report: Option<InventoryReport>,
    /// The last exploration's error; `None` when the last exploration succeeded.
    pub error: Option<String>,
    /// When the last exploration (successful or not) finished, unix ms.
    pub explored_at_ms: i64,
}

macro_rules! report_columns {
    () => {
        "bmc_address, machine_id, report_json, error, explored_at_ms"
    };
}

/// The columns `report_from_row` decodes.
pub(crate) const REPORT_COLUMNS: &str = report_columns!();

/// The `rev` of a successful exploration's upsert: the transaction's (`excluded.rev`) when the
/// machine, the inventory or the error changes, else the row's own, so a crawl that finds what it
/// found before stamps nothing.
macro_rules! success_rev {
    () => {
        "rev = CASE WHEN explored_reports.machine_id IS DISTINCT FROM \
                   COALESCE(excluded.machine_id, explored_reports.machine_id) \
                 OR explored_reports.report_json IS DISTINCT FROM excluded.report_json \
                 OR explored_reports.error IS NOT NULL \
            THEN excluded.rev ELSE explored_reports.rev END"
    };
}

pub(crate) fn report_from_row(row: &AnyRow) -> Result<ExploredReport> {
    let stored: String = row.try_get("bmc_address").map_err(StoreError::db("report_decode", ""))?;
    let bmc_address = stored.parse::<BmcAddress>().map_err(|e| StoreError::Corrupt {
        op: "report_decode",
        id: stored.clone(),
        detail: e.to_string(),
    })?;
    let col_err = || StoreError::db("report_decode", stored.as_str());
    let machine_id: Option<String> = row.try_get("machine_id").map_err(col_err())?;
    let report_json: Option<String> = row.try_get("report_json").map_err(col_err())?;
    let error: Option<String> = row.try_get("error").map_err(col_err())?;
    let explored_at_ms: i64 = row.try_get("explored_at_ms").map_err(col_err())?;
    let report = report_json.map(|json| serde_json::from_str::<InventoryReport>(&json)).transpose().map_err(|e| {
        StoreError::Corrupt {
            op: "report_decode",
            id: stored.clone(),
            detail: format!("report_json is not an InventoryReport: {e}"),
        }
    })?;
    Ok(ExploredReport { bmc_address, machine_id, report, error, explored_at_ms })
}

impl Store {
    /// Records one exploration of `bmc_address`. `Ok(report)` replaces the report and clears the
    /// error; `Err(message)` sets the error and keeps the last good report. `machine_id = None`
    /// keeps the stored machine id.
    pub async fn report_put(
        &self,
        bmc_address: &BmcAddress,
        machine_id: Option<&str>,
        result: &std::result::Result<InventoryReport, String>,
    ) -> Result<()> {
        const OP: &str = "report_put";
        let now = now_ms();
        let key = bmc_address.to_string();
        let db = |e| StoreError::db(OP, key.as_str())(e);
        let mut tx = self.begin_write().await.map_err(db)?;
        let rev = next_rev(&mut tx).await.map_err(db)?;
        let query = match result {
            Ok(report) => {
                // An error here drops the transaction: nothing is written, the counter included.
                let json = serde_json::to_string(report).map_err(|e| StoreError::Invalid {
                    op: OP,
                    id: key.clone(),
                    reason: format!("report does not serialise: {e}"),
                })?;
                sqlx::query(concat!(
                    "INSERT INTO explored_reports (bmc_address, machine_id, vendor, model, report_json, error, explored_at_ms, rev) \
                     VALUES ($1, $2, $3, $4, $5, NULL, $6, $7) \
                     ON CONFLICT (bmc_address) DO UPDATE SET ",
                    success_rev!(),
                    ", machine_id = COALESCE(excluded.machine_id, explored_reports.machine_id), \
                       vendor = excluded.vendor, model = excluded.model, \
                       report_json = excluded.report_json, error = NULL, \
                       explored_at_ms = excluded.explored_at_ms"
                ))
                .bind(key.as_str())
                .bind(machine_id)
                .bind(report.vendor.as_str())
                .bind(report.model.as_str())
                .bind(json)
                .bind(now)
                .bind(rev)
            }
            // The rev changes only when the machine or the error does (the report is kept).
            Err(message) => sqlx::query(
                "INSERT INTO explored_reports (bmc_address, machine_id, vendor, model, report_json, error, explored_at_ms, rev) \
                 VALUES ($1, $2, NULL, NULL, NULL, $3, $4, $5) \
                 ON CONFLICT (bmc_address) DO UPDATE SET \
                   rev = CASE WHEN explored_reports.machine_id IS DISTINCT FROM \
                               COALESCE(excluded.machine_id, explored_reports.machine_id) \
                             OR explored_reports.error IS DISTINCT FROM excluded.error \
                        THEN excluded.rev ELSE explored_reports.rev END, \
                   machine_id = COALESCE(excluded.machine_id, explored_reports.machine_id), \
                   error = excluded.error, explored_at_ms = excluded.explored_at_ms",
            )
            .bind(key.as_str())
            .bind(machine_id)
            .bind(message.as_str())
            .bind(now)
            .bind(rev),
        };
        query.execute(&mut *tx).await.map_err(db)?;
        tx.commit().await.map_err(db)
    }

    /// Records many successful explorations at once, like `report_put` with `Ok(report)` for
    /// each, in one transaction and in multi-row statements (a synthetic site of 100k BMCs for a
    /// benchmark). The addresses must be distinct. All or nothing.
    pub async fn reports_put_many(&self, reports: &[(BmcAddress, Option<String>, InventoryReport)]) -> Result<()> {
        const OP: &str = "reports_put_many";
        /// Rows per statement: 7 parameters each, far below both backends' parameter limits.
        const ROWS: usize = 500;
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, ""))?;
        let rev = next_rev(&mut tx).await.map_err(StoreError::db(OP, ""))?;
        for chunk in reports.chunks(ROWS) {
            let mut sql = String::from(
                "INSERT INTO explored_reports (bmc_address, machine_id, vendor, model, report_json, error, explored_at_ms, rev) VALUES ",
            );
            for k in 0..chunk.len() {
                let b = k * 7;
                if k > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&format!(
                    "(${}, ${}, ${}, ${}, ${}, NULL, ${}, ${})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6,
                    b + 7
                ));
            }
            sql.push_str(concat!(
                " ON CONFLICT (bmc_address) DO UPDATE SET ",
                success_rev!(),
                ", machine_id = COALESCE(excluded.machine_id, explored_reports.machine_id), \
                   vendor = excluded.vendor, model = excluded.model, \
                   report_json = excluded.report_json, error = NULL, \
                   explored_at_ms = excluded.explored_at_ms"
            ));
            let mut query = sqlx::query(&sql);
            for (address, machine_id, report) in chunk {
                let json = serde_json::to_string(report).map_err(|e| StoreError::Invalid {
                    op: OP,
                    id: address.to_string(),
                    reason: format!("report does not serialise: {e}"),
                })?;
                query = query
                    .bind(address.to_string())
                    .bind(machine_id.clone())
                    .bind(report.vendor.clone())
                    .bind(report.model.clone())
                    .bind(json)
                    .bind(now)
                    .bind(rev);
            }
            let first = chunk.first().map(|(a, _, _)| a.to_string()).unwrap_or_default();
            query.execute(&mut *tx).await.map_err(StoreError::db(OP, first.as_str()))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, ""))
    }

    /// The report of the BMC `bmc` names, with the same matching as `machine_by_bmc`
    /// (`BmcLookup::from(address)` for exactly one stored address).
    pub async fn report_get(&self, bmc: &BmcLookup) -> Result<Option<ExploredReport>> {
        find_by_bmc(
            &self.pool,
            "report_get",
            bmc,
            concat!("SELECT ", report_columns!(), " FROM explored_reports WHERE bmc_address = $1"),
            concat!(
                "SELECT ",
                report_columns!(),
                " FROM explored_reports WHERE substr(bmc_address, 1, length($1)) = $1 ORDER BY bmc_address LIMIT 2"
            ),
            report_from_row,
        )
        .await
    }

    /// The most recently explored report linked to `machine_id`.
    pub async fn report_for_machine(&self, machine_id: &str) -> Result<Option<ExploredReport>> {
        sqlx::query(concat!(
            "SELECT ",
            report_columns!(),
            " FROM explored_reports WHERE machine_id = $1 ORDER BY explored_at_ms DESC, bmc_address LIMIT 1"
        ))
        .bind(machine_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::db("report_for_machine", machine_id))?
        .as_ref()
        .map(report_from_row)
        .transpose()
    }

    /// Every stored report, ordered by BMC address.
    pub async fn report_list(&self) -> Result<Vec<ExploredReport>> {
        sqlx::query(concat!("SELECT ", report_columns!(), " FROM explored_reports ORDER BY bmc_address"))
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("report_list", ""))?
            .iter()
            .map(report_from_row)
            .collect()
    }
}
