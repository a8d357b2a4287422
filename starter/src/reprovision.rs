//! `host reprovision set|list`: direct reprovisioning requests (seed, "Request host
//! reprovisioning directly"), and the request-then-start step the rollout shares.
//!
//! A request row is written first and the workflow started second; if the start fails the row is
//! removed again, so nothing is half-written. The workflow ID is the per-host lock: a second
//! request for a host whose workflow runs is refused.

use anyhow::{anyhow, bail};
use hostfw_store::{NewRequest, RequestCreate};
use hostfw_model::HostState;
use hostfw_workflows::host_reprovision::{HostReprovisionInput, PowerDrainWaits, ReprovisionSettings, TimeWindow};
use hostfw_workflows::{host_reprovision_workflow_id, search_attributes as sa, HostReprovisionWorkflow};
use temporalio_client::errors::WorkflowStartError;
use temporalio_client::{Client, WorkflowIdConflictPolicy, WorkflowStartOptions};
use temporalio_common::search_attributes::SearchAttributes;

use crate::context::Context;
use crate::output;

/// Initiator recorded for requests made from this CLI (NICo's name).
pub const INITIATOR_CLI: &str = "AdminCli";

/// `YYYY-MM-DDTHH:MM:SS(Z|±HH:MM)` to unix milliseconds.
fn rfc3339_ms(key: &str, text: &str) -> anyhow::Result<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|e| anyhow!("machine_updater.instance_autoreboot_period.{key} = {text:?}: {e}"))
}

/// Workflow settings from the site config.
pub fn settings(ctx: &Context) -> anyhow::Result<ReprovisionSettings> {
    let hr = &ctx.site.host_reprovision;
    let fg = &ctx.site.firmware_global;
    let autoreboot_period = match &ctx.site.machine_updater.instance_autoreboot_period {
        Some(p) => {
            let window = TimeWindow { start_ms: rfc3339_ms("start", &p.start)?, end_ms: rfc3339_ms("end", &p.end)? };
            if window.start_ms >= window.end_ms {
                bail!("machine_updater.instance_autoreboot_period: start {} is not before end {}", p.start, p.end);
            }
            Some(window)
        }
        None => None,
    };
    Ok(ReprovisionSettings {
        verify_poll_interval_secs: hr.verify_poll_interval.as_secs().max(1),
        verify_max_polls: hr.verify_max_polls,
        task_timeout_secs: ctx.site.redfish.task_timeout.as_secs().max(1),
        bmc_healthy_reads: hr.bmc_healthy_reads,
        retry_interval_secs: fg.host_firmware_upgrade_retry_interval.as_secs().max(1),
        max_retries: hr.max_retries,
        max_reactivations: hr.max_reactivations,
        max_upload_retries: hr.max_upload_retries,
        requires_manual_upgrade: fg.requires_manual_upgrade,
        hgx_reboot_delay_secs: fg.hgx_bmc_gpu_reboot_delay.as_secs(),
        power_drain: PowerDrainWaits {
            after_off_secs: hr.power_drain_off_wait.as_secs(),
            after_cycle_secs: hr.power_drain_cycle_wait.as_secs(),
            after_on_secs: hr.power_drain_on_wait.as_secs(),
        },
        pre_update_wait_secs: hr.pre_update_wait.as_secs(),
        script_timeout_secs: hr.script_timeout.as_secs().max(1),
        autoreboot_period,
        heartbeat_timeout_secs: hr.heartbeat_timeout.as_secs().max(5),
    })
}

/// Create the request for `machine_id` and start its workflow. Errors say why it was refused.
pub async fn request(
    ctx: &Context,
    client: &Client,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
) -> anyhow::Result<String> {
    let Some(machine) = ctx.store.machine_get(machine_id).await? else {
        bail!("machine {machine_id} is not registered (see `hostfw machine list`)");
    };
    let settings = settings(ctx)?;
    let assigned = machine.state == HostState::Assigned.to_string()
        || (machine.state == HostState::HostReprovision.to_string() && machine.instance_id.is_some());
    let workflow_id = host_reprovision_workflow_id(machine_id);
    let new = NewRequest {
        machine_id: machine_id.to_string(),
        initiator: initiator.to_string(),
        update_message: message.clone(),
        workflow_id: Some(workflow_id.clone()),
    };
    match ctx.store.request_create(&new).await? {
        RequestCreate::Created(_) => {}
        RequestCreate::Exists(existing) => bail!(
            "host {machine_id} already has a reprovisioning request (initiator {}, requested {}, {}); \
             refusing a second one",
            existing.initiator,
            output::time(existing.requested_at_ms),
            if existing.started_at_ms.is_some() { "started" } else { "not started" }
        ),
    }
    let input = HostReprovisionInput {
        machine_id: machine_id.to_string(),
        initiator: initiator.to_string(),
        update_message: message.clone(),
        settings,
        assigned,
        instance_id: machine.instance_id.clone(),
    };
    let summary = match &message {
        Some(m) => format!("firmware reprovisioning of {machine_id}: {m}"),
        None => format!("firmware reprovisioning of {machine_id}"),
    };
    let options = WorkflowStartOptions::new(ctx.site.temporal.task_queue.clone(), workflow_id.clone())
        .id_conflict_policy(WorkflowIdConflictPolicy::Fail)
        .search_attributes(SearchAttributes::new([sa::MACHINE_ID.value_set(machine_id.to_string())]))
        .static_summary(summary)
        .build();
    match client.start_workflow(HostReprovisionWorkflow::run, input, options).await {
        Ok(_) => Ok(workflow_id),
        Err(e) => {
            ctx.store.request_delete(machine_id).await?;
            match e {
                WorkflowStartError::AlreadyStarted { .. } => Err(anyhow!(
                    "a reprovisioning workflow is already running for host {machine_id} ({workflow_id}); \
                     refusing a second one"
                )),
                other => Err(anyhow!("starting the reprovisioning workflow of {machine_id}: {other}")),
            }
        }
    }
}

/// `host reprovision set`.
pub async fn set(ctx: &Context, machine_id: &str, message: Option<String>) -> anyhow::Result<()> {
    let client = ctx.temporal().await?;
    let workflow_id = request(ctx, &client, machine_id, INITIATOR_CLI, message.clone()).await?;
    ctx.audit("host reprovision set", machine_id, message.as_deref().unwrap_or("")).await?;
    crate::outln!("reprovisioning requested for {machine_id}: workflow {workflow_id}");
    Ok(())
}

/// `host reprovision list`.
pub async fn list(ctx: &Context) -> anyhow::Result<()> {
    let requests = ctx.store.request_list().await?;
    let mut rows = Vec::new();
    for r in &requests {
        let machine = ctx.store.machine_get(&r.machine_id).await?;
        let substate = machine.and_then(|m| m.substate).unwrap_or_else(|| "-".to_string());
        rows.push(vec![
            r.machine_id.clone(),
            r.initiator.clone(),
            output::time(r.requested_at_ms),
            r.started_at_ms.map(output::time).unwrap_or_else(|| "Not Started".to_string()),
            if r.user_approval { "yes" } else { "no" }.to_string(),
            substate,
            r.update_message.clone().unwrap_or_default(),
        ]);
    }
    output::print(
        ctx.format,
        &requests,
        &["MACHINE", "INITIATOR", "REQUESTED", "STARTED", "APPROVED", "SUBSTATE", "MESSAGE"],
        rows,
    )
}
