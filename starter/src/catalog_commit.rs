//! Storing a previewed change of the runtime catalog layer: the downgrade rule (a change that
//! moves any default to an older version needs `--allow-downgrade`), a check that the layer did
//! not change since the preview, then the new version and its audit entry in one transaction,
//! by the actor the caller names; or, under the two-person rule, the change as a pending one
//! (`catalog_approval` decides it).
//!
//! Owns that rule and the audit entry's wording. It must not compute the preview
//! (`catalog_preview`), ask for confirmation, print, or wake the scheduler (the caller does).

use hostfw_store::{
    FirmwareConfigAudit, FirmwareConfigVersion, NewFirmwareConfig, NewPendingFirmwareConfig, PendingFirmwareConfig,
    Store,
};

use crate::catalog_preview::{CatalogChangeError, CatalogChangePreview, CatalogChangeRequest};
use crate::firmware_config::AUDIT_TARGET;

/// Refuses a preview whose change downgrades a default without `--allow-downgrade`, naming
/// the downgraded rows.
pub fn check_downgrades(preview: &CatalogChangePreview) -> Result<(), CatalogChangeError> {
    if preview.downgrade_refused() {
        return Err(CatalogChangeError::DowngradeRefused { rows: preview.downgrades.clone() });
    }
    Ok(())
}

/// Stores `request`'s change as previewed in `preview` (which must be `changed`), audited as
/// `actor`. Refuses, storing nothing, a downgrade without `--allow-downgrade` and a preview
/// computed against an older version than the one now in effect.
pub async fn commit(
    store: &Store,
    request: &CatalogChangeRequest,
    preview: &CatalogChangePreview,
    actor: &str,
) -> Result<FirmwareConfigVersion, CatalogChangeError> {
    check_downgrades(preview)?;
    let now = store.firmware_config_latest().await?.map_or(0, |v| v.version);
    if now != preview.based_on {
        return Err(CatalogChangeError::Stale { previewed: preview.based_on, now });
    }
    let detail = |v: &FirmwareConfigVersion| audit_detail(v, request, preview);
    let audit = FirmwareConfigAudit { action: request.kind.action(), target: AUDIT_TARGET, detail: &detail };
    Ok(store.firmware_config_append(actor, &new_version(request, preview), &audit).await?)
}

fn new_version<'a>(request: &'a CatalogChangeRequest, preview: &'a CatalogChangePreview) -> NewFirmwareConfig<'a> {
    NewFirmwareConfig {
        document: request.document.as_deref().unwrap_or(""),
        sha256: &preview.sha256,
        message: request.message.as_deref(),
        removes_layer: request.document.is_none(),
    }
}

/// Stores `request`'s change as previewed as a pending change (the two-person rule), audited
/// as `actor`'s proposal, under the same downgrade rule as [`commit`].
pub async fn propose(
    store: &Store,
    request: &CatalogChangeRequest,
    preview: &CatalogChangePreview,
    actor: &str,
) -> Result<PendingFirmwareConfig, CatalogChangeError> {
    check_downgrades(preview)?;
    let new = NewPendingFirmwareConfig {
        action: request.kind.action(),
        source: &request.source,
        config: new_version(request, preview),
        allow_downgrade: request.allow_downgrade,
        based_on: preview.based_on,
    };
    let detail = |p: &PendingFirmwareConfig| {
        format!(
            "pending change {} ({}) {} on top of version {} ({} default(s) changed){}",
            p.id,
            p.action,
            p.source,
            p.based_on,
            preview.defaults_changed.len(),
            p.message.as_deref().map(|m| format!("; message: {m}")).unwrap_or_default()
        )
    };
    Ok(store.firmware_config_propose(actor, &new, &detail).await?)
}

/// `version 4 from new.toml (2 host model tables, sha256 …; 3 default(s) changed: 1 DOWNGRADE,
/// 2 UPGRADE; downgrade allowed); message: CHG-1234`.
pub(crate) fn audit_detail(
    v: &FirmwareConfigVersion,
    request: &CatalogChangeRequest,
    preview: &CatalogChangePreview,
) -> String {
    let layer = if v.removes_layer {
        "removes the runtime layer".to_string()
    } else {
        format!("{} host model tables", preview.host_models)
    };
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for row in &preview.defaults_changed {
        match kinds.iter_mut().find(|(k, _)| *k == row.kind.as_str()) {
            Some((_, n)) => *n += 1,
            None => kinds.push((row.kind.as_str().to_string(), 1)),
        }
    }
    let kinds = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    let mut detail = format!(
        "version {} {} ({layer}, sha256 {}; {} default(s) changed{}{}{})",
        v.version,
        request.source,
        v.sha256,
        preview.defaults_changed.len(),
        if kinds.is_empty() { "" } else { ": " },
        kinds,
        if preview.downgrades.is_empty() { "" } else { "; downgrade allowed" },
    );
    if let Some(message) = &v.message {
        detail.push_str("; message: ");
        detail.push_str(message);
    }
    detail
}
