//! View revisions: the `rev` change marker of `machines` and `explored_reports` rows and the
//! `view_revision` counter it comes from, for a reader that holds those rows in memory and
//! re-reads only the rows written since its last read (the scheduler's `SiteViewCache` in
//! `hostfw-activities`).
//!
//! Owns the rule every writer of those two tables follows — [`next_rev`] as the first statement
//! of its transaction, and that value as the `rev` of each row it changes (`machines`,
//! `registration`, `maintenance`, `windows`, `reports` and `legacy_addresses` do so in their own
//! statements) — and the reads a cache needs: the counter, the rows stamped after a revision
//! (through the `rev` index), all rows, and every key (to find deleted rows). Holding the counter
//! from the first statement to commit makes transactions commit in `rev` order (migration 0010),
//! so [`Store::view_revision`] read before [`Store::machines_since`] never misses a row. Writers
//! of those tables are serialised by it (as SQLite serialises every writer anyway); a
//! transaction that takes a machine's row lock before the counter could deadlock one that takes
//! them the other way, hence "first statement".
//!
//! It must not decide what a reader re-reads, and it must not write rows other than the counter.
//! Writes that bypass the store (hand-written SQL) do not stamp `rev`: deleted rows are still
//! found (a reader compares counts and lists keys), changed or inserted ones are not.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::error::{Result, StoreError};
use crate::machines::{machine_from_row, Machine, MACHINE_COLUMNS};
use crate::reports::{report_from_row, ExploredReport, REPORT_COLUMNS};
use crate::Store;

/// A row as stored, with the `rev` it was stamped with and its key as stored (a machine's id, a
/// report's BMC address text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revised<T> {
    pub key: String,
    pub rev: i64,
    pub row: T,
}

/// Adds 1 to the view revision and returns it: the `rev` of every row this transaction changes.
/// Must be the transaction's first statement (see the module doc).
pub(crate) async fn next_rev(conn: &mut AnyConnection) -> std::result::Result<i64, sqlx::Error> {
    sqlx::query_scalar("UPDATE view_revision SET value = value + 1 WHERE id = 1 RETURNING value").fetch_one(conn).await
}

fn machine_revised(row: &AnyRow) -> Result<Revised<Machine>> {
    let machine = machine_from_row(row)?;
    let rev = row.try_get("rev").map_err(StoreError::db("machine_decode", machine.id.as_str()))?;
    Ok(Revised { key: machine.id.clone(), rev, row: machine })
}

fn report_revised(row: &AnyRow) -> Result<Revised<ExploredReport>> {
    let key: String = row.try_get("bmc_address").map_err(StoreError::db("report_decode", ""))?;
    let rev = row.try_get("rev").map_err(StoreError::db("report_decode", key.as_str()))?;
    Ok(Revised { row: report_from_row(row)?, key, rev })
}

impl Store {
    /// The view revision: every machine and report row stamped up to it is committed and visible.
    pub async fn view_revision(&self) -> Result<i64> {
        sqlx::query_scalar("SELECT value FROM view_revision WHERE id = 1")
            .fetch_one(&self.pool)
            .await
            .map_err(StoreError::db("view_revision", ""))
    }

    /// The machines stamped after revision `after` (all of them with `None`), unordered.
    pub async fn machines_since(&self, after: Option<i64>) -> Result<Vec<Revised<Machine>>> {
        self.since("machines_since", &format!("{MACHINE_COLUMNS}, rev"), "machines", after, machine_revised).await
    }

    /// The explored reports stamped after revision `after` (all of them with `None`), unordered.
    pub async fn reports_since(&self, after: Option<i64>) -> Result<Vec<Revised<ExploredReport>>> {
        self.since("reports_since", &format!("{REPORT_COLUMNS}, rev"), "explored_reports", after, report_revised).await
    }

    /// How many machines and how many explored reports are stored.
    pub async fn view_row_counts(&self) -> Result<(u64, u64)> {
        let row = sqlx::query(
            "SELECT (SELECT COUNT(*) FROM machines) AS machines, (SELECT COUNT(*) FROM explored_reports) AS reports",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("view_row_counts", ""))?;
        let count = |column: &str| -> Result<u64> {
            let n: i64 = row.try_get(column).map_err(StoreError::db("view_row_counts", column))?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        Ok((count("machines")?, count("reports")?))
    }

    /// Every machine id, unordered.
    pub async fn machine_ids(&self) -> Result<Vec<String>> {
        sqlx::query_scalar("SELECT id FROM machines")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("machine_ids", ""))
    }

    /// Every explored report's BMC address as stored, unordered.
    pub async fn report_addresses(&self) -> Result<Vec<String>> {
        sqlx::query_scalar("SELECT bmc_address FROM explored_reports")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("report_addresses", ""))
    }

    async fn since<T>(
        &self,
        op: &'static str,
        columns: &str,
        table: &str,
        after: Option<i64>,
        decode: impl Fn(&AnyRow) -> Result<T>,
    ) -> Result<Vec<T>> {
        let rows = match after {
            None => sqlx::query(&format!("SELECT {columns} FROM {table}")).fetch_all(&self.pool).await,
            Some(rev) => {
                sqlx::query(&format!("SELECT {columns} FROM {table} WHERE rev > $1"))
                    .bind(rev)
                    .fetch_all(&self.pool)
                    .await
            }
        }
        .map_err(StoreError::db(op, ""))?;
        rows.iter().map(decode).collect()
    }
}
