//! `host reprovision all-drifted --bypass-ceiling`: explore the fleet, request reprovisioning of
//! every drifted host at once (direct requests: the scheduler's ceiling, windows and auto-update
//! policy do not apply; failure-domain caps do), follow progress, and print a per-host report
//! ending in `compliant: X/Y hosts`.
//!
//! The rollout's brakes still hold: drifted hosts of a paused target or a full canary wave are
//! listed and left out unless `--ignore-rollout-gates` (the prompt and the audit row say which).
//!
//! Named for what it does, and asked for: it lists the hosts and asks before requesting
//! (`--yes` answers; `--dry-run` only lists). Requests go through the same path as `host
//! reprovision set`; this command only adds the drift selection, a progress bar and the report.
//! It exits non-zero unless every host is compliant.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::bail;
use hostfw_activities::site_link::Guard;
use hostfw_model::{drift, BmcAddress, BmcLookup, Catalog, ComponentType, HostSubstate, InventoryReport};
use hostfw_workflows::{host_reprovision_workflow_id, HostOutcome, HostReprovisionWorkflow};
use indicatif::{ProgressBar, ProgressStyle};
use temporalio_client::{
    WorkflowDescribeOptions, WorkflowExecutionStatus, WorkflowGetResultOptions, WorkflowQueryOptions,
};

use crate::cli::{AllDriftedArgs, Format};
use crate::context::Context;
use crate::{explore, reprovision};

/// A line for people: printed in table format, left out of `--format json` (whose document is
/// the final report).
macro_rules! text {
    ($ctx:expr, $($arg:tt)*) => {
        if $ctx.format == Format::Table {
            crate::outln!($($arg)*);
        }
    };
}

/// One host in the JSON report.
#[derive(serde::Serialize)]
struct HostRow {
    machine_id: String,
    /// `compliant`, `DRIFTED`, `VERSION NOT REPORTED`, or `not compared`.
    standing: String,
    outcome: String,
    /// Per component: the versions before and after.
    components: BTreeMap<String, (String, String)>,
}

/// How a requested host's update ended, as far as the rollout is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostEnd {
    Completed,
    /// Completed, but some components find no inventory member: the rest was installed.
    NotFullyInstallable(String),
    /// Still running, but failed with its retry budget spent: it waits for an operator.
    Exhausted,
    /// The workflow closed without completing (terminated, failed, cancelled).
    Closed(WorkflowExecutionStatus),
}

/// Desired and reported versions of one host, per component.
type Versions = BTreeMap<ComponentType, Vec<String>>;

/// Reported versions, whether they drift, and whether the host is compliant (not drifted and
/// every version reported).
fn reported(catalog: &Catalog, report: &InventoryReport) -> Option<(Versions, bool, bool)> {
    let model = catalog.find(&report.vendor, &report.model)?;
    let d = drift(model, report);
    Some((d.reported.clone(), d.is_drifted(), d.is_compliant()))
}

async fn latest_report(ctx: &Context, bmc: &BmcAddress) -> anyhow::Result<Option<InventoryReport>> {
    Ok(ctx.store.report_get(&BmcLookup::from(bmc.clone())).await?.and_then(|r| r.report))
}

