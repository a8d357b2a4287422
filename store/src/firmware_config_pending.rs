//! The `firmware_config_pending` table: catalog changes waiting for a second admin (the
//! two-person rule, `[firmware_global] require_second_admin`), numbered from 1 apart from the
//! versions. A pending change is decided once: approved by an actor other than its proposer (then
//! stored as the next `firmware_config_versions` row, with its audit entry, in the same
//! transaction as the decision, and only while the version in effect is still the one it was
//! proposed against) or rejected.
//!
//! Owns proposing, deciding and reading pending changes. It must not parse or validate the
//! document nor decide the downgrade rule (the caller previews the change first), and it never
//! deletes a row: decided changes stay as the record of who proposed and who decided.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::audit::audit_append_in;
use crate::error::{is_unique_violation, Result, StoreError};
use crate::firmware_config::{insert_version_in, FirmwareConfigAudit, FirmwareConfigVersion, NewFirmwareConfig};
use crate::tuning::SEQ_INSERT_ATTEMPTS;
use crate::{now_ms, Store};

/// A catalog change proposed under the two-person rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PendingFirmwareConfig {
    /// Pending change number, from 1 (not a version number).
    pub id: i64,
    /// When it was proposed, unix ms.
    pub at_ms: i64,
    /// Who proposed it.
    pub actor: String,
    /// The audit action it was proposed as (`firmware-config set`, `unset`, `rollback`).
    pub action: String,
    /// The audit detail's description of its source (`from new.toml`, `restoring version 3`).
    pub source: String,
    pub document: String,
    pub sha256: String,
    pub message: Option<String>,
    pub removes_layer: bool,
    /// The proposer gave `--allow-downgrade`.
    pub allow_downgrade: bool,
    /// The version in effect when it was proposed (0: none): it applies only on top of it.
    pub based_on: i64,
    /// `None` while pending; `approved` or `rejected`.
    pub decision: Option<String>,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<i64>,
    /// The version it was stored as, once approved.
    pub version: Option<i64>,
}

/// A change to propose.
#[derive(Debug, Clone, Copy)]
pub struct NewPendingFirmwareConfig<'a> {
    pub action: &'a str,
    pub source: &'a str,
    pub config: NewFirmwareConfig<'a>,
    pub allow_downgrade: bool,
    pub based_on: i64,
}

/// Why a pending change was not decided (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingRefused {
    /// No pending change has that number.
    Unknown,
    /// It was decided already.
    Decided { decision: String, by: String },
    /// The approver proposed it: a second admin must approve.
    SameActor,
    /// The version in effect is no longer the one it was proposed against.
    Stale { based_on: i64, now: i64 },
}

macro_rules! pending_columns {
    () => {
        "id, at_ms, actor, action, source, document, sha256, message, removes_layer, allow_downgrade, based_on, \
         decision, decided_by, decided_at_ms, version"
    };
}

fn pending_from_row(row: &AnyRow) -> std::result::Result<PendingFirmwareConfig, sqlx::Error> {
    Ok(PendingFirmwareConfig {
        id: row.try_get("id")?,
        at_ms: row.try_get("at_ms")?,
        actor: row.try_get("actor")?,
        action: row.try_get("action")?,
        source: row.try_get("source")?,
        document: row.try_get("document")?,
        sha256: row.try_get("sha256")?,
        message: row.try_get("message")?,
        removes_layer: row.try_get::<i64, _>("removes_layer")? != 0,
        allow_downgrade: row.try_get::<i64, _>("allow_downgrade")? != 0,
        based_on: row.try_get("based_on")?,
        decision: row.try_get("decision")?,
        decided_by: row.try_get("decided_by")?,
        decided_at_ms: row.try_get("decided_at_ms")?,
        version: row.try_get("version")?,
    })
}

