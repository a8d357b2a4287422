//! `firmware-config set|diff|unset|rollback|show|history`: the Host Firmware Config API, a
//! runtime catalog layer stored versioned in the site database and applied last (over the static
//! `[host_models.*]` tables and the firmware-directory overlay), and [`effective_catalog`], the
//! catalog every command that compares firmware should use.
//!
//! Owns reading the document (a file, or a stored version for `rollback`) into a change request
//! and printing versions; the change itself (validation, artifact checks, preview, downgrade
//! rule, confirmation, storing) is `catalog_change`. It must not parse or merge catalog documents itself (`hostfw_model::catalog`
//! does).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hostfw_activities::catalog_source;
use hostfw_model::catalog::parse_runtime_document;
use hostfw_model::Catalog;
use hostfw_store::FirmwareConfigVersion;
use serde::Serialize;

use crate::catalog_change;
use crate::catalog_preview::{CatalogChangeError, CatalogChangeRequest, ChangeKind};
use crate::cli::Format;
use crate::context::Context;
use crate::output;

/// The audit target of every firmware-config change.
pub const AUDIT_TARGET: &str = "firmware-config";

/// The effective catalog with `runtime` (a stored version) applied last.
pub fn catalog_with(
    site: &hostfw_model::SiteConfig,
    runtime: Option<&FirmwareConfigVersion>,
) -> anyhow::Result<Catalog> {
    catalog_source::load(site, runtime).map_err(anyhow::Error::from)
}

/// The effective catalog: static config, firmware directory, then the latest stored
/// firmware-config version.
pub async fn effective_catalog(ctx: &Context) -> anyhow::Result<Catalog> {
    let latest = ctx.store.firmware_config_latest().await?;
    catalog_with(&ctx.site, latest.as_ref())
}

/// The flags every change of the runtime layer takes.
#[derive(Debug, Clone, Default)]
pub struct ChangeFlags {
    pub dry_run: bool,
    pub yes: bool,
    pub allow_downgrade: bool,
    /// The change ticket (`--message`).
    pub message: Option<String>,
}

/// The document in `file` (read where the command runs: the CLI, never the API).
pub fn read_document(file: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("reading the firmware config document {}", file.display()))
}

fn file_request(kind: ChangeKind, file: &Path, document: String, flags: &ChangeFlags) -> CatalogChangeRequest {
    CatalogChangeRequest {
        kind,
        document: Some(document),
        origin: file.to_path_buf(),
        source: format!("from {}", file.display()),
        message: flags.message.clone(),
        allow_downgrade: flags.allow_downgrade,
        dry_run: flags.dry_run,
    }
}

/// `firmware-config set --file [--dry-run] [--yes] [--allow-downgrade] [--message]`.
pub async fn set(ctx: &Context, file: &Path, flags: &ChangeFlags) -> anyhow::Result<()> {
    set_document(ctx, file, read_document(file)?, flags).await
}

/// `set` of a document already read (`name` is the file it came from, shown and stored as its
/// origin; the API takes the document in its request body and never reads a path).
pub async fn set_document(ctx: &Context, name: &Path, document: String, flags: &ChangeFlags) -> anyhow::Result<()> {
    let request = file_request(ChangeKind::Set, name, document, flags);
    catalog_change::apply(ctx, request, flags.yes).await
}

/// `firmware-config diff --file`: what `set` would change, stored nowhere, asked nothing.
pub async fn diff(ctx: &Context, file: &Path) -> anyhow::Result<()> {
    diff_document(ctx, file, read_document(file)?).await
}

/// `diff` of a document already read (`name` as for [`set_document`]).
pub async fn diff_document(ctx: &Context, name: &Path, document: String) -> anyhow::Result<()> {
    let flags = ChangeFlags { dry_run: true, ..ChangeFlags::default() };
    let request = file_request(ChangeKind::Set, name, document, &flags);
    catalog_change::diff(ctx, request).await
}

