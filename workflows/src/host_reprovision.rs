//! The `HostReprovision` workflow: one per host, it brings every component of the host to the
//! catalog's default version (seed, "Update workflow").
//!
//! Protect → (CheckingFirmware → select → install → activate → verify)* → restore. Decisions are
//! `hostfw_model` calls on activity results; effects are activities. This file must stay
//! deterministic: no clocks, randomness or I/O (see the crate docs).

use std::time::Duration;

use hostfw_model::{
    select_component, verify, ComponentType, FirmwareEntry, HostModel, HostState, HostSubstate,
    InventoryReport, Matcher, Selection, Verification,
};
use serde::{Deserialize, Serialize};
use temporalio_common::error::ApplicationFailure;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_workflow::{WorkflowContext, WorkflowContextView, WorkflowResult, WorkflowTermination};

use crate::activation::activation_steps;
use crate::contracts::*;
use crate::options;
use crate::search_attributes as sa;
use crate::status::{HostOutcome, HostStatus, InstalledComponent};

/// Timings of the per-host loop, from the site config (`[host_reprovision]`, `[redfish]`).
/// They travel in the workflow input so that a replay sees the values the run started with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReprovisionSettings {
    /// Pause between inventory reads while waiting for the new version to be reported.
    pub verify_poll_interval_secs: u64,
    /// Inventory reads after activation before the attempt counts as failed.
    pub verify_max_polls: u32,
    /// Bound on one Redfish update task.
    pub task_timeout_secs: u64,
    /// Consecutive healthy reads required after a BMC reset.
    pub bmc_healthy_reads: u32,
}

impl Default for ReprovisionSettings {
    fn default() -> Self {
        ReprovisionSettings {
            verify_poll_interval_secs: 10,
            verify_max_polls: 60,
            task_timeout_secs: 7200,
            bmc_healthy_reads: 3,
        }
    }
}

/// Input of the workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostReprovisionInput {
    pub machine_id: String,
    /// `AdminCli` for `host reprovision set`, `Automated` for the scheduler.
    pub initiator: String,
    pub update_message: Option<String>,
    pub settings: ReprovisionSettings,
}

/// Per-host firmware reprovisioning. Query `status` for the current substate.
#[workflow]
pub struct HostReprovisionWorkflow {
    input: HostReprovisionInput,
    status: HostStatus,
}

type Ctx = WorkflowContext<HostReprovisionWorkflow>;

#[workflow_methods]
impl HostReprovisionWorkflow {
    #[init]
    pub fn new(_ctx: &WorkflowContextView, input: HostReprovisionInput) -> Self {
        let status = HostStatus::new(&input.machine_id);
        HostReprovisionWorkflow { input, status }
    }

    #[run(name = "HostReprovision")]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<HostOutcome> {
        let input = ctx.state(|s| s.input.clone());
        let machine_id = input.machine_id.clone();
        ctx.upsert_search_attributes([sa::MACHINE_ID.value_set(machine_id.clone())]);

        let host = ctx
            .execute_activity(
                HostActivities::protect,
                ProtectInput { machine_id: machine_id.clone(), initiator: input.initiator.clone() },
                options::bookkeeping(),
            )
            .await?;

