//! `hostfw host reprovision abort` (issue 27): take back an update.
//!
//! One host (`--id`) or every host with a request in a selector's scope (`--selector`, with the
//! dry run and confirmation of `all-drifted`). For each host:
//! - a request that has not started is cleared (as `host reprovision clear`), and with
//!   `--to-maintenance` the host is put in maintenance for repair;
//! - a started update is told to stop (the workflow's `abort` signal): it ends at its next safe
//!   point (a flash in progress, its activation and verification finish first), restores the
//!   platform and the host, clears the request, frees the slot and records what it flashed and
//!   what still differs. An exhausted host is aborted at once;
//! - a request whose workflow is not running (nothing can restore its platform) is ended here:
//!   the host goes to maintenance for repair when it is assigned or `--to-maintenance` is given,
//!   else back to Ready; the request and the health report go.
//!
//! Owns choosing among those three and saying what happened. It must not decide where a workflow
//! may stop (the workflow's `abort` module does).

use anyhow::{anyhow, bail};
use hostfw_model::gates::FreezeScope;
use hostfw_model::HostState;
use hostfw_store::{ClearOutcome, Machine};
use hostfw_workflows::contracts::AbortOrder;
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow};
use serde_json::{json, Value};
use temporalio_client::errors::WorkflowInteractionError;
use temporalio_client::WorkflowSignalOptions;

use crate::cli::AbortArgs;
use crate::context::Context;
use crate::output;

/// The source of the health report an update raises (removed when the update ends).
const HEALTH_SOURCE: &str = "host-fw-update";

/// How one host's abort went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// The request had not started: cleared.
    Cleared,
    /// The workflow was told; it stops at its next safe point.
    Signalled,
    /// No workflow ran for the request: ended here.
    EndedHere,
}

impl Taken {
    fn key(self) -> &'static str {
        match self {
            Taken::Cleared => "cleared",
            Taken::Signalled => "signalled",
            Taken::EndedHere => "ended_here",
        }
    }
}

/// `hostfw host reprovision abort`.
pub async fn abort(ctx: &Context, args: &AbortArgs) -> anyhow::Result<()> {
    let reason = args.reason.trim();
    if reason.is_empty() {
        bail!("abort needs a reason (--reason): it is recorded in the host's history and the audit trail; nothing was changed");
    }
    let ids = match (&args.machine, &args.selector) {
        (Some(id), None) => vec![id.clone()],
        (None, Some(selector)) => return abort_many(ctx, args, selector, reason).await,
        _ => bail!("abort: give --id MACHINE_ID or --selector SELECTOR (one of them); nothing was changed"),
    };
    let id = &ids[0];
    let machine =
        ctx.store.machine_get(id).await?.ok_or_else(|| {
            anyhow!("machine {id} is not registered (see `hostfw machine list`); nothing was changed")
        })?;
    if args.dry_run {
        bail!("--dry-run goes with --selector (one host's abort needs no preview); nothing was changed");
    }
    let taken = abort_one(ctx, &machine, reason, args.to_maintenance).await?;
    let text = match taken {
        Taken::Cleared => format!(
            "the reprovisioning request of {id} had not started: cleared{}",
            if args.to_maintenance { "; the host is in maintenance for repair" } else { "" }
        ),
        Taken::Signalled => format!(
            "abort of {id} requested: the update stops at its next safe point (a flash in progress, its activation \
             and verification finish first), then the host is restored{}; `hostfw managed-host show {id}` follows it",
            if args.to_maintenance { " and left in maintenance for repair" } else { "" }
        ),
        Taken::EndedHere => format!(
            "no workflow was running for the request of {id}: request and health report removed here; {}",
            if ends_in_repair(&machine, args.to_maintenance) {
                "the host is in maintenance for repair (its platform could not be restored by hostfw)"
            } else {
                "the host is Ready again"
            }
        ),
    };
    let doc = json!({
        "action": "host reprovision abort", "machine_id": id, "reason": reason,
        "to_maintenance": args.to_maintenance, "outcome": taken.key(),
    });
    output::result(ctx.format, &doc, text)
}

