//! The preview of a change of the runtime catalog layer (`firmware-config set`, `rollback`,
//! `unset`, `diff`): a typed document that says every default that moves (vendor, model,
//! component, from -> to, UPGRADE, DOWNGRADE, ADDED, REMOVED or CHANGE, and the hosts of that
//! model), which of them are downgrades, the artifacts checked and the hosts the next pass would
//! start under the new catalog. Computed from the store, the site config, the request and the
//! actor alone, so the CLI prints it today and an HTTP API can return it later.
//!
//! Owns the request and preview types, their errors, and computing a preview. It must not print
//! (`catalog_change_table`), ask for confirmation or store anything (`catalog_commit`), parse or
//! merge catalog documents (`hostfw_model::catalog`), order versions (`hostfw_model::version_order`),
//! decide which hosts start (`hostfw_model::gates::plan`) or hash files (`hostfw_activities::artifacts`).

use std::collections::HashSet;
use std::path::PathBuf;

use hostfw_activities::{artifacts, site_view, ActivitySettings};
use hostfw_model::catalog::parse_runtime_document;
use hostfw_model::{gates, same_name, Catalog, CatalogError, DefaultMove, SiteConfig};
use hostfw_store::{FirmwareConfigVersion, Store, StoreError};
use serde::Serialize;

use crate::firmware_config::catalog_with;

/// Which change is asked for: it names the audit action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Set,
    Rollback,
    Unset,
}

impl ChangeKind {
    /// The audit trail's name for it.
    pub fn action(self) -> &'static str {
        match self {
            ChangeKind::Set => "firmware-config set",
            ChangeKind::Rollback => "firmware-config rollback",
            ChangeKind::Unset => "firmware-config unset",
        }
    }
}

/// What the operator asked for.
#[derive(Debug, Clone)]
pub struct CatalogChangeRequest {
    pub kind: ChangeKind,
    /// The new runtime document; `None` removes the runtime layer (back to the static config and
    /// the firmware directory).
    pub document: Option<String>,
    /// Where the document came from, for error messages (a file, or `firmware-config vN`).
    pub origin: PathBuf,
    /// The audit detail's description of the source (`from catalog.toml`, `restoring version 3`).
    pub source: String,
    /// The change ticket, stored with the version and in the audit entry.
    pub message: Option<String>,
    /// The operator accepts that defaults move to older versions.
    pub allow_downgrade: bool,
    /// Preview only: nothing is to be stored.
    pub dry_run: bool,
}

/// One default the change moves.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DefaultChangeRow {
    pub vendor: String,
    pub model: String,
    pub component: String,
    /// `None`: no default before (a new model or component).
    pub from: Option<String>,
    /// `None`: no default after (removed).
    pub to: Option<String>,
    /// UPGRADE, DOWNGRADE, ADDED, REMOVED or CHANGE (versions that cannot be ordered).
    pub kind: DefaultMove,
    /// Managed hosts whose explored report is of this vendor and model.
    pub hosts: usize,
}

/// An artifact of a default the change adds or moves, found and hashed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckedArtifact {
    pub vendor: String,
    pub model: String,
    pub component: String,
    pub version: String,
    pub artifact: String,
    pub sha256: String,
}

/// What a change would do (or did, once `stored`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogChangePreview {
    /// The audit action (`firmware-config set`, `rollback`, `unset`).
    pub action: &'static str,
    pub dry_run: bool,
    /// False when the change leaves the runtime layer as it is (the same document, or `unset`
    /// with no layer stored): nothing to do.
    pub changed: bool,
    /// The change removes the runtime layer.
    pub removes_layer: bool,
    /// The version it would be (or was) stored as; with `changed` false, the version in effect
    /// (0: none stored).
    pub version: i64,
    /// The version in effect when the preview was computed (0: none stored).
    pub based_on: i64,
    pub sha256: String,
    /// `[host_models.*]` tables in the document (0 for `unset`).
    pub host_models: usize,
    pub message: Option<String>,
    /// Every default that moves, in vendor, model, component order.
    pub defaults_changed: Vec<DefaultChangeRow>,
    /// The rows of `defaults_changed` that move to an older version.
    pub downgrades: Vec<DefaultChangeRow>,
    /// The request's `--allow-downgrade`.
    pub allow_downgrade: bool,
    /// Artifacts checked (of every default added or moved), with their SHA-256.
    pub artifacts_checked: Vec<CheckedArtifact>,
    /// Hosts the next pass would start under the new catalog, within the ceiling.
    pub would_start: Vec<String>,
    pub ceiling: u32,
    pub in_flight: u32,
    /// Drifted hosts under the new catalog that the next pass would not start, with the reason.
    pub would_wait: Vec<(String, String)>,
    /// Who asked.
    pub requested_by: String,
    pub stored: bool,
    /// Under the two-person rule: the pending change it was stored as (it is not in effect
    /// until a second admin approves it); for `approve`, the pending change approved.
    pub pending_change: Option<i64>,
}

