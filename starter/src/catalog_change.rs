//! A change of the runtime catalog layer (`firmware-config set`, `firmware-config rollback`),
//! made safely: the document is validated against the whole effective catalog, every artifact of
//! a default it changes is found and checked against its `sha256`, the change is previewed (the
//! defaults it changes and the hosts the next pass would start under it, within the ceiling),
//! confirmed, and only then stored, audited and announced to the Machine Update Manager.
//!
//! Owns that sequence and its output. It must not parse or merge catalog documents
//! (`hostfw_model::catalog`), decide which hosts start (`hostfw_model::gates::plan`), or hash
//! files itself (`hostfw_activities::artifacts`).

use std::path::Path;

use anyhow::{anyhow, bail};
use hostfw_activities::{artifacts, site_view, ActivitySettings};
use hostfw_model::catalog::parse_runtime_document;
use hostfw_model::gates;
use hostfw_model::Catalog;
use serde::Serialize;

use crate::cli::Format;
use crate::context::Context;
use crate::firmware_config::{catalog_with, AUDIT_TARGET};
use crate::{confirm, output};

/// What the operator asked for.
pub struct ChangeRequest<'a> {
    /// The new runtime document.
    pub document: &'a str,
    /// Where it came from, for error messages (a file, or `firmware-config vN`).
    pub origin: &'a Path,
    /// The audit action (`firmware-config set`, `firmware-config rollback`).
    pub action: &'a str,
    /// The audit detail's description of the source (`from catalog.toml`, `restoring version 3`).
    pub source: String,
    pub dry_run: bool,
    pub yes: bool,
}

/// One default version the change moves.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct DefaultChange {
    pub vendor: String,
    pub model: String,
    pub component: String,
    /// `None`: no default before (a new model or component).
    pub from: Option<String>,
    /// `None`: no default after (removed).
    pub to: Option<String>,
}

/// The preview of a change.
#[derive(Debug, Serialize)]
struct Preview {
    dry_run: bool,
    /// False when the document is identical to the stored latest version (nothing to do).
    changed: bool,
    /// The version it would be (or was) stored as.
    version: i64,
    sha256: String,
    host_models: usize,
    defaults_changed: Vec<DefaultChange>,
    /// Artifacts checked (of every changed default), with their SHA-256.
    artifacts_checked: Vec<CheckedView>,
    /// Hosts the next pass would start under the new catalog, within the ceiling.
    would_start: Vec<String>,
    ceiling: u32,
    in_flight: u32,
    /// Drifted hosts under the new catalog that the next pass would not start, with the reason.
    would_wait: Vec<(String, String)>,
    stored: bool,
}

#[derive(Debug, Serialize)]
struct CheckedView {
    vendor: String,
    model: String,
    component: String,
    version: String,
    artifact: String,
    sha256: String,
}

/// The defaults that differ between two catalogs, in vendor, model, component order.
pub fn default_changes(before: &Catalog, after: &Catalog) -> Vec<DefaultChange> {
    let mut changes = Vec::new();
    let mut keys: Vec<(String, String)> = Vec::new();
    for m in before.models().iter().chain(after.models()) {
        if !keys.iter().any(|(v, n)| hostfw_model::same_name(v, &m.vendor) && hostfw_model::same_name(n, &m.model)) {
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
            let from = old.and_then(|m| m.default_entry(component));
            let to = new.and_then(|m| m.default_entry(component));
            if from != to {
                changes.push(DefaultChange {
                    vendor: vendor.clone(),
                    model: model.clone(),
                    component: component.to_string(),
                    from: from.map(|e| e.version.clone()),
                    to: to.map(|e| e.version.clone()),
                });
            }
        }
    }
    changes
}

