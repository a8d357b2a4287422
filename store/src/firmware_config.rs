//! The `firmware_config_versions` table: the runtime catalog document (Host Firmware Config API),
//! one row per stored version, numbered from 1; the highest version is the one in effect.
//!
//! Owns appending and reading versions. It must not parse or validate the document (the caller
//! builds the effective catalog first and stores only a valid one) and never updates or deletes a
//! version. Numbers are `MAX(version) + 1` inside the insert's transaction; a concurrent writer
//! that took the same number makes the insert fail with a unique violation, and it is retried.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{is_unique_violation, Result, StoreError};
use crate::tuning::SEQ_INSERT_ATTEMPTS;
use crate::{now_ms, Store};

/// One stored version of the runtime catalog document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareConfigVersion {
    /// Version number, starting at 1.
    pub version: i64,
    /// When it was stored, unix ms.
    pub at_ms: i64,
    /// Who stored it.
    pub actor: String,
    /// The TOML document as submitted.
    pub document: String,
    /// Lowercase hex SHA-256 of `document` (computed by the caller).
    pub sha256: String,
}

macro_rules! columns {
    () => {
        "version, at_ms, actor, document, sha256"
    };
}

fn version_from_row(row: &AnyRow) -> std::result::Result<FirmwareConfigVersion, sqlx::Error> {
    Ok(FirmwareConfigVersion {
        version: row.try_get("version")?,
        at_ms: row.try_get("at_ms")?,
        actor: row.try_get("actor")?,
        document: row.try_get("document")?,
        sha256: row.try_get("sha256")?,
    })
}

impl Store {
    /// Stores `document` as the next version (always a new row, even if identical to the latest:
    /// callers that want "unchanged" compare with `firmware_config_latest` first).
    pub async fn firmware_config_put(
        &self,
        actor: &str,
        document: &str,
        sha256: &str,
    ) -> Result<FirmwareConfigVersion> {
        const OP: &str = "firmware_config_put";
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = self.writer.begin().await.map_err(StoreError::db(OP, actor))?;
            let inserted = sqlx::query(concat!(
                "INSERT INTO firmware_config_versions (",
                columns!(),
                ") SELECT COALESCE(MAX(version), 0) + 1, $1, $2, $3, $4 FROM firmware_config_versions \
                 RETURNING ",
                columns!()
            ))
            .bind(now_ms())
            .bind(actor)
            .bind(document)
            .bind(sha256)
            .fetch_one(&mut *tx)
            .await
            .and_then(|row| version_from_row(&row));
            match inserted {
                Ok(v) => {
                    tx.commit().await.map_err(StoreError::db(OP, actor))?;
                    return Ok(v);
                }
                Err(e) => {
                    // A failed statement aborts the transaction (PostgreSQL); end it before retrying.
                    let _ = tx.rollback().await;
                    if is_unique_violation(&e) && attempt < SEQ_INSERT_ATTEMPTS {
                        continue;
                    }
                    return Err(StoreError::db(OP, actor)(e));
                }
            }
        }
    }

    /// The version in effect (the highest), if any was ever stored.
    pub async fn firmware_config_latest(&self) -> Result<Option<FirmwareConfigVersion>> {
        sqlx::query(concat!("SELECT ", columns!(), " FROM firmware_config_versions ORDER BY version DESC LIMIT 1"))
            .fetch_optional(&self.pool)
            .await
            .and_then(|row| row.as_ref().map(version_from_row).transpose())
            .map_err(StoreError::db("firmware_config_latest", ""))
    }

    /// Version `version`, if it was stored.
    pub async fn firmware_config_get(&self, version: i64) -> Result<Option<FirmwareConfigVersion>> {
        sqlx::query(concat!("SELECT ", columns!(), " FROM firmware_config_versions WHERE version = $1"))
            .bind(version)
            .fetch_optional(&self.pool)
            .await
            .and_then(|row| row.as_ref().map(version_from_row).transpose())
            .map_err(StoreError::db("firmware_config_get", ""))
    }

    /// The latest `limit` versions, newest first.
    pub async fn firmware_config_history(&self, limit: u32) -> Result<Vec<FirmwareConfigVersion>> {
        sqlx::query(concat!("SELECT ", columns!(), " FROM firmware_config_versions ORDER BY version DESC LIMIT $1"))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await
            .and_then(|rows| rows.iter().map(version_from_row).collect())
            .map_err(StoreError::db("firmware_config_history", ""))
    }
}