/// `--selector`: every host with a request in scope, previewed, confirmed, then aborted.
async fn abort_many(ctx: &Context, args: &AbortArgs, selector: &str, reason: &str) -> anyhow::Result<()> {
    let scope = FreezeScope::parse(selector).map_err(|e| anyhow!("{e}; nothing was changed"))?;
    let requests = ctx.store.request_list().await?;
    let mut hosts = Vec::new();
    for machine in ctx.store.machine_list().await? {
        if !requests.iter().any(|r| r.machine_id == machine.id) {
            continue;
        }
        if scope.covers(machine.vendor.as_deref(), machine.model.as_deref(), &machine.labels) {
            hosts.push(machine);
        }
    }
    let preview: Vec<Value> = hosts
        .iter()
        .map(|m| json!({"machine_id": m.id, "state": m.state.to_string(), "substate": m.substate.map(|s| s.to_string())}))
        .collect();
    if hosts.is_empty() || args.dry_run {
        let doc = json!({
            "action": "host reprovision abort", "selector": selector, "dry_run": true, "hosts": preview,
        });
        let text = if hosts.is_empty() {
            format!("no host with a reprovisioning request matches {selector}; nothing to abort")
        } else {
            format!("would abort {} host(s) matching {selector}:\n{}", hosts.len(), host_lines(&hosts))
        };
        return output::result(ctx.format, &doc, text);
    }
    crate::confirm::confirm(
        &format!(
            "Abort the updates of {} host(s) matching {selector} ({})?\n{}\n",
            hosts.len(),
            if args.to_maintenance { "left in maintenance for repair" } else { "restored to their prior state" },
            host_lines(&hosts)
        ),
        args.yes,
    )?;
    let mut done = Vec::new();
    for machine in &hosts {
        let taken = abort_one(ctx, machine, reason, args.to_maintenance).await?;
        done.push(json!({"machine_id": machine.id, "outcome": taken.key()}));
    }
    let doc = json!({
        "action": "host reprovision abort", "selector": selector, "reason": reason,
        "to_maintenance": args.to_maintenance, "hosts": done,
    });
    let text = format!(
        "abort requested for {} host(s) matching {selector}; each stops at its next safe point (`hostfw plan` \
         follows them)",
        hosts.len()
    );
    output::result(ctx.format, &doc, text)
}

fn host_lines(hosts: &[Machine]) -> String {
    let lines: Vec<String> = hosts
        .iter()
        .map(|m| format!("  {}  {}", m.id, m.substate.map_or_else(|| m.state.to_string(), |s| s.to_string())))
        .collect();
    lines.join("\n")
}

/// An assigned host whose platform hostfw could not restore, or an explicit `--to-maintenance`.
fn ends_in_repair(machine: &Machine, to_maintenance: bool) -> bool {
    to_maintenance || machine.instance_id.is_some()
}

async fn abort_one(ctx: &Context, machine: &Machine, reason: &str, to_maintenance: bool) -> anyhow::Result<Taken> {
    let id = &machine.id;
    let detail = format!("{reason}{}", if to_maintenance { " (to maintenance)" } else { "" });
    match ctx.store.request_delete_if_not_started(id).await? {
        ClearOutcome::NotFound => bail!("host {id} has no reprovisioning request; nothing to abort"),
        ClearOutcome::Cleared => {
            ctx.audit("host reprovision abort", id, &detail).await?;
            if to_maintenance {
                let why = format!("aborted by {}: {reason}", ctx.actor);
                let message = format!("{why}; the request had not started; left in maintenance for repair");
                ctx.store.machine_enter_repair(id, &why, &ctx.actor, &message).await?;
            }
            // The workflow of a pending request waits for approval: tell it to end.
            let client = ctx.temporal().await?;
            let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(id));
            let _ = handle
                .signal(HostReprovisionWorkflow::cancel_request, ctx.actor.clone(), WorkflowSignalOptions::default())
                .await;
            return Ok(Taken::Cleared);
        }
        ClearOutcome::AlreadyStarted(_) => {}
    }
    let order = AbortOrder { by: ctx.actor.clone(), reason: reason.to_string(), to_maintenance };
    let client = ctx.temporal().await?;
    let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(id));
    match handle.signal(HostReprovisionWorkflow::abort, order, WorkflowSignalOptions::default()).await {
        Ok(()) => {
            ctx.audit("host reprovision abort", id, &detail).await?;
            Ok(Taken::Signalled)
        }
        Err(WorkflowInteractionError::NotFound(_)) => {
            end_here(ctx, machine, reason, to_maintenance).await?;
            ctx.audit("host reprovision abort", id, &format!("{detail}; no workflow was running")).await?;
            Ok(Taken::EndedHere)
        }
        Err(e) => Err(anyhow!("signalling the workflow of {id}: {e}; nothing was changed")),
    }
}

/// End a request no workflow serves, in the order a restore does: state first (the host never
/// looks allocatable while its request exists), then the attempt, the request, the health report.
async fn end_here(ctx: &Context, machine: &Machine, reason: &str, to_maintenance: bool) -> anyhow::Result<()> {
    let id = &machine.id;
    let why = format!("aborted by {}: {reason}", ctx.actor);
    if ends_in_repair(machine, to_maintenance) {
        let message = format!(
            "{why}; no workflow was running for its request, so its platform was not restored: left in maintenance \
             for repair"
        );
        ctx.store.machine_enter_repair(id, &why, &ctx.actor, &message).await?;
    } else {
        let message = format!("{why}; no workflow was running for its request");
        ctx.store.machine_set_state(id, HostState::Ready, None, &message).await?;
    }
    ctx.store.target_finish(id).await?;
    ctx.store.request_delete(id).await?;
    ctx.store.health_report_remove(id, HEALTH_SOURCE).await?;
    Ok(())
}