/// `firmware-config unset [--dry-run] [--yes] [--allow-downgrade] [--message]`: remove the
/// runtime layer (stored as the next version), with the same preview and rules as `set`.
pub async fn unset(ctx: &Context, flags: &ChangeFlags) -> anyhow::Result<()> {
    let request = CatalogChangeRequest {
        kind: ChangeKind::Unset,
        document: None,
        origin: PathBuf::from("firmware-config unset"),
        source: "removing the runtime layer".to_string(),
        message: flags.message.clone(),
        allow_downgrade: flags.allow_downgrade,
        dry_run: flags.dry_run,
    };
    catalog_change::apply(ctx, request, flags.yes).await
}

/// `firmware-config rollback --to N [--dry-run] [--yes] [--allow-downgrade] [--message]`: store
/// version N's document again (or remove the layer again, when N removed it), as the next
/// version, through the same checks, preview and confirmation as `set`.
pub async fn rollback(ctx: &Context, to: i64, flags: &ChangeFlags) -> anyhow::Result<()> {
    let Some(old) = ctx.store.firmware_config_get(to).await? else {
        let latest = ctx.store.firmware_config_latest().await?.map_or(0, |v| v.version);
        return Err(CatalogChangeError::NoSuchVersion { to, latest }.into());
    };
    let request = CatalogChangeRequest {
        kind: ChangeKind::Rollback,
        document: (!old.removes_layer).then(|| old.document.clone()),
        origin: catalog_source::origin_label(old.version),
        source: format!("restoring version {to} (stored {} by {})", output::time(old.at_ms), old.actor),
        message: flags.message.clone(),
        allow_downgrade: flags.allow_downgrade,
        dry_run: flags.dry_run,
    };
    catalog_change::apply(ctx, request, flags.yes).await
}

/// `firmware-config approve --revision N [--yes]`.
pub async fn approve(ctx: &Context, id: i64, yes: bool) -> anyhow::Result<()> {
    catalog_change::approve(ctx, id, yes).await
}

/// `firmware-config reject --revision N [--message]`.
pub async fn reject(ctx: &Context, id: i64, message: Option<&str>) -> anyhow::Result<()> {
    let rejected = crate::catalog_approval::reject(&ctx.store, id, &ctx.actor, message).await?;
    let text = format!("pending change {id} (proposed by {}) rejected; nothing was stored", rejected.actor);
    output::result(ctx.format, &rejected, text)
}

