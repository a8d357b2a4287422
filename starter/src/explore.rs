//! `site-explorer explore|get-report`: reading BMC inventories into the site database, and
//! showing what was stored.

use anyhow::{anyhow, bail};
use hostfw_activities::crawl;
use hostfw_model::drift;
use hostfw_model::BmcLookup;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::context::Context;
use crate::output;
use crate::report_view::{self, ComponentView, MemberView};

/// Explore `only` (every machine when `None`) with at most `concurrency` BMCs at once, through the
/// Site Explorer's crawl loop (`hostfw_activities::crawl::explore_all`).
/// Returns `(explored, failed)` counts; failures are stored with the report and printed.
pub async fn explore(
    ctx: &Context,
    only: Option<&str>,
    concurrency: usize,
    quiet: bool,
) -> anyhow::Result<(usize, usize)> {
    let mut machines = ctx.store.machine_list().await?;
    if let Some(id) = only {
        machines.retain(|m| m.id == id);
        if machines.is_empty() {
            bail!("machine {id} is not registered (see `hostfw machine list`)");
        }
    }
    let deps = crate::deps(ctx).await?;
    // Served by the API (output captured), the bar and the failures are the caller's, not this
    // process's terminal: no bar, and the failures go with the answer (in the table format).
    let served = crate::output::capturing();
    let bar = if quiet || served { ProgressBar::hidden() } else { ProgressBar::new(machines.len() as u64) };
    bar.set_style(ProgressStyle::with_template("exploring BMCs {bar:30} {pos}/{len} {msg}")?);
    let done = crawl::explore_all(&deps, machines, concurrency, |_, _| bar.inc(1)).await;
    bar.finish_and_clear();
    for (id, e) in &done.failed {
        if served && ctx.format == crate::cli::Format::Table {
            crate::outln!("{id}: exploration failed: {e}");
        } else {
            eprintln!("{id}: exploration failed: {e}");
        }
    }
    Ok((done.explored as usize, done.failed.len()))
}

/// `site-explorer explore`.
pub async fn explore_cmd(ctx: &Context, only: Option<&str>, concurrency: usize) -> anyhow::Result<()> {
    let (ok, failed) = explore(ctx, only, concurrency, false).await?;
    if ok > 0 {
        // Fresh inventory: the manager judges drift from it now, not at its next pass.
        crate::wake::wake(ctx, "site explorer stored fresh inventory (explored by hand)").await;
    }
    let json =
        serde_json::json!({ "action": "site-explorer explore", "bmcs": ok + failed, "read": ok, "failed": failed });
    crate::output::result(ctx.format, &json, format!("explored {} BMCs: {ok} read, {failed} failed", ok + failed))?;
    if failed > 0 {
        bail!("{failed} BMCs could not be explored");
    }
    Ok(())
}

/// A stored exploration report (`GET /v1/site-explorer/report` answers it).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ExplorationReportView))]
pub struct ReportView {
    bmc_address: String,
    machine_id: Option<String>,
    explored_at: String,
    error: Option<String>,
    report: Option<hostfw_model::InventoryReport>,
    /// `{"Desired": {component: version}, "Reported": {component: [version, ...]}}`, as the
    /// operator document's report shows them (when the catalog has the model).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    versions: Option<serde_json::Value>,
    /// Per component with a default: desired, status and the matching members (as sent, with
    /// the reason when a version is not reported).
    components: Option<Vec<ComponentView>>,
}

/// `site-explorer get-report managed-host <bmc-ip>`.
pub async fn get_report(ctx: &Context, bmc: &str) -> anyhow::Result<()> {
    let lookup: BmcLookup = bmc.parse().map_err(|e| anyhow!("site-explorer get-report: {e}"))?;
    let Some(stored) = ctx.store.report_get(&lookup).await? else {
        bail!("no exploration report for BMC {bmc} (run `hostfw site-explorer explore` first)");
    };
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let found = stored.report.as_ref().and_then(|r| catalog.find(&r.vendor, &r.model).map(|m| (m, r)));
    let drift = found.map(|(m, r)| drift(m, r));
    let view = ReportView {
        bmc_address: stored.bmc_address.to_string(),
        machine_id: stored.machine_id.clone(),
        explored_at: output::time(stored.explored_at_ms),
        error: stored.error.clone(),
        report: stored.report.clone(),
        versions: drift.as_ref().map(|d| serde_json::json!({ "Desired": d.desired, "Reported": d.reported })),
        components: found.map(|(m, r)| report_view::components(m, r)),
    };
    if ctx.format == crate::cli::Format::Json {
        crate::outln!("{}", crate::json_contract::to_json(&view)?);
        return Ok(());
    }
    crate::outln!("BMC:         {}", view.bmc_address);
    crate::outln!("Machine:     {}", view.machine_id.as_deref().unwrap_or("-"));
    crate::outln!("Explored at: {}", view.explored_at);
    if let Some(e) = &view.error {
        crate::outln!("Last error:  {e}");
    }
    if let Some(r) = &view.report {
        crate::outln!("Vendor:      {}", r.vendor);
        crate::outln!("Model:       {}", r.model);
        crate::outln!("\nFirmware inventory (versions quoted as sent):");
        let rows: Vec<Vec<String>> =
            r.members.iter().map(MemberView::of).map(|m| vec![format!("  {}", m.id), m.value(), m.note()]).collect();
        crate::out!("{}", output::table(&["  ID", "VERSION", "NOTE"], &rows));
    }
    match &view.components {
        Some(components) => {
            crate::outln!("\nVersions (component: reported / desired):");
            for c in components {
                crate::outln!("  {}", c.line());
            }
        }
        None => crate::outln!("\nNo catalog entry for this vendor and model."),
    }
    Ok(())
}
