//! `managed-host show`: state, substate, component, target and recent history of one host.
//!
//! The site database gives state and history; the host's workflow (when one exists) answers its
//! `status` query for the component and target it is working on.

use std::time::Duration;

use anyhow::bail;
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow, HostStatus};
use serde::Serialize;
use temporalio_client::WorkflowQueryOptions;

use crate::context::Context;
use crate::output;

#[derive(Serialize)]
struct HostView {
    machine: hostfw_store::Machine,
    request: Option<hostfw_store::Request>,
    health_reports: Vec<hostfw_store::HealthReport>,
    workflow_id: String,
    workflow: Option<HostStatus>,
    history: Vec<hostfw_store::HistoryEntry>,
}

async fn query_status(ctx: &Context, machine_id: &str) -> Option<HostStatus> {
    let client = ctx.temporal().await.ok()?;
    let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
    let query = handle.query(HostReprovisionWorkflow::status, (), WorkflowQueryOptions::default());
    tokio::time::timeout(Duration::from_secs(5), query).await.ok()?.ok()
}

/// `managed-host show <machine-id>`.
pub async fn show(ctx: &Context, machine_id: &str, history_count: u32) -> anyhow::Result<()> {
    let Some(machine) = ctx.store.machine_get(machine_id).await? else {
        bail!("machine {machine_id} is not registered (see `hostfw machine list`)");
    };
    let view = HostView {
        request: ctx.store.request_get(machine_id).await?,
        health_reports: ctx.store.health_reports_for(machine_id).await?,
        workflow_id: host_reprovision_workflow_id(machine_id),
        workflow: query_status(ctx, machine_id).await,
        history: ctx.store.history_list(machine_id, history_count).await?,
        machine,
    };
    if ctx.format == crate::cli::Format::Json {
        crate::outln!("{}", serde_json::to_string_pretty(&view)?);
        return Ok(());
    }
    let m = &view.machine;
    crate::outln!("Machine:   {}", m.id);
    crate::outln!("BMC:       {}", m.bmc_address);
    crate::outln!("Vendor:    {}  Model: {}", m.vendor.as_deref().unwrap_or("-"), m.model.as_deref().unwrap_or("-"));
    crate::outln!("State:     {}", m.state);
    crate::outln!("Substate:  {}", m.substate.map_or("-", |s| s.as_str()));
    if let Some(w) = &view.workflow {
        let component = w.component.map(|c| c.to_string()).unwrap_or_else(|| "-".into());
        crate::outln!("Component: {component}  Target: {}", w.target_version.as_deref().unwrap_or("-"));
        for c in &w.installed {
            crate::outln!("Installed: {} {} -> {}", c.component, c.from.join(","), c.to);
        }
    }
    match &view.request {
        Some(r) => crate::outln!(
            "Request:   {} at {}, {}",
            r.initiator,
            output::time(r.requested_at_ms),
            r.started_at_ms.map(|t| format!("started {}", output::time(t))).unwrap_or_else(|| "not started".into())
        ),
        None => crate::outln!("Request:   none"),
    }
    for h in &view.health_reports {
        crate::outln!("Health:    {} {} ({})", h.source, h.alert_id, h.classifications.join(", "));
    }
    crate::outln!("Workflow:  {}", view.workflow_id);
    crate::outln!("\nHistory (newest first):");
    let rows = view
        .history
        .iter()
        .map(|h| {
            vec![
                format!("  {}", output::time(h.at_ms)),
                h.state.to_string(),
                h.substate.map(|s| s.to_string()).unwrap_or_default(),
                h.message.clone(),
            ]
        })
        .collect::<Vec<_>>();
    crate::out!("{}", output::table(&["  TIME", "STATE", "SUBSTATE", "MESSAGE"], &rows));
    Ok(())
}

#[derive(Serialize)]
struct MachineView {
    machine: hostfw_store::Machine,
    request: Option<hostfw_store::Request>,
    history: Vec<hostfw_store::HistoryEntry>,
}

/// `machine show <machine-id> --history-count N`.
pub async fn machine_show(ctx: &Context, machine_id: &str, history_count: u32) -> anyhow::Result<()> {
    let Some(machine) = ctx.store.machine_get(machine_id).await? else {
        bail!("machine {machine_id} is not registered (see `hostfw machine list`)");
    };
    let view = MachineView {
        request: ctx.store.request_get(machine_id).await?,
        history: ctx.store.history_list(machine_id, history_count).await?,
        machine,
    };
    if ctx.format == crate::cli::Format::Json {
        crate::outln!("{}", serde_json::to_string_pretty(&view)?);
        return Ok(());
    }
    let m = &view.machine;
    crate::outln!("ID:                  {}", m.id);
    crate::outln!("BMC:                 {}", m.bmc_address);
    crate::outln!("STATE:               {}{}", m.state, m.substate.map(|s| format!(" / {s}")).unwrap_or_default());
    crate::outln!("INSTANCE:            {}", m.instance_id.as_deref().unwrap_or("-"));
    let auto = match m.auto_update {
        Some(true) => "true",
        Some(false) => "false",
        None => "Default",
    };
    crate::outln!("FIRMWARE AUTOUPDATE: {auto}");
    if let Some(r) = &view.request {
        crate::outln!("REQUEST:             {} (retries {})", r.initiator, r.retry_count);
    }
    crate::outln!("\nHISTORY (newest first):");
    let rows = view
        .history
        .iter()
        .map(|h| {
            vec![
                format!("  {}", output::time(h.at_ms)),
                match &h.substate {
                    Some(sub) => format!("{}/{sub}", h.state),
                    None => h.state.to_string(),
                },
                h.message.clone(),
            ]
        })
        .collect::<Vec<_>>();
    crate::out!("{}", output::table(&["  TIME", "STATE", "REASON"], &rows));
    Ok(())
}
