//! Commands that move a running host workflow on: `host reprovision clear` and
//! `mark-manual-upgrade-complete`, `managed-host reset-host-reprovisioning`, and the tenant's
//! `instance reboot --apply-updates-on-reboot`. Each records what it did in the site database and
//! the audit trail, then signals the host's workflow.

use anyhow::{anyhow, bail};
use hostfw_store::ClearOutcome;
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow};
use temporalio_client::WorkflowSignalOptions;

use crate::context::Context;
use crate::output;

/// Refuse unless `machine_id` is registered and has a reprovisioning request.
async fn require_request(ctx: &Context, machine_id: &str) -> anyhow::Result<hostfw_store::Request> {
    if ctx.store.machine_get(machine_id).await?.is_none() {
        bail!("machine {machine_id} is not registered (see `hostfw machine list`)");
    }
    ctx.store
        .request_get(machine_id)
        .await?
        .ok_or_else(|| anyhow!("host {machine_id} has no reprovisioning request; nothing to do"))
}

async fn handle(
    ctx: &Context,
    machine_id: &str,
) -> anyhow::Result<temporalio_client::WorkflowHandle<temporalio_client::Client, HostReprovisionWorkflow>> {
    let client = ctx.temporal().await?;
    Ok(client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id)))
}

/// `host reprovision clear --id`: only a request that has not started.
pub async fn clear(ctx: &Context, machine_id: &str) -> anyhow::Result<()> {
    match ctx.store.request_delete_if_not_started(machine_id).await? {
        ClearOutcome::NotFound => bail!("host {machine_id} has no reprovisioning request; nothing to clear"),
        ClearOutcome::AlreadyStarted(r) => bail!(
            "the reprovisioning of host {machine_id} started at {}; a started update cannot be cleared \
             (it stops on its own when compliant, or use managed-host reset-host-reprovisioning)",
            r.started_at_ms.map(output::time).unwrap_or_default()
        ),
        ClearOutcome::Cleared => {}
    }
    ctx.audit("host reprovision clear", machine_id, "").await?;
    // The workflow of a pending request waits for approval; tell it to end.
    let handle = handle(ctx, machine_id).await?;
    let _ = handle
        .signal(HostReprovisionWorkflow::cancel_request, ctx.actor.clone(), WorkflowSignalOptions::default())
        .await;
    let json = serde_json::json!({ "machine_id": machine_id, "action": "host reprovision clear", "cleared": true });
    output::result(ctx.format, &json, format!("reprovisioning request of {machine_id} cleared"))
}

/// `host reprovision mark-manual-upgrade-complete --id`. Only for a host whose model has the
/// manual platform gate (`mnnvl_capable`); marked before the host reaches the gate, it passes
/// the gate when it gets there.
pub async fn mark_manual_upgrade_complete(ctx: &Context, machine_id: &str) -> anyhow::Result<()> {
    require_request(ctx, machine_id).await?;
    let machine = ctx.store.machine_get(machine_id).await?.ok_or_else(|| anyhow!("machine {machine_id} vanished"))?;
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let (vendor, model) = (machine.vendor.as_deref().unwrap_or("?"), machine.model.as_deref().unwrap_or("?"));
    let gated = catalog.find(vendor, model).is_some_and(|m| m.mnnvl_capable);
    if !gated {
        bail!(
            "host {machine_id} ({vendor} {model}) has no manual platform gate (its catalog model is not \
             mnnvl_capable), so there is nothing to mark complete{}; nothing was changed",
            match machine.substate {
                Some(s) => format!(" (it is in {s})"),
                None => String::new(),
            }
        );
    }
    let at_gate = machine.substate == Some(hostfw_model::HostSubstate::WaitingForManualUpgrade);
    ctx.store.request_mark_manual_upgrade_completed(machine_id, hostfw_store::now_ms()).await?;
    handle(ctx, machine_id)
        .await?
        .signal(
            HostReprovisionWorkflow::mark_manual_upgrade_complete,
            ctx.actor.clone(),
            WorkflowSignalOptions::default(),
        )
        .await
        .map_err(|e| anyhow!("signalling the workflow of {machine_id}: {e}"))?;
    ctx.audit("host reprovision mark-manual-upgrade-complete", machine_id, "").await?;
    let text = if at_gate {
        format!("manual upgrade of {machine_id} marked complete; firmware checking continues from fresh inventory")
    } else {
        format!(
            "manual upgrade of {machine_id} marked complete ahead of the gate (the host is in {}); it passes the \
             gate when it gets there",
            machine.substate.map_or_else(|| machine.state.to_string(), |s| s.to_string())
        )
    };
    let json = serde_json::json!({
        "machine_id": machine_id, "action": "host reprovision mark-manual-upgrade-complete", "at_gate": at_gate,
    });
    output::result(ctx.format, &json, text)
}

