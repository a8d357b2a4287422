//! `managed-host show`: state, substate, component, target and recent history of one host.
//!
//! The site database gives state and history; the host's workflow (when one exists) answers its
//! `status` query for the component and target it is working on (`live_status`). Its firmware
//! against the catalog and whether anything is installable are the scheduler's own rules
//! (`hostfw_model::gates::firmware_gate`, as `plan` shows them).

use anyhow::bail;
use hostfw_model::gates::{self, FirmwareStatus};
use hostfw_workflows::{host_reprovision_workflow_id, HostStatus};
use serde::Serialize;

use crate::catalog_fallback::{self, CatalogWarning};
use crate::context::Context;
use crate::live_status::query_status;
use crate::output;

/// `managed-host show` (`GET /v1/managed-hosts/{id}` answers it).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostView {
    machine: hostfw_store::Machine,
    request: Option<hostfw_store::Request>,
    health_reports: Vec<hostfw_store::HealthReport>,
    workflow_id: String,
    workflow: Option<HostStatus>,
    /// Its firmware against the catalog, as the scheduler sees it (absent when the host is not in
    /// the site view).
    #[serde(skip_serializing_if = "Option::is_none")]
    firmware: Option<FirmwareStatus>,
    /// Why the scheduler would not start it for its firmware (e.g. "nothing installable: ..."),
    /// when it would not.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_installable: Option<String>,
    /// Catalog files left out because they do not load (only when some are).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    catalog_warnings: Vec<CatalogWarning>,
    /// Why the workflow's live status could not be read (Temporal unreachable, no worker polls
    /// the task queue, no answer in time); absent when it was read or there is no workflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    live_status_error: Option<String>,
    history: Vec<hostfw_store::HistoryEntry>,
    /// Who approved its recent requests and when (assigned hosts), newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    approvals: Vec<hostfw_store::Approval>,
    /// Held after its approval deadline passed under `skip`, while the hold lasts.
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_hold: Option<hostfw_model::gates::ApprovalHold>,
}

