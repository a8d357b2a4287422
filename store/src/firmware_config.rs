//! The `firmware_config_versions` table: the runtime catalog document (Host Firmware Config API),
//! one row per stored version, numbered from 1; the highest version is the one in effect. A
//! version carries the change ticket it was stored with (`--message`) and may remove the runtime
//! layer (`firmware-config unset`: an empty document, marked `removes_layer`).
//!
//! Owns appending and reading versions, and writing a version together with the audit entry that
//! records it and its `catalog_changed` webhook event (one transaction: all or nothing). It must not parse or validate the document (the caller
//! builds the effective catalog first and stores only a valid one) and never updates or deletes a
//! version. Numbers are `MAX(version) + 1` inside the insert's transaction; a concurrent writer
//! that took the same number makes the insert fail with a unique violation, and it is retried.

use hostfw_model::NotificationKind;
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::audit::audit_append_in;
use crate::error::{is_unique_violation, Result, StoreError};
use crate::tuning::SEQ_INSERT_ATTEMPTS;
use crate::{now_ms, Store};

/// One stored version of the runtime catalog document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    /// The change ticket given with it (`--message`), if any.
    #[serde(default)]
    pub message: Option<String>,
    /// It removes the runtime layer (`firmware-config unset`): `document` is empty and the
    /// effective catalog is the static config and the firmware directory alone.
    #[serde(default)]
    pub removes_layer: bool,
}

/// A version to store.
#[derive(Debug, Clone, Copy)]
pub struct NewFirmwareConfig<'a> {
    pub document: &'a str,
    /// Lowercase hex SHA-256 of `document` (computed by the caller).
    pub sha256: &'a str,
    pub message: Option<&'a str>,
    pub removes_layer: bool,
}

/// The audit entry that records a new version, written in the version's transaction. `detail`
/// is given the version as stored (its number is known only then).
pub struct FirmwareConfigAudit<'a> {
    pub action: &'a str,
    pub target: &'a str,
    pub detail: &'a (dyn Fn(&FirmwareConfigVersion) -> String + Sync),
}

macro_rules! columns {
    () => {
        "version, at_ms, actor, document, sha256, message, removes_layer"
    };
}

fn version_from_row(row: &AnyRow) -> std::result::Result<FirmwareConfigVersion, sqlx::Error> {
    Ok(FirmwareConfigVersion {
        version: row.try_get("version")?,
        at_ms: row.try_get("at_ms")?,
        actor: row.try_get("actor")?,
        document: row.try_get("document")?,
        sha256: row.try_get("sha256")?,
        message: row.try_get("message")?,
        removes_layer: row.try_get::<i64, _>("removes_layer")? != 0,
    })
}

impl Store {
    /// Stores `document` as the next version, with no message and no audit entry (always a new
    /// row, even if identical to the latest: callers that want "unchanged" compare with
    /// `firmware_config_latest` first).
    pub async fn firmware_config_put(
        &self,
        actor: &str,
        document: &str,
        sha256: &str,
    ) -> Result<FirmwareConfigVersion> {
        let new = NewFirmwareConfig { document, sha256, message: None, removes_layer: false };
        self.firmware_config_insert(actor, &new, None).await
    }

    /// Stores `new` as the next version and `audit`'s entry (by `actor`) in one transaction.
    pub async fn firmware_config_append(
        &self,
        actor: &str,
        new: &NewFirmwareConfig<'_>,
        audit: &FirmwareConfigAudit<'_>,
    ) -> Result<FirmwareConfigVersion> {
        self.firmware_config_insert(actor, new, Some(audit)).await
    }

    async fn firmware_config_insert(
        &self,
        actor: &str,
        new: &NewFirmwareConfig<'_>,
        audit: Option<&FirmwareConfigAudit<'_>>,
    ) -> Result<FirmwareConfigVersion> {
        const OP: &str = "firmware_config_put";
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = self.begin_write().await.map_err(StoreError::db(OP, actor))?;
            let at_ms = now_ms();
            let written = async {
                let v = insert_version_in(&mut tx, actor, new, at_ms, None).await?.ok_or(sqlx::Error::RowNotFound)?;
                if let Some(a) = audit {
                    audit_append_in(&mut tx, actor, a.action, a.target, &(a.detail)(&v), at_ms).await?;
                }
                // A new catalog moves hosts' targets: decisions read before it are stale.
                crate::gate_fence::bump_in(&mut tx).await?;
                Ok::<_, sqlx::Error>(v)
            }
            .await;
            match written {
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

/// Inserts `new` as the next version on `conn` (the caller's transaction). With `on_top_of`, only
/// while the version in effect is that one (0: none): `None` is returned and nothing is written
/// otherwise.
pub(crate) async fn insert_version_in(
    conn: &mut sqlx::AnyConnection,
    actor: &str,
    new: &NewFirmwareConfig<'_>,
    at_ms: i64,
    on_top_of: Option<i64>,
) -> std::result::Result<Option<FirmwareConfigVersion>, sqlx::Error> {
    // The version in effect as one row, kept only when the condition holds.
    let row = sqlx::query(concat!(
        "INSERT INTO firmware_config_versions (",
        columns!(),
        ") SELECT cur.v + 1, $1, $2, $3, $4, $5, $6 \
         FROM (SELECT COALESCE(MAX(version), 0) AS v FROM firmware_config_versions) AS cur \
         WHERE $7 < 0 OR cur.v = $7 RETURNING ",
        columns!()
    ))
    .bind(at_ms)
    .bind(actor)
    .bind(new.document)
    .bind(new.sha256)
    .bind(new.message)
    .bind(i64::from(new.removes_layer))
    .bind(on_top_of.unwrap_or(-1))
    .fetch_optional(&mut *conn)
    .await?;
    let version = row.as_ref().map(version_from_row).transpose()?;
    if let Some(v) = &version {
        // The webhook event, in the revision's transaction (`notifications`).
        let data = serde_json::json!({
            "version": v.version,
            "actor": v.actor,
            "message": v.message,
            "removes_layer": v.removes_layer,
            "sha256": v.sha256,
        });
        let subject = format!("firmware-config version {}", v.version);
        crate::notifications::notify_in(conn, NotificationKind::CatalogChanged, &subject, data, at_ms).await?;
    }
    Ok(version)
}
