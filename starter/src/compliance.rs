//! `hostfw compliance`: per catalog vendor/model and component, the desired (default) version,
//! each version the fleet runs with its host count, and how many hosts are compliant, drifted,
//! pending, active, failed and exhausted for it (the rules are `hostfw_model::compliance`'s; the
//! worker exports the same numbers as `hostfw_component_*` metrics). It only reads.
//!
//! Owns the command and the table people read (also printed by `watch`'s report). It must not
//! count anything (`hostfw_model::compliance`) nor read the rows itself
//! (`hostfw_activities::compliance_read`).

use anyhow::Context as _;
use hostfw_activities::compliance_read;
use hostfw_model::ComplianceView;

use serde::Serialize;

use crate::catalog_fallback::{self, CatalogWarning};
use crate::cli::Format;
use crate::context::Context;

/// The view of the site now.
pub async fn read(ctx: &Context) -> anyhow::Result<ComplianceView> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    read_with(ctx, &catalog).await
}

async fn read_with(ctx: &Context, catalog: &hostfw_model::Catalog) -> anyhow::Result<ComplianceView> {
    compliance_read::read(&ctx.store, catalog, &ctx.site, hostfw_store::now_ms())
        .await
        .context("reading machines, requests and explored reports from the site database")
}

/// `hostfw compliance --format json`: the view, and the catalog files left out because they do
/// not load (only when some are).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComplianceJson<'a> {
    #[serde(flatten)]
    view: &'a ComplianceView,
    /// Catalog files left out because they do not load (only when some are).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    catalog_warnings: Vec<CatalogWarning>,
}

/// `hostfw compliance`. A catalog file that does not load is left out, with a warning
/// (`catalog_fallback`).
pub async fn compliance(ctx: &Context) -> anyhow::Result<()> {
    let (catalog, catalog_warnings) = catalog_fallback::effective_or_without_broken(ctx).await?;
    catalog_fallback::warn(ctx, &catalog_warnings);
    let view = read_with(ctx, &catalog).await?;
    match ctx.format {
        Format::Json => {
            crate::outln!("{}", crate::json_contract::to_json(&ComplianceJson { view: &view, catalog_warnings })?)
        }
        Format::Table => crate::out!("{}", table(&view)),
    }
    Ok(())
}

/// The view as an aligned table, one row per (model, component), then the hosts it leaves out.
/// `NOT REPORTED` and `UNMATCHED` are shown only when some row has such hosts.
pub fn table(view: &ComplianceView) -> String {
    let rare = view.components.iter().any(|c| c.counts.not_reported > 0 || c.counts.unmatched > 0);
    let mut headers = vec![
        "MODEL",
        "COMPONENT",
        "DESIRED",
        "RUNNING (HOSTS)",
        "HOSTS",
        "COMPLIANT",
        "DRIFTED",
        "PENDING",
        "ACTIVE",
        "FAILED",
        "EXHAUSTED",
        "PAUSED",
    ];
    if rare {
        headers.extend(["NOT REPORTED", "UNMATCHED"]);
    }
    let rows: Vec<Vec<String>> = view
        .components
        .iter()
        .map(|c| {
            let running: Vec<String> = c
                .versions
                .iter()
                .map(|v| format!("{} ({})", v.version.as_deref().unwrap_or("(not reported)"), v.hosts))
                .collect();
            let n = &c.counts;
            let mut row = vec![
                format!("{} {}", c.vendor, c.model),
                c.component.to_string(),
                c.desired.clone(),
                if running.is_empty() { "-".to_string() } else { running.join(", ") },
            ];
            row.extend(
                [n.hosts, n.compliant, n.drifted, n.pending, n.active, n.failed, n.exhausted, n.paused]
                    .map(|v| v.to_string()),
            );
            if rare {
                row.extend([n.not_reported, n.unmatched].map(|v| v.to_string()));
            }
            row
        })
        .collect();
    let mut out = if rows.is_empty() {
        "no catalog component has a default version\n".to_string()
    } else {
        crate::output::table(&headers, &rows)
    };
    if view.not_explored > 0 {
        out.push_str(&format!("not explored (no inventory stored): {} hosts\n", view.not_explored));
    }
    if view.no_catalog_entry > 0 {
        out.push_str(&format!("no catalog entry for their model: {} hosts\n", view.no_catalog_entry));
    }
    out
}