        let mut repeat = false;
        let mut labelled = false;
        loop {
            let substate =
                if repeat { HostSubstate::CheckingFirmwareRepeatV2 } else { HostSubstate::CheckingFirmwareV2 };
            enter(ctx, substate, "refreshing inventory and selecting the next component").await?;
            let report = refresh_inventory(ctx, &machine_id).await?;
            if !labelled {
                ctx.upsert_search_attributes([
                    sa::VENDOR.value_set(report.vendor.clone()),
                    sa::MODEL.value_set(report.model.clone()),
                ]);
                labelled = true;
            }
            let lookup = CatalogQuery { vendor: report.vendor.clone(), model: report.model.clone() };
            let model = ctx
                .execute_activity(HostActivities::catalog_lookup, lookup, options::bookkeeping())
                .await?;
            let Some(model) = model else {
                let message = format!(
                    "no catalog entry for vendor {:?} model {:?}: nothing to compare with",
                    report.vendor, report.model
                );
                restore(ctx, &host, &message).await?;
                return Ok(HostOutcome::NoCatalogEntry { vendor: report.vendor, model: report.model });
            };
            match select_component(&model, &report) {
                Selection::Compliant => break,
                Selection::NoInventoryMatch { component, matcher } => {
                    let reason = format!(
                        "component {component}: no inventory entry matches current_version_reported_as {matcher:?}; \
                         fix the catalog matcher or the BMC inventory"
                    );
                    return fail(ctx, &reason).await;
                }
                Selection::Install { component, target_version, entry, current } => {
                    install(ctx, &input.settings, &model, &machine_id, component, &target_version, &entry)
                        .await?;
                    ctx.state_mut(|s| {
                        s.status.installed.push(InstalledComponent {
                            component,
                            from: current,
                            to: target_version.clone(),
                        });
                        s.status.component = None;
                        s.status.target_version = None;
                    });
                    repeat = true;
                }
            }
        }

        let installed = ctx.state(|s| s.status.installed.clone());
        let message = if installed.is_empty() {
            "nothing differs from the catalog: no install needed".to_string()
        } else {
            let list: Vec<String> = installed.iter().map(|c| format!("{} {}", c.component, c.to)).collect();
            format!("compliant after installing {}", list.join(", "))
        };
        restore(ctx, &host, &message).await?;
        Ok(HostOutcome::Compliant { installed })
    }

    /// Current substate, component, target and recent transitions.
    #[query(name = "status")]
    pub fn status(&self, _ctx: &WorkflowContextView) -> HostStatus {
        self.status.clone()
    }
}

/// Record a substate: in the workflow state (query), the search attribute (Web UI) and the site
/// database (CLI, metrics).
async fn enter(ctx: &Ctx, substate: HostSubstate, message: &str) -> WorkflowResult<()> {
    let machine_id = ctx.state_mut(|s| {
        s.status.enter(substate, message);
        s.status.machine_id.clone()
    });
    ctx.upsert_search_attributes([sa::SUBSTATE.value_set(substate.to_string())]);
    ctx.execute_activity(
        HostActivities::record_substate,
        SubstateUpdate {
            machine_id,
            state: HostState::HostReprovision.to_string(),
            substate: substate.to_string(),
            message: message.to_string(),
        },
        options::bookkeeping(),
    )
    .await?;
    Ok(())
}

async fn refresh_inventory(ctx: &Ctx, machine_id: &str) -> WorkflowResult<InventoryReport> {
    Ok(ctx
        .execute_activity(HostActivities::refresh_inventory, machine_id.to_string(), options::inventory())
        .await?)
}

