//! `hostfw plan`: a dry run of the scheduler's next pass over the same site view and the same
//! pure gates (`hostfw_model::gates::plan`) the Machine Update Manager uses. It writes nothing.
//!
//! Prints the ceiling and how it was computed, the hosts in flight, which hosts would start, for
//! every drifted (or undecidable) host that would not, the typed reason, and every component left
//! out of drift because its version is not reported (on hosts that start as well as on the others),
//! every rollout target's canary wave (how many hosts it lets start, and when the next opens),
//! every rollout target whose error budget is spent, with the hosts that failed it and why, and
//! every assigned host still waiting for its tenant's approval after the approval deadline, and
//! the operator's brakes: every freeze in force and every target paused by hand (who, why, scope).

use hostfw_activities::site_view;
use hostfw_model::gates::{self, Plan};
use hostfw_model::{NotReportedComponent, VERSION_NOT_REPORTED};
use serde::Serialize;

use crate::catalog_fallback::{self, CatalogWarning};
use crate::context::Context;
use crate::output;

#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanView<'a> {
    #[serde(flatten)]
    plan: &'a Plan,
    /// The same reasons as operator sentences.
    reasons: Vec<(String, String)>,
    /// Hosts with components left out of drift because a version is not reported.
    version_not_reported: Vec<NotReportedHost<'a>>,
    /// Catalog files left out because they do not load (only when some are).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    catalog_warnings: Vec<CatalogWarning>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotReportedHost<'a> {
    machine_id: &'a str,
    components: &'a [NotReportedComponent],
}

