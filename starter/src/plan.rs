//! `hostfw plan`: a dry run of the scheduler's next pass over the same site view and the same
//! pure gates (`hostfw_model::gates::plan`) the Machine Update Manager uses. It writes nothing.
//!
//! Prints the ceiling and how it was computed, the hosts in flight, which hosts would start, and
//! for every drifted (or undecidable) host that would not, the typed reason.

use hostfw_activities::site_view;
use hostfw_model::gates::{self, Plan};
use serde::Serialize;

use crate::context::Context;
use crate::output;

#[derive(Serialize)]
struct PlanView<'a> {
    #[serde(flatten)]
    plan: &'a Plan,
    /// The same reasons as operator sentences.
    reasons: Vec<(String, String)>,
}

/// `hostfw plan`.
pub async fn plan(ctx: &Context) -> anyhow::Result<()> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let view = site_view::read(&ctx.store, &catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    let reasons: Vec<(String, String)> =
        plan.skipped.iter().map(|s| (s.machine_id.clone(), s.reason.to_string())).collect();
    if ctx.format == crate::cli::Format::Json {
        return output::print(ctx.format, &PlanView { plan: &plan, reasons }, &[], Vec::new());
    }
    crate::outln!("hosts: {} ({} unhealthy), compliant: {}", plan.fleet.total, plan.fleet.unhealthy, plan.compliant);
    crate::outln!("ceiling: {} ({})", plan.ceiling.limit, plan.ceiling.how);
    crate::outln!("in flight: {}, free slots: {}", plan.in_flight, plan.available);
    if plan.start.is_empty() {
        crate::outln!("would start: none");
    } else {
        crate::outln!("would start ({}): {}", plan.start.len(), plan.start.join(", "));
    }
    if let Some(at) = plan.next_window_open_ms {
        crate::outln!("next update window opens: {}", output::time(at));
    }
    if !reasons.is_empty() {
        crate::outln!();
        let rows: Vec<Vec<String>> = reasons.iter().map(|(id, why)| vec![id.clone(), why.clone()]).collect();
        crate::out!("{}", output::table(&["NOT STARTING", "REASON"], &rows));
    }
    Ok(())
}
