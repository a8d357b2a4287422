//! The site database's own clock: "now" as the database server sees it, in unix milliseconds.
//!
//! Owns reading that clock. Times that several workers compare with each other (upload-slot
//! leases) are decided with it, so two workers whose clocks disagree never both see a lease as
//! theirs: only the database's clock counts. On SQLite the database runs in the worker's process,
//! so its clock is the local one (read through SQLite all the same). It must not be used for
//! times that only one process reads back (those may use `now_ms`), and it holds no table SQL.

use crate::error::{Result, StoreError};
use crate::{Backend, Store};

/// The SQL expression for the database's current time in unix ms (BIGINT) on `backend`.
/// PostgreSQL: `clock_timestamp()` (the real time, not the start of the transaction); SQLite:
/// `julianday('now')`, available on every SQLite version.
pub(crate) fn now_ms_sql(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => "CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)",
        Backend::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS BIGINT)",
    }
}

impl Store {
    /// Now, as the site database's server sees it (unix ms): one query.
    pub async fn db_now_ms(&self) -> Result<i64> {
        let sql = format!("SELECT {} AS now_ms", now_ms_sql(self.backend));
        sqlx::query_scalar::<_, i64>(&sql).fetch_one(&self.pool).await.map_err(StoreError::db("db_now_ms", ""))
    }

    /// This process's clock as this handle sees it: `now_ms` plus the skew set with
    /// [`Store::with_clock_skew`] (none outside tests).
    pub fn local_now_ms(&self) -> i64 {
        crate::now_ms().saturating_add(self.clock_skew_ms)
    }

    /// This store as a worker whose clock is `skew_ms` ahead (negative: behind) of the database's
    /// would use it: for tests that what two workers decide together never depends on their
    /// clocks (`local_now_ms` is skewed, `db_now_ms` is not).
    #[doc(hidden)]
    pub fn with_clock_skew(mut self, skew_ms: i64) -> Store {
        self.clock_skew_ms = skew_ms;
        self
    }
}