/// `managed-host show <machine-id>`.
pub async fn show(ctx: &Context, machine_id: &str, history_count: u32) -> anyhow::Result<()> {
    let Some(machine) = ctx.store.machine_get(machine_id).await? else {
        bail!("machine {machine_id} is not registered (see `hostfw machine list`)");
    };
    let (workflow, live_status_error) = match query_status(ctx, machine_id).await {
        Ok(status) => (status, None),
        Err(e) => (None, Some(e)),
    };
    let (catalog, catalog_warnings) = catalog_fallback::effective_or_without_broken(ctx).await?;
    catalog_fallback::warn(ctx, &catalog_warnings);
    let site_view = hostfw_activities::site_view::read(&ctx.store, &catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let firmware = site_view.input.hosts.iter().find(|h| h.machine_id == machine_id).map(|h| h.firmware.clone());
    let not_installable =
        firmware.as_ref().and_then(|f| gates::firmware_gate(f).err()).map(|reason| reason.for_host(machine_id));
    let view = HostView {
        firmware,
        not_installable,
        catalog_warnings,
        request: ctx.store.request_get(machine_id).await?,
        health_reports: ctx.store.health_reports_for(machine_id).await?,
        workflow_id: host_reprovision_workflow_id(machine_id),
        workflow,
        live_status_error,
        history: ctx.store.history_list(machine_id, history_count).await?,
        approvals: ctx.store.approvals_of(machine_id).await?.into_iter().take(3).collect(),
        approval_hold: ctx
            .store
            .approval_holds()
            .await?
            .into_iter()
            .find(|h| h.machine_id == machine_id && h.until_ms > hostfw_store::now_ms()),
        machine,
    };
    if ctx.format == crate::cli::Format::Json {
        crate::outln!("{}", crate::json_contract::to_json(&view)?);
        return Ok(());
    }
    let m = &view.machine;
    crate::outln!("Machine:   {}", m.id);
    crate::outln!("BMC:       {}", m.bmc_address);
    crate::outln!("Vendor:    {}  Model: {}", m.vendor.as_deref().unwrap_or("-"), m.model.as_deref().unwrap_or("-"));
    crate::outln!("State:     {}", m.state);
    let substate = match &view.request {
        Some(r) => crate::reprovision::substate_text(m.substate, r, ctx.site.host_reprovision.max_retries),
        None => m.substate.map_or_else(|| "-".to_string(), |s| s.to_string()),
    };
    crate::outln!("Substate:  {substate}");
    // Issue 27: a host a freeze holds before its next component says which freeze, and who set it.
    if m.substate == Some(hostfw_model::HostSubstate::HeldByFreeze) {
        let held = view
            .workflow
            .as_ref()
            .and_then(|w| w.events.iter().rev().find(|e| e.substate == hostfw_model::HostSubstate::HeldByFreeze));
        if let Some(e) = held {
            crate::outln!("Held:      {}", e.message);
        }
    }
    match (&view.not_installable, &view.firmware) {
        (Some(why), _) => crate::outln!("Firmware:  {why}"),
        (None, Some(FirmwareStatus::Compliant)) => crate::outln!("Firmware:  compliant with the catalog"),
        (None, Some(FirmwareStatus::Drifted { differing, .. })) => {
            let names: Vec<String> = differing.iter().map(ToString::to_string).collect();
            crate::outln!("Firmware:  drifted: {}", names.join(", "))
        }
        (None, _) => {}
    }
    if let Some(w) = &view.workflow {
        // What the host works on only while it has a request; a finished run shows what it installed.
        if view.request.is_some() {
            let component = w.component.map(|c| c.to_string()).unwrap_or_else(|| "-".into());
            crate::outln!("Component: {component}  Target: {}", w.target_version.as_deref().unwrap_or("-"));
        }
        let label = if view.request.is_some() { "Installed:" } else { "Last run: " };
        for c in &w.installed {
            crate::outln!("{label} {} {} -> {}", c.component, c.from.join(","), c.to);
        }
    }
    if let Some(e) = &view.live_status_error {
        crate::outln!("Live:      unavailable ({e}); the rest is from the site database");
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
    if let Some(a) = view.approvals.first() {
        crate::outln!(
            "Approved:  by {} at {} (the request of {})",
            a.approved_by,
            output::time(a.approved_at_ms),
            output::time(a.requested_at_ms)
        );
    }
    if let Some(h) = &view.approval_hold {
        crate::outln!(
            "Held:      until {}: its tenant let the approval deadline pass ({}, policy skip)",
            output::time(h.until_ms),
            output::time(h.skipped_at_ms)
        );
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

/// `machine show` (its schema is the API's).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MachineView {
    machine: hostfw_store::Machine,
    /// The machine's auto-update policy and what decides it.
    auto_update: crate::auto_update::AutoUpdatePolicy,
    /// Its reprovisioning request, when it has one.
    request: Option<hostfw_store::Request>,
    /// Its state history, newest first.
    history: Vec<hostfw_store::HistoryEntry>,
}

/// `machine show <machine-id> --history-count N`.
pub async fn machine_show(ctx: &Context, machine_id: &str, history_count: u32) -> anyhow::Result<()> {
    let Some(machine) = ctx.store.machine_get(machine_id).await? else {
        bail!("machine {machine_id} is not registered (see `hostfw machine list`)");
    };
    let view = MachineView {
        auto_update: crate::auto_update::AutoUpdatePolicy::of(&ctx.site, machine_id, machine.auto_update),
        request: ctx.store.request_get(machine_id).await?,
        history: ctx.store.history_list(machine_id, history_count).await?,
        machine,
    };
    if ctx.format == crate::cli::Format::Json {
        crate::outln!("{}", crate::json_contract::to_json(&view)?);
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
    crate::outln!("FIRMWARE AUTOUPDATE: {auto}, {}", view.auto_update.effective_text());
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