impl CatalogChangePreview {
    /// The change moves some default to an older version and `--allow-downgrade` was not given:
    /// it will not be stored.
    pub fn downgrade_refused(&self) -> bool {
        !self.downgrades.is_empty() && !self.allow_downgrade
    }
}

/// Why a change cannot be previewed or stored. Every one of them stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum CatalogChangeError {
    #[error("{0}; nothing was stored")]
    Document(CatalogError),
    #[error("the catalog in effect does not load: {0}; nothing was stored")]
    CurrentCatalog(String),
    #[error(
        "{} default(s) name an unusable artifact (firmware directory {}):\n  {}\nnothing was stored",
        problems.len(), root.display(), problems.join("\n  ")
    )]
    Artifacts { root: PathBuf, problems: Vec<String> },
    #[error(
        "this change downgrades {} default(s), which needs --allow-downgrade:\n  {}\nnothing was stored",
        rows.len(), rows.iter().map(row_text).collect::<Vec<_>>().join("\n  ")
    )]
    DowngradeRefused { rows: Vec<DefaultChangeRow> },
    #[error(
        "the runtime catalog changed since the preview (previewed against version {previewed}, now \
         version {now}); preview again; nothing was stored"
    )]
    Stale { previewed: i64, now: i64 },
    #[error("firmware config version {to} does not exist (stored versions: 1 to {latest}); nothing was changed")]
    NoSuchVersion { to: i64, latest: i64 },
    #[error("no pending firmware config change {id} (see `firmware-config pending`); nothing was changed")]
    UnknownPending { id: i64 },
    #[error("pending firmware config change {id} was {decision} by {by} already; nothing was changed")]
    Decided { id: i64, decision: String, by: String },
    #[error(
        "pending firmware config change {id} was proposed by {actor}: another admin must approve it \
         (require_second_admin); nothing was changed"
    )]
    SameActor { id: i64, actor: String },
    #[error("reading or writing the site database: {0}")]
    Store(#[from] StoreError),
}

/// `Dell PowerEdge R760 bmc 2.1 -> 2.0 (DOWNGRADE, 3 hosts)`.
pub fn row_text(r: &DefaultChangeRow) -> String {
    format!(
        "{} {} {} {} -> {} ({}, {} host(s))",
        r.vendor,
        r.model,
        r.component,
        r.from.as_deref().unwrap_or("-"),
        r.to.as_deref().unwrap_or("-"),
        r.kind,
        r.hosts
    )
}

/// The defaults that differ between two catalogs, in vendor, model, component order, with the
/// hosts of each model counted by `hosts_of(vendor, model)`.
pub fn default_changes(
    before: &Catalog,
    after: &Catalog,
    hosts_of: impl Fn(&str, &str) -> usize,
) -> Vec<DefaultChangeRow> {
    let mut rows = Vec::new();
    let mut keys: Vec<(String, String)> = Vec::new();
    for m in before.models().iter().chain(after.models()) {
        if !keys.iter().any(|(v, n)| same_name(v, &m.vendor) && same_name(n, &m.model)) {
            keys.push((m.vendor.clone(), m.model.clone()));
        }
    }
    keys.sort();
    for (vendor, model) in keys {
        let old = before.find(&vendor, &model);
        let new = after.find(&vendor, &model);
        let mut components: Vec<_> = old.iter().chain(new.iter()).flat_map(|m| m.components.keys().copied()).collect();
        components.sort();
        components.dedup();
        for component in components {
            let from = old.and_then(|m| m.default_entry(component)).map(|e| e.version.clone());
            let to = new.and_then(|m| m.default_entry(component)).map(|e| e.version.clone());
            let Some(kind) = DefaultMove::of(from.as_deref(), to.as_deref()) else { continue };
            rows.push(DefaultChangeRow {
                vendor: vendor.clone(),
                model: model.clone(),
                component: component.to_string(),
                from,
                to,
                kind,
                hosts: hosts_of(&vendor, &model),
            });
        }
    }
    rows
}

/// Check every artifact of every default the change adds or moves; all problems are reported.
fn check_artifacts(
    site: &SiteConfig,
    after: &Catalog,
    rows: &[DefaultChangeRow],
) -> Result<Vec<CheckedArtifact>, CatalogChangeError> {
    let settings = ActivitySettings::from_site(site);
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for row in rows.iter().filter(|r| r.to.is_some()) {
        let Some(model) = after.find(&row.vendor, &row.model) else { continue };
        let Some(entry) = row.component.parse().ok().and_then(|c| model.default_entry(c)) else { continue };
        match artifacts::check_entry(&settings, entry) {
            Ok(files) => checked.extend(files.into_iter().map(|f| CheckedArtifact {
                vendor: row.vendor.clone(),
                model: row.model.clone(),
                component: row.component.clone(),
                version: entry.version.clone(),
                artifact: f.artifact,
                sha256: f.sha256,
            })),
            Err(e) => problems.push(format!("{} {} {} {}: {e}", row.vendor, row.model, row.component, entry.version)),
        }
    }
    if !problems.is_empty() {
        return Err(CatalogChangeError::Artifacts { root: settings.artifact_root.clone(), problems });
    }
    Ok(checked)
}