impl Store {
    /// Stores a proposed change and its audit entry (by `actor`) in one transaction.
    pub async fn firmware_config_propose(
        &self,
        actor: &str,
        new: &NewPendingFirmwareConfig<'_>,
        audit: &(dyn Fn(&PendingFirmwareConfig) -> String + Sync),
    ) -> Result<PendingFirmwareConfig> {
        const OP: &str = "firmware_config_propose";
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = self.begin_write().await.map_err(StoreError::db(OP, actor))?;
            let at_ms = now_ms();
            let inserted = sqlx::query(concat!(
                "INSERT INTO firmware_config_pending (id, at_ms, actor, action, source, document, sha256, message, \
                 removes_layer, allow_downgrade, based_on) \
                 SELECT COALESCE(MAX(id), 0) + 1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM firmware_config_pending \
                 RETURNING ",
                pending_columns!()
            ))
            .bind(at_ms)
            .bind(actor)
            .bind(new.action)
            .bind(new.source)
            .bind(new.config.document)
            .bind(new.config.sha256)
            .bind(new.config.message)
            .bind(i64::from(new.config.removes_layer))
            .bind(i64::from(new.allow_downgrade))
            .bind(new.based_on)
            .fetch_one(&mut *tx)
            .await
            .and_then(|row| pending_from_row(&row));
            let written = match inserted {
                Ok(p) => {
                    audit_append_in(&mut tx, actor, "firmware-config propose", "firmware-config", &audit(&p), at_ms)
                        .await
                        .map(|()| p)
                }
                Err(e) => Err(e),
            };
            match written {
                Ok(p) => {
                    tx.commit().await.map_err(StoreError::db(OP, actor))?;
                    return Ok(p);
                }
                Err(e) => {
                    let _ = tx.rollback().await;
                    if is_unique_violation(&e) && attempt < SEQ_INSERT_ATTEMPTS {
                        continue;
                    }
                    return Err(StoreError::db(OP, actor)(e));
                }
            }
        }
    }

    /// Pending change `id`, decided or not.
    pub async fn firmware_config_pending_get(&self, id: i64) -> Result<Option<PendingFirmwareConfig>> {
        sqlx::query(concat!("SELECT ", pending_columns!(), " FROM firmware_config_pending WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .and_then(|row| row.as_ref().map(pending_from_row).transpose())
            .map_err(StoreError::db("firmware_config_pending_get", ""))
    }

    /// The changes still waiting for a decision, oldest first.
    pub async fn firmware_config_pending_list(&self) -> Result<Vec<PendingFirmwareConfig>> {
        sqlx::query(concat!(
            "SELECT ",
            pending_columns!(),
            " FROM firmware_config_pending WHERE decision IS NULL ORDER BY id"
        ))
        .fetch_all(&self.pool)
        .await
        .and_then(|rows| rows.iter().map(pending_from_row).collect())
        .map_err(StoreError::db("firmware_config_pending_list", ""))
    }

    /// Approves pending change `id` as `approver`: marks it approved, stores it as the next
    /// version (proposer's message and layer removal) and writes `audit`'s entry by `approver`,
    /// all in one transaction; refused (nothing written) when it is unknown, decided, proposed by
    /// `approver`, or the version in effect is no longer its `based_on`.
    pub async fn firmware_config_approve(
        &self,
        id: i64,
        approver: &str,
        audit: &FirmwareConfigAudit<'_>,
    ) -> Result<std::result::Result<FirmwareConfigVersion, PendingRefused>> {
        const OP: &str = "firmware_config_approve";
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = self.begin_write().await.map_err(StoreError::db(OP, approver))?;
            let at_ms = now_ms();
            let res: std::result::Result<std::result::Result<FirmwareConfigVersion, PendingRefused>, sqlx::Error> =
                async {
                    let decided = sqlx::query(concat!(
                        "UPDATE firmware_config_pending SET decision = 'approved', decided_by = $1, decided_at_ms = $2 \
                         WHERE id = $3 AND decision IS NULL AND actor <> $1 RETURNING ",
                        pending_columns!()
                    ))
                    .bind(approver)
                    .bind(at_ms)
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    let Some(row) = decided else { return Ok(Err(PendingRefused::Unknown)) };
                    let pending = pending_from_row(&row)?;
                    let new = NewFirmwareConfig {
                        document: &pending.document,
                        sha256: &pending.sha256,
                        message: pending.message.as_deref(),
                        removes_layer: pending.removes_layer,
                    };
                    let Some(v) =
                        insert_version_in(&mut tx, &pending.actor, &new, at_ms, Some(pending.based_on)).await?
                    else {
                        let now: i64 =
                            sqlx::query_scalar("SELECT COALESCE(MAX(version), 0) FROM firmware_config_versions")
                                .fetch_one(&mut *tx)
                                .await?;
                        return Ok(Err(PendingRefused::Stale { based_on: pending.based_on, now }));
                    };
                    sqlx::query("UPDATE firmware_config_pending SET version = $1 WHERE id = $2")
                        .bind(v.version)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                    audit_append_in(&mut tx, approver, audit.action, audit.target, &(audit.detail)(&v), at_ms).await?;
                    // A new catalog moves hosts' targets: decisions read before it are stale.
                    crate::gate_fence::bump_in(&mut tx).await?;
                    Ok(Ok(v))
                }
                .await;
            match res {
                Ok(Ok(v)) => {
                    tx.commit().await.map_err(StoreError::db(OP, approver))?;
                    return Ok(Ok(v));
                }
                Ok(Err(refused)) => {
                    let _ = tx.rollback().await;
                    return Ok(Err(match refused {
                        PendingRefused::Unknown => self.why_not_decided(id, approver).await?,
                        other => other,
                    }));
                }
                Err(e) => {
                    let _ = tx.rollback().await;
                    if is_unique_violation(&e) && attempt < SEQ_INSERT_ATTEMPTS {
                        continue;
                    }
                    return Err(StoreError::db(OP, approver)(e));
                }
            }
        }
    }

    /// Rejects pending change `id` as `actor` (its proposer may withdraw it), audited in the same
    /// transaction; refused when it is unknown or decided.
    pub async fn firmware_config_reject(
        &self,
        id: i64,
        actor: &str,
        detail: &str,
    ) -> Result<std::result::Result<PendingFirmwareConfig, PendingRefused>> {
        const OP: &str = "firmware_config_reject";
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, actor))?;
        let at_ms = now_ms();
        let res: std::result::Result<Option<PendingFirmwareConfig>, sqlx::Error> = async {
            let row = sqlx::query(concat!(
                "UPDATE firmware_config_pending SET decision = 'rejected', decided_by = $1, decided_at_ms = $2 \
                 WHERE id = $3 AND decision IS NULL RETURNING ",
                pending_columns!()
            ))
            .bind(actor)
            .bind(at_ms)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(row) = row else { return Ok(None) };
            let pending = pending_from_row(&row)?;
            audit_append_in(&mut tx, actor, "firmware-config reject", "firmware-config", detail, at_ms).await?;
            Ok(Some(pending))
        }
        .await;
        match res {
            Ok(Some(p)) => {
                tx.commit().await.map_err(StoreError::db(OP, actor))?;
                Ok(Ok(p))
            }
            Ok(None) => {
                let _ = tx.rollback().await;
                Ok(Err(self.why_not_decided(id, "").await?))
            }
            Err(e) => {
                let _ = tx.rollback().await;
                Err(StoreError::db(OP, actor)(e))
            }
        }
    }

    /// Why a decision on `id` by `actor` changed no row.
    async fn why_not_decided(&self, id: i64, actor: &str) -> Result<PendingRefused> {
        Ok(match self.firmware_config_pending_get(id).await? {
            None => PendingRefused::Unknown,
            Some(p) => match (p.decision, p.decided_by) {
                (Some(decision), by) => PendingRefused::Decided { decision, by: by.unwrap_or_default() },
                (None, _) if p.actor == actor => PendingRefused::SameActor,
                (None, _) => PendingRefused::Unknown,
            },
        })
    }
}