/// `hostfw plan`.
pub async fn plan(ctx: &Context) -> anyhow::Result<()> {
    let (catalog, catalog_warnings) = catalog_fallback::effective_or_without_broken(ctx).await?;
    catalog_fallback::warn(ctx, &catalog_warnings);
    // The site database's clock, like the scheduler's pass: the soak is timed by it.
    let view = site_view::read(&ctx.store, &catalog, &ctx.site, ctx.store.db_now_ms().await?).await?;
    let plan = gates::plan(&view.input);
    let reasons: Vec<(String, String)> =
        plan.skipped.iter().map(|s| (s.machine_id.clone(), s.reason.for_host(&s.machine_id))).collect();
    let version_not_reported: Vec<NotReportedHost> = view
        .input
        .hosts
        .iter()
        .filter(|h| !h.firmware.not_reported().is_empty())
        .map(|h| NotReportedHost { machine_id: &h.machine_id, components: h.firmware.not_reported() })
        .collect();
    if ctx.format == crate::cli::Format::Json {
        let json = PlanView { plan: &plan, reasons, version_not_reported, catalog_warnings };
        return output::print(ctx.format, &json, &[], Vec::new());
    }
    crate::outln!("hosts: {} ({} unhealthy), compliant: {}", plan.fleet.total, plan.fleet.unhealthy, plan.compliant);
    crate::outln!("ceiling: {} ({})", plan.ceiling.limit, plan.ceiling.how);
    crate::outln!("in flight: {}, free slots: {}", plan.in_flight, plan.available);
    if plan.start.is_empty() {
        crate::outln!("would start: none");
    } else {
        crate::outln!("would start ({}): {}", plan.start.len(), plan.start.join(", "));
    }
    if !plan.in_repair.is_empty() {
        crate::outln!();
        crate::outln!(
            "IN REPAIR ({} of machine_updater.max_hosts_in_repair = {}; set apart from the ceiling):",
            plan.in_repair.len(),
            plan.repair_cap.map_or_else(|| "-".to_string(), |c| c.to_string())
        );
        let rows: Vec<Vec<String>> = plan
            .in_repair
            .iter()
            .map(|id| {
                let aborted = view.input.hosts.iter().any(|h| &h.machine_id == id && h.repair);
                let why = if aborted {
                    "aborted to maintenance: `hostfw machine maintenance --exit` when repaired"
                } else {
                    "retry budget spent: `hostfw managed-host reset-host-reprovisioning` or `hostfw host reprovision abort`"
                };
                vec![id.clone(), why.to_string()]
            })
            .collect();
        crate::out!("{}", output::table(&["MACHINE", "WHY"], &rows));
    }
    if let Some(at) = plan.next_window_open_ms {
        crate::outln!("next update window opens: {}", output::time(at));
    }
    if !plan.brakes.freezes.is_empty() {
        crate::outln!();
        crate::outln!(
            "FROZEN (no new host starts in scope; hosts in flight hold before their next component unless drain):"
        );
        crate::out!("{}", output::table(&["ID", "SCOPE", "BY", "SINCE", "DRAIN", "REASON"], &freeze_rows(&plan)));
        crate::outln!("lift one with `hostfw unfreeze --id <id>`");
    }
    for p in &plan.brakes.pauses {
        crate::outln!();
        crate::outln!(
            "PAUSED TARGET {}: paused by {} at {} ({}); {}",
            p.target,
            p.by,
            output::time(p.at_ms),
            p.reason,
            p.target.resume_command()
        );
    }
    if !plan.waves.is_empty() {
        crate::outln!();
        crate::outln!("CANARY WAVES: {}", view.input.policy.waves.describe());
        crate::out!("{}", output::table(&["TARGET", "WAVE", "STARTED", "RUNNING", "NEXT"], &wave_rows(&plan)));
    }
    for p in &plan.paused {
        crate::outln!();
        if p.by_wave {
            crate::outln!("PAUSED TARGET {}: {} ({} hosts attempted)", p.target, p.rule, p.attempted_hosts);
        } else {
            crate::outln!(
                "PAUSED TARGET {}: error budget spent ({}; {} hosts attempted)",
                p.target,
                p.rule,
                p.attempted_hosts
            );
        }
        let rows: Vec<Vec<String>> =
            p.failures.iter().map(|f| vec![f.machine_id.clone(), output::time(f.at_ms), f.reason.clone()]).collect();
        crate::out!("{}", output::table(&["FAILED HOST", "AT", "WHY"], &rows));
        crate::outln!("resume it after fixing the image: {}", p.target.resume_command());
    }
    if !plan.approval_overdue.is_empty() {
        let mu = &ctx.site.machine_updater;
        crate::outln!();
        crate::outln!(
            "APPROVAL OVERDUE (machine_updater.approval_deadline = {}, approval_deadline_policy = {}):",
            hostfw_model::duration::format_duration(mu.approval_deadline),
            mu.approval_deadline_policy
        );
        let rows: Vec<Vec<String>> = plan
            .approval_overdue
            .iter()
            .map(|o| {
                vec![
                    o.machine_id.clone(),
                    output::time(o.requested_at_ms),
                    output::time(o.deadline_ms),
                    hostfw_model::gates::span_text(view.input.now_ms - o.deadline_ms),
                ]
            })
            .collect();
        crate::out!("{}", output::table(&["MACHINE", "REQUESTED", "DEADLINE", "OVERDUE BY"], &rows));
        crate::outln!(
            "the tenant approves with `hostfw instance reboot --instance <instance-id> --apply-updates-on-reboot`; \
             to give a request up:"
        );
        for o in &plan.approval_overdue {
            crate::outln!("  hostfw host reprovision clear --id {}", o.machine_id);
        }
    }
    if !reasons.is_empty() {
        crate::outln!();
        let rows: Vec<Vec<String>> = reasons.iter().map(|(id, why)| vec![id.clone(), why.clone()]).collect();
        crate::out!("{}", output::table(&["NOT STARTING", "REASON"], &rows));
    }
    if !version_not_reported.is_empty() {
        crate::outln!();
        crate::outln!("{VERSION_NOT_REPORTED} (left out of drift: neither drifted nor compliant):");
        let rows: Vec<Vec<String>> = version_not_reported
            .iter()
            .flat_map(|h| {
                h.components.iter().map(|c| {
                    let members: Vec<String> = c.members.iter().map(ToString::to_string).collect();
                    vec![h.machine_id.to_string(), c.component.to_string(), members.join(", ")]
                })
            })
            .collect();
        crate::out!("{}", output::table(&["MACHINE", "COMPONENT", "MEMBERS"], &rows));
    }
    Ok(())
}

/// One row per freeze in force.
pub fn freeze_rows(plan: &Plan) -> Vec<Vec<String>> {
    crate::brakes::freeze_table(&plan.brakes.freezes)
}

/// One row per rollout target's canary wave: "2 of 4", "3 of 10 (of 48 hosts)", "3 of 10 (of 48
/// hosts at the first wave; 40 now)".
fn wave_rows(plan: &Plan) -> Vec<Vec<String>> {
    plan.waves
        .iter()
        .map(|w| {
            let next = match &w.next {
                gates::NextWave::At { at_ms } => format!("opens at {}", output::time(*at_ms)),
                other => other.to_string(),
            };
            vec![
                w.target.to_string(),
                format!("{} of {}", w.wave, w.waves),
                if w.hosts == w.hosts_now {
                    format!("{} of {} (of {} hosts)", w.started, w.allowed, w.hosts)
                } else {
                    // Sized from the count frozen when the first wave started; fewer hosts now.
                    format!(
                        "{} of {} (of {} hosts at the first wave; {} now)",
                        w.started, w.allowed, w.hosts, w.hosts_now
                    )
                },
                w.running.to_string(),
                next,
            ]
        })
        .collect()
}