/// Lowercase hex SHA-256 of a document (the empty document for `unset`).
pub fn document_sha256(document: &str) -> String {
    hex::encode(<sha2::Sha256 as sha2::Digest>::digest(document.as_bytes()))
}

/// The preview of `request` by `actor`: validates the document against the whole effective
/// catalog, lists every default that moves, checks the artifacts of the defaults it adds or
/// moves, and plans the next pass under the new catalog. Stores nothing.
pub async fn preview(
    store: &Store,
    site: &SiteConfig,
    request: &CatalogChangeRequest,
    actor: &str,
) -> Result<CatalogChangePreview, CatalogChangeError> {
    let (tables, after) = match &request.document {
        Some(document) => {
            let tables = parse_runtime_document(document, &request.origin).map_err(CatalogChangeError::Document)?.len();
            let after = Catalog::load_with_runtime(site, Some((document.as_str(), request.origin.as_path())))
                .map_err(CatalogChangeError::Document)?;
            (tables, after)
        }
        None => (0, Catalog::load_with_runtime(site, None).map_err(CatalogChangeError::Document)?),
    };
    let sha256 = document_sha256(request.document.as_deref().unwrap_or(""));
    let latest = store.firmware_config_latest().await?;
    let based_on = latest.as_ref().map_or(0, |v| v.version);
    let mut preview = CatalogChangePreview {
        action: request.kind.action(),
        dry_run: request.dry_run,
        changed: !unchanged(latest.as_ref(), request, &sha256),
        removes_layer: request.document.is_none(),
        version: based_on + 1,
        based_on,
        sha256,
        host_models: tables,
        message: request.message.clone(),
        defaults_changed: Vec::new(),
        downgrades: Vec::new(),
        allow_downgrade: request.allow_downgrade,
        artifacts_checked: Vec::new(),
        would_start: Vec::new(),
        ceiling: 0,
        in_flight: 0,
        would_wait: Vec::new(),
        requested_by: actor.to_string(),
        stored: false,
        pending_change: None,
    };
    if !preview.changed {
        preview.version = based_on;
        return Ok(preview);
    }
    let before =
        catalog_with(site, latest.as_ref()).map_err(|e| CatalogChangeError::CurrentCatalog(format!("{e:#}")))?;
    let rows = site_view::read_rows(store).await?;
    let hosts = hosts_by_model(&rows);
    let hosts_of =
        |vendor: &str, model: &str| hosts.iter().filter(|(v, m)| same_name(v, vendor) && same_name(m, model)).count();
    preview.defaults_changed = default_changes(&before, &after, hosts_of);
    preview.downgrades =
        preview.defaults_changed.iter().filter(|r| r.kind == DefaultMove::Downgrade).cloned().collect();
    preview.artifacts_checked = check_artifacts(site, &after, &preview.defaults_changed)?;
    let view = rows.view(&after, site, hostfw_store::now_ms());
    let plan = gates::plan(&view.input);
    preview.would_start = plan.start.clone();
    preview.ceiling = plan.ceiling.limit;
    preview.in_flight = plan.in_flight;
    preview.would_wait =
        plan.skipped.iter().map(|s| (s.machine_id.clone(), s.reason.for_host(&s.machine_id))).collect();
    Ok(preview)
}

/// The request leaves the runtime layer as it is: the same document as the version in effect,
/// or `unset` when no layer is in effect.
fn unchanged(latest: Option<&FirmwareConfigVersion>, request: &CatalogChangeRequest, sha256: &str) -> bool {
    match (latest, &request.document) {
        (None, None) => true,
        (None, Some(_)) => false,
        (Some(v), None) => v.removes_layer,
        (Some(v), Some(_)) => !v.removes_layer && v.sha256 == sha256,
    }
}

/// The (vendor, model) each managed host's explored report names, one entry per host (its
/// report is the one `site_view::link_reports` links to it).
fn hosts_by_model(rows: &site_view::SiteRows) -> Vec<(String, String)> {
    let managed: HashSet<&str> = rows.machines.iter().map(|m| m.id.as_str()).collect();
    let addresses: Vec<String> = rows.reports.iter().map(|r| r.bmc_address.to_string()).collect();
    let linked =
        site_view::link_reports(addresses.iter().map(String::as_str).zip(&rows.reports), |r| r.machine_id.as_deref());
    linked
        .into_iter()
        .filter(|(id, _)| managed.contains(id))
        .filter_map(|(_, r)| r.report.as_ref().map(|i| (i.vendor.clone(), i.model.clone())))
        .collect()
}
