//! The site database's clock: "now" in unix milliseconds as the database sees it, for times that
//! workers compare with each other's (the error budget's attempt times and the canary soak).
//! Workers' clocks skew; the database is one clock for the whole site.
//!
//! Owns that one reading. On PostgreSQL it is the server's `clock_timestamp()`; on SQLite (an
//! embedded file on one machine, every process of the site on that machine) the local clock is
//! the database's clock. It must not be used for what is only this process's business (timeouts,
//! backoffs).

use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::{now_ms, Backend, Store};

impl Store {
    /// Now, in unix milliseconds, by the site database's clock.
    pub async fn db_now_ms(&self) -> Result<i64> {
        match self.backend {
            Backend::Sqlite => Ok(now_ms()),
            Backend::Postgres => {
                let row =
                    sqlx::query("SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT) AS now_ms")
                        .fetch_one(&self.pool)
                        .await
                        .map_err(StoreError::db("db_now_ms", ""))?;
                row.try_get("now_ms").map_err(StoreError::db("db_now_ms", ""))
            }
        }
    }
}