/// `firmware-config pending`: changes waiting for a second admin, oldest first.
pub async fn pending(ctx: &Context) -> anyhow::Result<()> {
    let pending = ctx.store.firmware_config_pending_list().await?;
    let rows = pending
        .iter()
        .map(|p| {
            vec![
                p.id.to_string(),
                output::time(p.at_ms),
                p.actor.clone(),
                p.action.clone(),
                p.based_on.to_string(),
                p.message.clone().unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    output::print(ctx.format, &pending, &["REVISION", "PROPOSED", "WHO", "CHANGE", "ON TOP OF", "MESSAGE"], rows)
}

/// One default of the effective catalog and the layer it comes from.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DefaultRow {
    vendor: String,
    model: String,
    component: String,
    version: String,
    /// `static config`, `firmware directory` or `firmware-config vN`: the first layer that
    /// already yields this default.
    layer: String,
    explicit_start_needed: bool,
}

/// `firmware-config show` (`GET /v1/firmware-config` answers it).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = FirmwareConfigShow))]
pub struct ShowJson<'a> {
    /// The latest stored version of the runtime layer (absent: none was ever stored).
    version: Option<&'a FirmwareConfigVersion>,
    /// Every default and the layer it comes from.
    defaults: &'a [DefaultRow],
    /// The effective catalog: every model as a `host_models` table (docs/catalog.md).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    catalog: &'a Catalog,
}

fn defaults(ctx: &Context, catalog: &Catalog, latest: Option<&FirmwareConfigVersion>) -> Vec<DefaultRow> {
    let site = &ctx.site;
    let statics =
        site.host_models.iter().map(|(key, doc)| (site.source.clone(), format!("host_models.{key}"), doc.clone()));
    // A lower layer alone may not validate (a later layer completes it): then it yields nothing.
    let static_only = Catalog::from_docs(statics, Vec::new()).ok();
    let with_directory = Catalog::load(site).ok();
    let runtime_layer = latest.map_or_else(|| "-".to_string(), |v| format!("firmware-config v{}", v.version));
    let mut rows = Vec::new();
    for model in catalog.models() {
        for component in model.effective_ordering() {
            let Some(entry) = model.default_entry(component) else { continue };
            let yields = |c: &Option<Catalog>| {
                c.as_ref()
                    .and_then(|c| c.find(&model.vendor, &model.model))
                    .and_then(|m| m.default_entry(component))
                    .is_some_and(|e| e.version == entry.version)
            };
            let layer = if yields(&static_only) {
                "static config".to_string()
            } else if yields(&with_directory) {
                "firmware directory".to_string()
            } else {
                runtime_layer.clone()
            };
            rows.push(DefaultRow {
                vendor: model.vendor.clone(),
                model: model.model.clone(),
                component: component.to_string(),
                version: entry.version.clone(),
                layer,
                explicit_start_needed: model.explicit_start_needed,
            });
        }
    }
    rows
}

/// `firmware-config show`.
pub async fn show(ctx: &Context) -> anyhow::Result<()> {
    let latest = ctx.store.firmware_config_latest().await?;
    let catalog = catalog_with(&ctx.site, latest.as_ref())?;
    let rows = defaults(ctx, &catalog, latest.as_ref());
    if ctx.format == Format::Json {
        let json = ShowJson { version: latest.as_ref(), defaults: &rows, catalog: &catalog };
        crate::outln!("{}", crate::json_contract::to_json(&json)?);
        return Ok(());
    }
    match &latest {
        Some(v) if v.removes_layer => crate::outln!(
            "firmware config version {} (stored {} by {}) removed the runtime layer: static config and firmware directory only",
            v.version,
            output::time(v.at_ms),
            v.actor
        ),
        Some(v) => crate::outln!(
            "firmware config version {} (stored {} by {}, sha256 {})",
            v.version,
            output::time(v.at_ms),
            v.actor,
            v.sha256
        ),
        None => crate::outln!("no firmware config stored: static config and firmware directory only"),
    }
    if let Some(message) = latest.as_ref().and_then(|v| v.message.as_deref()) {
        crate::outln!("message: {message}");
    }
    let table = rows
        .iter()
        .map(|r| {
            vec![
                r.vendor.clone(),
                r.model.clone(),
                r.component.clone(),
                r.version.clone(),
                r.layer.clone(),
                r.explicit_start_needed.to_string(),
            ]
        })
        .collect();
    output::print(ctx.format, &rows, &["VENDOR", "MODEL", "COMPONENT", "DEFAULT", "LAYER", "EXPLICIT START"], table)
}

/// `firmware-config history`.
pub async fn history(ctx: &Context, limit: u32) -> anyhow::Result<()> {
    let versions = ctx.store.firmware_config_history(limit).await?;
    let rows = versions
        .iter()
        .map(|v| {
            let tables = if v.removes_layer {
                "- (unset)".to_string()
            } else {
                parse_runtime_document(&v.document, &catalog_source::origin_label(v.version))
                    .map_or_else(|_| "?".to_string(), |t| t.len().to_string())
            };
            vec![
                v.version.to_string(),
                output::time(v.at_ms),
                v.actor.clone(),
                tables,
                v.sha256.chars().take(12).collect(),
                v.message.clone().unwrap_or_else(|| "-".to_string()),
            ]
        })
        .collect();
    let headers = ["VERSION", "STORED", "WHO", "HOST MODELS", "SHA256", "MESSAGE"];
    output::print(ctx.format, &versions, &headers, rows)
}