/// `managed-host reset-host-reprovisioning --machine`.
pub async fn reset(ctx: &Context, machine_id: &str) -> anyhow::Result<()> {
    require_request(ctx, machine_id).await?;
    ctx.store.request_set_retry_count(machine_id, 0).await?;
    handle(ctx, machine_id)
        .await?
        .signal(HostReprovisionWorkflow::reset_reprovisioning, ctx.actor.clone(), WorkflowSignalOptions::default())
        .await
        .map_err(|e| anyhow!("signalling the workflow of {machine_id}: {e}"))?;
    ctx.audit("managed-host reset-host-reprovisioning", machine_id, "").await?;
    let json = serde_json::json!({ "machine_id": machine_id, "action": "managed-host reset-host-reprovisioning" });
    let text = format!("host reprovisioning of {machine_id} reset: firmware checking restarts, retry count cleared");
    output::result(ctx.format, &json, text)
}

/// `instance reboot --instance <id> --apply-updates-on-reboot`: the tenant approves pending updates.
pub async fn instance_reboot(ctx: &Context, instance_id: &str, apply_updates: bool) -> anyhow::Result<()> {
    let machines = ctx.store.machine_list().await?;
    let Some(machine) = machines.into_iter().find(|m| m.instance_id.as_deref() == Some(instance_id)) else {
        bail!("no machine runs instance {instance_id}");
    };
    if !apply_updates {
        bail!("instance reboot without --apply-updates-on-reboot does not touch firmware; nothing to do here");
    }
    if ctx.store.request_get(&machine.id).await?.is_none() {
        bail!("instance {instance_id} (machine {}) has no pending firmware update", machine.id);
    }
    // The approval is recorded first: the workflow reads it whenever its wait wakes, so it is
    // never lost even when the signal below fails. A repeated command sends the signal again.
    // It is decided once against the approval deadline: if the deadline's `skip` gave the
    // request up first, nothing is approved and the command says so.
    let taken = ctx.store.request_approve(&machine.id, &ctx.actor, hostfw_store::now_ms()).await?;
    if taken == hostfw_store::ApprovalTaken::DeadlineSkipped {
        bail!(
            "instance {instance_id} (machine {}): its request's approval deadline passed before this approval and \
             the request was given up (machine_updater.approval_deadline_policy = skip); nothing was approved. The \
             host is held until its next window (`hostfw plan` says when), then requested again",
            machine.id
        );
    }
    let again = taken == hostfw_store::ApprovalTaken::AlreadyApproved;
    if !again {
        ctx.audit("instance reboot --apply-updates-on-reboot", instance_id, &machine.id).await?;
    }
    handle(ctx, &machine.id)
        .await?
        .signal(HostReprovisionWorkflow::approve_updates, ctx.actor.clone(), WorkflowSignalOptions::default())
        .await
        .map_err(|e| {
            anyhow!(
                "the approval of instance {instance_id} is recorded, but signalling the workflow of {} failed: {e}; \
                 run the command again, or `hostfw doctor --fix` once Temporal is reachable",
                machine.id
            )
        })?;
    let json = serde_json::json!({
        "machine_id": machine.id, "instance_id": instance_id, "action": "instance reboot --apply-updates-on-reboot",
        "already_approved": again,
    });
    let text = if again {
        format!(
            "updates of instance {instance_id} (machine {}) were already approved; the workflow was told again",
            machine.id
        )
    } else {
        format!("updates approved for instance {instance_id} (machine {}): the update starts now", machine.id)
    };
    output::result(ctx.format, &json, text)
}