/// Check every artifact of every default the change adds or moves; all problems are reported.
fn check_artifacts(ctx: &Context, after: &Catalog, changes: &[DefaultChange]) -> anyhow::Result<Vec<CheckedView>> {
    let settings = ActivitySettings::from_site(&ctx.site);
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for change in changes.iter().filter(|c| c.to.is_some()) {
        let Some(model) = after.find(&change.vendor, &change.model) else { continue };
        let Some(entry) = change.component.parse().ok().and_then(|c| model.default_entry(c)) else { continue };
        match artifacts::check_entry(&settings, entry) {
            Ok(files) => checked.extend(files.into_iter().map(|f| CheckedView {
                vendor: change.vendor.clone(),
                model: change.model.clone(),
                component: change.component.clone(),
                version: entry.version.clone(),
                artifact: f.artifact,
                sha256: f.sha256,
            })),
            Err(e) => {
                problems.push(format!("{} {} {} {}: {e}", change.vendor, change.model, change.component, entry.version))
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "{} default(s) name an unusable artifact (firmware directory {}):\n  {}\nnothing was stored",
            problems.len(),
            settings.artifact_root.display(),
            problems.join("\n  ")
        );
    }
    Ok(checked)
}

/// Validate, check, preview, confirm and store a new runtime document.
pub async fn apply(ctx: &Context, req: ChangeRequest<'_>) -> anyhow::Result<()> {
    let tables =
        parse_runtime_document(req.document, req.origin).map_err(|e| anyhow!("{e}; nothing was stored"))?.len();
    let after = Catalog::load_with_runtime(&ctx.site, Some((req.document, req.origin)))
        .map_err(|e| anyhow!("{e}; nothing was stored"))?;
    let sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(req.document.as_bytes()));
    let latest = ctx.store.firmware_config_latest().await?;
    if let Some(v) = latest.as_ref().filter(|v| v.sha256 == sha256) {
        return unchanged(ctx, v, tables);
    }
    let before = catalog_with(&ctx.site, latest.as_ref())?;
    let defaults_changed = default_changes(&before, &after);
    let artifacts_checked = check_artifacts(ctx, &after, &defaults_changed)?;
    let view = site_view::read(&ctx.store, &after, &ctx.site, hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    let mut preview = Preview {
        dry_run: req.dry_run,
        changed: true,
        version: latest.as_ref().map_or(1, |v| v.version + 1),
        sha256,
        host_models: tables,
        defaults_changed,
        artifacts_checked,
        would_start: plan.start.clone(),
        ceiling: plan.ceiling.limit,
        in_flight: plan.in_flight,
        would_wait: plan.skipped.iter().map(|s| (s.machine_id.clone(), s.reason.for_host(&s.machine_id))).collect(),
        stored: false,
    };
    if ctx.format == Format::Table {
        print_preview(&preview);
    }
    if req.dry_run {
        if ctx.format == Format::Json {
            crate::outln!("{}", crate::json_contract::to_json(&preview)?);
        } else {
            crate::outln!("dry run: nothing was stored");
        }
        return Ok(());
    }
    let question = format!("store this catalog as firmware config version {}?", preview.version);
    confirm::confirm(&question, req.yes)?;
    let stored = ctx.store.firmware_config_put(&ctx.actor, req.document, &preview.sha256).await?;
    let detail = format!(
        "version {} {} ({tables} host model tables, sha256 {}; {} default(s) changed)",
        stored.version,
        req.source,
        preview.sha256,
        preview.defaults_changed.len()
    );
    ctx.audit(req.action, AUDIT_TARGET, &detail).await?;
    crate::wake::wake(ctx, "the runtime catalog changed").await;
    preview.version = stored.version;
    preview.stored = true;
    match ctx.format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(&preview)?),
        Format::Table => crate::outln!(
            "firmware config version {} stored ({tables} host model tables, sha256 {})",
            stored.version,
            preview.sha256
        ),
    }
    Ok(())
}

fn unchanged(ctx: &Context, v: &hostfw_store::FirmwareConfigVersion, tables: usize) -> anyhow::Result<()> {
    match ctx.format {
        Format::Json => {
            let json = serde_json::json!({
                "changed": false, "stored": false, "version": v.version, "sha256": v.sha256, "host_models": tables,
            });
            crate::outln!("{}", crate::json_contract::to_json(&json)?);
        }
        Format::Table => crate::outln!(
            "firmware config unchanged: identical to version {} (stored {} by {}); nothing stored",
            v.version,
            output::time(v.at_ms),
            v.actor
        ),
    }
    Ok(())
}

fn print_preview(p: &Preview) {
    if p.defaults_changed.is_empty() {
        crate::outln!("default versions: unchanged (the document changes other settings)");
    } else {
        crate::outln!("default versions that change:");
        let rows: Vec<Vec<String>> = p
            .defaults_changed
            .iter()
            .map(|c| {
                vec![
                    c.vendor.clone(),
                    c.model.clone(),
                    c.component.clone(),
                    c.from.clone().unwrap_or_else(|| "-".into()),
                    c.to.clone().unwrap_or_else(|| "- (removed)".into()),
                ]
            })
            .collect();
        crate::out!("{}", output::table(&["VENDOR", "MODEL", "COMPONENT", "FROM", "TO"], &rows));
    }
    if !p.artifacts_checked.is_empty() {
        crate::outln!("artifacts checked: {}", p.artifacts_checked.len());
        for a in &p.artifacts_checked {
            crate::outln!("  {} {} {}: {} sha256 {}", a.model, a.component, a.version, a.artifact, a.sha256);
        }
    }
    crate::outln!(
        "the next pass would start {} host(s) (ceiling {}, in flight {}){}{}",
        p.would_start.len(),
        p.ceiling,
        p.in_flight,
        if p.would_start.is_empty() { "" } else { ": " },
        p.would_start.join(", ")
    );
    if !p.would_wait.is_empty() {
        crate::outln!("{} more host(s) would wait:", p.would_wait.len());
        for (id, why) in &p.would_wait {
            crate::outln!("  {id}: {why}");
        }
    }
}