/// Install one component over Redfish, activate it and verify the new version.
async fn install(
    ctx: &Ctx,
    settings: &ReprovisionSettings,
    model: &HostModel,
    machine_id: &str,
    component: ComponentType,
    target: &str,
    entry: &FirmwareEntry,
) -> WorkflowResult<()> {
    ctx.state_mut(|s| {
        s.status.component = Some(component);
        s.status.target_version = Some(target.to_string());
    });
    ctx.upsert_search_attributes([sa::COMPONENT.value_set(component.to_string())]);
    let matcher: Matcher = match model.components.get(&component) {
        Some(c) => c.current_version_reported_as.clone(),
        None => return fail(ctx, &format!("component {component} vanished from the catalog entry")).await,
    };
    let artifacts = entry.artifacts();
    if artifacts.is_empty() {
        let reason = format!(
            "component {component} version {target}: the catalog entry names no artifact (filename/filenames)"
        );
        return fail(ctx, &reason).await;
    }
    let count = artifacts.len() as u32;
    for (index, artifact) in artifacts.iter().enumerate() {
        let index = index as u32;
        enter(
            ctx,
            HostSubstate::WaitingForUpload,
            &format!("uploading {component} {target} (artifact {}/{count}: {artifact})", index + 1),
        )
        .await?;
        let upload = UploadInput {
            machine_id: machine_id.to_string(),
            component,
            target_version: target.to_string(),
            artifact: artifact.clone(),
            artifact_index: index,
            artifact_count: count,
            install_only_specified: entry.install_only_specified,
            precheck: (index == 0)
                .then(|| Precheck { matcher: matcher.clone(), target_version: target.to_string() }),
        };
        match ctx.execute_activity(HostActivities::upload, upload, options::upload()).await? {
            UploadResult::AlreadyAtTarget => {
                enter(ctx, HostSubstate::NewFirmwareReportedWait, "already at target: nothing uploaded").await?;
                return Ok(());
            }
            UploadResult::Accepted { route, task } => {
                let Some(task) = task else {
                    enter(ctx, HostSubstate::WaitingForFirmwareUpgrade, &format!("{route}: BMC returned no task"))
                        .await?;
                    continue;
                };
                enter(
                    ctx,
                    HostSubstate::WaitingForFirmwareUpgrade,
                    &format!("{route} accepted; following task {}", task.monitor_uri),
                )
                .await?;
                let wait = WaitTaskInput { machine_id: machine_id.to_string(), task };
                let result = ctx
                    .execute_activity(
                        HostActivities::wait_task,
                        wait,
                        options::wait_task(Duration::from_secs(settings.task_timeout_secs)),
                    )
                    .await?;
                if !result.succeeded {
                    let reason = format!(
                        "update task ended {}: {}",
                        result.state,
                        if result.messages.is_empty() { "no message".to_string() } else { result.messages.join("; ") }
                    );
                    return fail(ctx, &reason).await;
                }
            }
        }
    }

    enter(ctx, HostSubstate::ResetForNewFirmware, &format!("activating {component} {target}")).await?;
    for step in activation_steps(component, entry, settings.bmc_healthy_reads) {
        let input = ActivateInput { machine_id: machine_id.to_string(), step };
        ctx.execute_activity(HostActivities::activate, input, options::activation()).await?;
    }

    enter(ctx, HostSubstate::NewFirmwareReportedWait, &format!("waiting for {component} to report {target}"))
        .await?;
    let mut last = String::new();
    for poll in 0..settings.verify_max_polls.max(1) {
        if poll > 0 {
            ctx.timer(Duration::from_secs(settings.verify_poll_interval_secs)).await;
        }
        let report = refresh_inventory(ctx, machine_id).await?;
        match verify(model, component, target, &report) {
            Verification::AllAtTarget => return Ok(()),
            Verification::Pending { reported } => {
                last = reported.iter().map(|(id, v)| format!("{id}={v}")).collect::<Vec<_>>().join(", ");
            }
            Verification::NoInventoryMatch { matcher } => {
                let reason = format!("component {component}: no inventory entry matches {matcher:?} after activation");
                return fail(ctx, &reason).await;
            }
        }
    }
    let reason = format!(
        "component {component} never reported {target} after {} inventory reads (last: {last})",
        settings.verify_max_polls
    );
    fail(ctx, &reason).await
}

/// Enter FailedFirmwareUpgrade with `reason` and end the run as failed. The request and the
/// health report stay: the host remains protected until an operator looks at it.
async fn fail<T>(ctx: &Ctx, reason: &str) -> WorkflowResult<T> {
    enter(ctx, HostSubstate::FailedFirmwareUpgrade, reason).await?;
    Err(WorkflowTermination::from(ApplicationFailure::non_retryable(reason.to_string())))
}

/// Return the host to its prior steady state and finish.
async fn restore(ctx: &Ctx, host: &HostContext, message: &str) -> WorkflowResult<()> {
    ctx.state_mut(|s| s.status.enter(HostSubstate::Restoring, message));
    ctx.upsert_search_attributes([sa::SUBSTATE.value_set(HostSubstate::Restoring.to_string())]);
    let input = RestoreInput {
        machine_id: host.machine_id.clone(),
        state: host.prior_state.clone(),
        message: message.to_string(),
    };
    ctx.execute_activity(HostActivities::restore, input, options::bookkeeping()).await?;
    ctx.state_mut(|s| s.status.enter(HostSubstate::Completed, message));
    ctx.upsert_search_attributes([sa::SUBSTATE.value_set(HostSubstate::Completed.to_string())]);
    Ok(())
}