/// `rollout`.
pub async fn all_drifted(ctx: &Context, args: &AllDriftedArgs) -> anyhow::Result<()> {
    let started_at = Instant::now();
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    if args.explore {
        let (ok, failed) = explore::explore(ctx, None, 16, false).await?;
        text!(
            ctx,
            "explored {} BMCs: {ok} read, {failed} failed ({:.1}s)",
            ok + failed,
            started_at.elapsed().as_secs_f64()
        );
    }
    let machines = ctx.store.machine_list().await?;
    let mut before: BTreeMap<String, Versions> = BTreeMap::new();
    let mut drifted = Vec::new();
    for m in &machines {
        let Some(report) = latest_report(ctx, &m.bmc_address).await? else {
            text!(ctx, "{}: no inventory report; skipped", m.id);
            continue;
        };
        match reported(&catalog, &report) {
            Some((versions, is_drifted, _)) => {
                before.insert(m.id.clone(), versions);
                if is_drifted {
                    drifted.push(m.id.clone());
                }
            }
            None => text!(ctx, "{}: no catalog entry for {} {}; skipped", m.id, report.vendor, report.model),
        }
    }
    text!(ctx, "{} of {} hosts differ from the catalog", drifted.len(), machines.len());
    // The rollout's brakes hold even here: hosts of a paused target or a full canary wave are left
    // out unless --ignore-rollout-gates says otherwise.
    let held = reprovision::rollout_holds(ctx, &drifted).await?;
    for (id, holds) in &held {
        let what = if args.ignore_rollout_gates { "requested anyway (--ignore-rollout-gates)" } else { "left out" };
        text!(ctx, "{id}: held by the rollout gates, {what}: {}", reprovision::holds_text(holds));
    }
    if !args.ignore_rollout_gates {
        drifted.retain(|id| !held.contains_key(id));
    }
    let held_ids: Vec<&String> = held.keys().collect();
    if args.dry_run {
        let json = serde_json::json!({
            "action": "host reprovision all-drifted",
            "dry_run": true,
            "would_request": drifted,
            "held_by_rollout_gates": held_ids,
            "ignore_rollout_gates": args.ignore_rollout_gates,
        });
        let human = if drifted.is_empty() {
            "dry run: nothing to request".to_string()
        } else {
            format!("dry run: would request {} hosts: {}; nothing was requested", drifted.len(), drifted.join(", "))
        };
        return crate::output::result(ctx.format, &json, human);
    }
    if !drifted.is_empty() {
        let gates = match (held.is_empty(), args.ignore_rollout_gates) {
            (true, _) => String::new(),
            (false, true) => format!(
                ", IGNORING the rollout gates that hold {} of them ({})",
                held.len(),
                held_ids.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
            (false, false) => format!(
                "; {} hosts held by the rollout gates are left out ({})",
                held.len(),
                held_ids.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
        };
        crate::confirm::confirm(
            &format!(
                "Request reprovisioning of {} drifted hosts now ({}), bypassing the scheduler's site ceiling, \
                 update windows and auto-update policy (failure-domain caps still apply){gates}?",
                drifted.len(),
                drifted.join(", ")
            ),
            args.yes,
        )?;
    }

    let client = ctx.temporal().await?;
    let mut requested = Vec::new();
    let mut not_requested: BTreeMap<String, String> = BTreeMap::new();
    // Checked against the rollout gates: read again now (the list above may be minutes old behind
    // the prompt) with the gate fence, and read again whenever another write moves the fence.
    let mut queue: std::collections::VecDeque<String> = drifted.into();
    let mut fence = None;
    let mut stalls = 0;
    while let Some(id) = queue.front().cloned() {
        if !args.ignore_rollout_gates && fence.is_none() {
            let (f, held_now) = reprovision::fenced_holds(ctx, queue.make_contiguous()).await?;
            queue.retain(|id| match held_now.get(id) {
                Some(holds) => {
                    let why =
                        format!("held by the rollout gates since it was listed: {}", reprovision::holds_text(holds));
                    eprintln!("{id}: {why}");
                    not_requested.insert(id.clone(), why);
                    false
                }
                None => true,
            });
            fence = Some(f);
            continue;
        }
        let message = Some(args.update_message.clone());
        let guard = match fence.as_mut() {
            Some(f) => Guard::Gates(f),
            None => Guard::CapsOnly,
        };
        match reprovision::request(ctx, &client, &id, reprovision::INITIATOR_CLI, message, guard).await {
            Ok(_) => {
                requested.push(id);
                queue.pop_front();
                stalls = 0;
            }
            Err(e) if reprovision::is_gate_moved(&e) && stalls < reprovision::FENCE_ROUNDS => {
                stalls += 1;
                fence = None;
            }
            Err(e) if reprovision::is_gate_moved(&e) => {
                let why = format!(
                    "the site kept changing over {} reads of the rollout gates; run the command again",
                    reprovision::FENCE_ROUNDS
                );
                for id in queue.drain(..) {
                    eprintln!("{id}: {why}");
                    not_requested.insert(id, why.clone());
                }
            }
            Err(e) => {
                eprintln!("{id}: {e}");
                not_requested.insert(id, format!("{:#}", anyhow::Error::from(e)));
                queue.pop_front();
            }
        }
    }
    if !requested.is_empty() {
        let mut detail = format!("{} hosts requested", requested.len());
        if !held.is_empty() {
            let ids = held_ids.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
            if args.ignore_rollout_gates {
                detail.push_str(&format!("; rollout gates ignored (--ignore-rollout-gates) for {ids}"));
            } else {
                detail.push_str(&format!("; left out, held by the rollout gates: {ids}"));
            }
        }
        ctx.audit("host reprovision all-drifted", "fleet", &detail).await?;
    }
    if args.no_follow {
        let json = serde_json::json!({
            "action": "host reprovision all-drifted",
            "requested": requested,
            "not_requested": not_requested,
            "held_by_rollout_gates": held_ids,
            "ignore_rollout_gates": args.ignore_rollout_gates,
        });
        let mut human = format!(
            "requested {} hosts: {}; follow them with `hostfw watch`",
            requested.len(),
            if requested.is_empty() { "none".to_string() } else { requested.join(", ") }
        );
        for (id, why) in &not_requested {
            human.push_str(&format!("\n{id}: not requested: {why}"));
        }
        return crate::output::result(ctx.format, &json, human);
    }

    let bar = ProgressBar::new(requested.len() as u64);
    bar.set_style(ProgressStyle::with_template("updating {bar:30} {pos}/{len} done  {msg}")?);
    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    let mut finished: BTreeMap<String, HostEnd> = BTreeMap::new();
    let mut last_line = String::new();
    while finished.len() < requested.len() {
        let (mut in_progress, mut waiting, mut retrying) = (0, 0, 0);
        for id in &requested {
            if finished.contains_key(id) {
                continue;
            }
            let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(id));
            let status = handle.describe(WorkflowDescribeOptions::default()).await.ok().map(|d| d.status());
            let end = match status {
                Some(WorkflowExecutionStatus::Running) | None => {
                    let query = handle.query(HostReprovisionWorkflow::status, (), WorkflowQueryOptions::default());
                    match query.await {
                        Ok(s) if s.exhausted => Some(HostEnd::Exhausted),
                        Ok(s) => {
                            match s.substate {
                                HostSubstate::FailedFirmwareUpgrade => retrying += 1,
                                HostSubstate::WaitingForApproval | HostSubstate::WaitingForManualUpgrade => {
                                    waiting += 1
                                }
                                _ => in_progress += 1,
                            }
                            None
                        }
                        Err(_) => {
                            in_progress += 1;
                            None
                        }
                    }
                }
                Some(WorkflowExecutionStatus::Completed) => {
                    match handle.get_result(WorkflowGetResultOptions::default()).await {
                        Ok(HostOutcome::NotFullyInstallable { unmatched, .. }) => {
                            let names: Vec<String> = unmatched
                                .iter()
                                .map(|u| format!("{} (no inventory entry matches {:?})", u.component, u.matcher))
                                .collect();
                            Some(HostEnd::NotFullyInstallable(names.join(", ")))
                        }
                        _ => Some(HostEnd::Completed),
                    }
                }
                Some(other) => Some(HostEnd::Closed(other)),
            };
            if let Some(end) = end {
                finished.insert(id.clone(), end);
                bar.inc(1);
            }
        }
        let done = finished.values().filter(|e| **e == HostEnd::Completed).count();
        let failed = finished.len() - done;
        let message = format!(
            "compliant {done} / in progress {in_progress} / waiting {waiting} / retrying {retrying} / failed {failed}"
        );
        if !std::io::stderr().is_terminal() && message != last_line {
            // No terminal for the bar (CI logs, pipes): print each change as a plain line.
            eprintln!("progress: {}/{} done, {message}", finished.len(), requested.len());
            last_line = message.clone();
        }
        bar.set_message(message);
        if finished.len() == requested.len() {
            break;
        }
        if Instant::now() > deadline {
            bar.abandon();
            bail!(
                "gave up after {} s with {} hosts still updating",
                args.timeout_secs,
                requested.len() - finished.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    bar.finish_and_clear();

    text!(ctx, "\nPer-host report (component: before -> after):");
    let mut compliant = 0;
    let mut rows = Vec::new();
    for m in &machines {
        let after = match latest_report(ctx, &m.bmc_address).await? {
            Some(r) => reported(&catalog, &r),
            None => None,
        };
        let Some((after_versions, still_drifted, is_compliant)) = after else {
            text!(ctx, "  {}: not compared (no report or no catalog entry)", m.id);
            let outcome = "not compared (no report or no catalog entry)".to_string();
            let standing = "not compared".to_string();
            rows.push(HostRow { machine_id: m.id.clone(), standing, outcome, components: BTreeMap::new() });
            continue;
        };
        if is_compliant {
            compliant += 1;
        }
        let outcome = match finished.get(&m.id) {
            Some(HostEnd::Completed) => "updated".into(),
            Some(HostEnd::Exhausted) => "FAILED (retries exhausted)".into(),
            Some(HostEnd::NotFullyInstallable(why)) => format!("NOT FULLY INSTALLABLE: {why}"),
            Some(HostEnd::Closed(_)) => "FAILED".into(),
            None if still_drifted => "not updated".into(),
            None if !is_compliant => "not updated (version not reported)".into(),
            None => "already compliant".into(),
        };
        let outcome: String = outcome;
        let standing = match (still_drifted, is_compliant) {
            (true, _) => "DRIFTED",
            (false, false) => "VERSION NOT REPORTED",
            (false, true) => "compliant",
        };
        text!(ctx, "  {} [{standing}] {}", m.id, outcome);
        let empty = Versions::new();
        let before_versions = before.get(&m.id).unwrap_or(&empty);
        let mut components = BTreeMap::new();
        for (component, now) in &after_versions {
            let was = before_versions.get(component).map(|v| v.join(",")).unwrap_or_else(|| "-".into());
            let now = now.join(",");
            if was == now {
                text!(ctx, "      {component}: {now} (unchanged)");
            } else {
                text!(ctx, "      {component}: {was} -> {now}");
            }
            components.insert(component.to_string(), (was, now));
        }
        rows.push(HostRow { machine_id: m.id.clone(), standing: standing.to_string(), outcome, components });
    }
    text!(ctx, "\nrollout took {:.1}s", started_at.elapsed().as_secs_f64());
    if let Ok(ui) = std::env::var("HOSTFW_WEB_UI") {
        text!(ctx, "Temporal Web UI: {ui}/namespaces/{}/workflows", ctx.site.temporal.namespace);
    }
    text!(ctx, "compliant: {compliant}/{} hosts", machines.len());
    if ctx.format == Format::Json {
        let report = serde_json::json!({
            "requested": requested,
            "hosts": rows,
            "compliant": compliant,
            "total": machines.len(),
            "took_secs": (started_at.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        });
        crate::outln!("{}", crate::json_contract::to_json(&report)?);
    }
    if compliant != machines.len() {
        bail!("{} of {} hosts are not compliant", machines.len() - compliant, machines.len());
    }
    Ok(())
}
