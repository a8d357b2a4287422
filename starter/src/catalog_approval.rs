//! The two-person rule for the runtime catalog layer (`[firmware_global] require_second_admin`):
//! deciding a pending change. Approving previews it again against the catalog in effect (the same
//! rows, artifact checks and downgrade rule as when it was proposed, with the proposer's
//! `--allow-downgrade`), refuses the proposer and a change whose base version is no longer in
//! effect, then stores it as the next version in the decision's transaction; rejecting drops it.
//! Each function takes the store, the site config, the pending change's number and the actor,
//! and returns a typed document or error (no printing), so an HTTP API can host it later.
//!
//! Owns those decisions. It must not compute the preview (`catalog_preview`) nor write the
//! version except through the store's decision.

use std::path::PathBuf;

use hostfw_model::SiteConfig;
use hostfw_store::{FirmwareConfigAudit, FirmwareConfigVersion, PendingFirmwareConfig, PendingRefused, Store};

use crate::catalog_commit::{audit_detail, check_downgrades};
use crate::catalog_preview::{self, CatalogChangeError, CatalogChangePreview, CatalogChangeRequest, ChangeKind};
use crate::firmware_config::AUDIT_TARGET;

/// The audit action of an approval (the version it stores is recorded by the approver).
pub const AUDIT_APPROVE: &str = "firmware-config approve";

fn refused(id: i64, refused: PendingRefused) -> CatalogChangeError {
    match refused {
        PendingRefused::Unknown => CatalogChangeError::UnknownPending { id },
        PendingRefused::Decided { decision, by } => CatalogChangeError::Decided { id, decision, by },
        PendingRefused::SameActor => CatalogChangeError::SameActor { id, actor: String::new() },
        PendingRefused::Stale { based_on, now } => CatalogChangeError::Stale { previewed: based_on, now },
    }
}

/// The request a pending change stands for.
fn request_of(p: &PendingFirmwareConfig) -> CatalogChangeRequest {
    let kind = match p.action.as_str() {
        "firmware-config unset" => ChangeKind::Unset,
        "firmware-config rollback" => ChangeKind::Rollback,
        _ => ChangeKind::Set,
    };
    CatalogChangeRequest {
        kind,
        document: (!p.removes_layer).then(|| p.document.clone()),
        origin: PathBuf::from(format!("pending firmware-config change {}", p.id)),
        source: format!("{} (pending change {} proposed by {})", p.source, p.id, p.actor),
        message: p.message.clone(),
        allow_downgrade: p.allow_downgrade,
        dry_run: false,
    }
}

/// A pending change as `actor` would approve it: the change, and its preview against the catalog
/// in effect now. Refused when it is unknown, decided, proposed by `actor`, no longer on top of
/// the version in effect, or a downgrade the proposer did not allow.
pub async fn approval_preview(
    store: &Store,
    site: &SiteConfig,
    id: i64,
    actor: &str,
) -> Result<(PendingFirmwareConfig, CatalogChangeRequest, CatalogChangePreview), CatalogChangeError> {
    let Some(pending) = store.firmware_config_pending_get(id).await? else {
        return Err(CatalogChangeError::UnknownPending { id });
    };
    if let Some(decision) = &pending.decision {
        let by = pending.decided_by.clone().unwrap_or_default();
        return Err(CatalogChangeError::Decided { id, decision: decision.clone(), by });
    }
    if pending.actor == actor {
        return Err(CatalogChangeError::SameActor { id, actor: pending.actor });
    }
    let request = request_of(&pending);
    let mut preview = catalog_preview::preview(store, site, &request, actor).await?;
    if preview.based_on != pending.based_on {
        return Err(CatalogChangeError::Stale { previewed: pending.based_on, now: preview.based_on });
    }
    check_downgrades(&preview)?;
    preview.pending_change = Some(id);
    Ok((pending, request, preview))
}

/// Approves pending change `id` as `actor` after [`approval_preview`]: stores it as the next
/// version (the proposer's, with its message), audited as `actor`'s approval, in one transaction.
pub async fn approve(
    store: &Store,
    pending: &PendingFirmwareConfig,
    request: &CatalogChangeRequest,
    preview: &CatalogChangePreview,
    actor: &str,
) -> Result<FirmwareConfigVersion, CatalogChangeError> {
    let detail = |v: &FirmwareConfigVersion| audit_detail(v, request, preview);
    let audit = FirmwareConfigAudit { action: AUDIT_APPROVE, target: AUDIT_TARGET, detail: &detail };
    match store.firmware_config_approve(pending.id, actor, &audit).await? {
        Ok(v) => Ok(v),
        Err(PendingRefused::SameActor) => {
            Err(CatalogChangeError::SameActor { id: pending.id, actor: pending.actor.clone() })
        }
        Err(other) => Err(refused(pending.id, other)),
    }
}

/// Rejects pending change `id` as `actor` (its proposer may withdraw it), audited with `message`.
pub async fn reject(
    store: &Store,
    id: i64,
    actor: &str,
    message: Option<&str>,
) -> Result<PendingFirmwareConfig, CatalogChangeError> {
    let detail =
        format!("pending change {id} rejected{}", message.map(|m| format!("; message: {m}")).unwrap_or_default());
    store.firmware_config_reject(id, actor, &detail).await?.map_err(|r| refused(id, r))
}
