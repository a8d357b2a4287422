//! Small building blocks shared by the parts of the host workflow: recording a substate,
//! reading inventory, running an activation plan, and turning activity errors into reasons.
//!
//! Deterministic code only (see the crate docs).

use std::time::Duration;

use hostfw_model::{ComponentType, FirmwareEntry, HostModel, HostState, HostSubstate, InventoryReport};
use temporalio_workflow::{ActivityExecutionError, TimerOptions, WorkflowContext, WorkflowResult};

use crate::contracts::*;
use crate::host::activation::{preflight_steps, ActivationAction};
use crate::host::deferred;
use crate::host::host_reprovision::HostReprovisionWorkflow;
use crate::host::infrastructure::through_faults;
use crate::host::settings::ReprovisionSettings;
use crate::options;

pub(crate) type Ctx = WorkflowContext<HostReprovisionWorkflow>;

/// How one install or attempt ended, short of a workflow-level error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepEnd {
    /// It worked; go on.
    Done,
    /// A transient problem: go back to firmware checking and try again (bounded by the caller).
    Retry(String),
    /// The attempt failed for this reason: FailedFirmwareUpgrade.
    Failed(String),
}

/// One component's installation as the attempt chose it: what each install route, and the
/// activation and verification after it, work on.
#[derive(Clone, Copy)]
pub(crate) struct ComponentInstall<'a> {
    pub settings: &'a ReprovisionSettings,
    /// The host's catalog entry (its matchers and activation settings).
    pub model: &'a HostModel,
    pub machine_id: &'a str,
    pub component: ComponentType,
    /// The catalog's desired version.
    pub target: &'a str,
    /// The catalog entry of `target` (artifacts, script, activation).
    pub entry: &'a FirmwareEntry,
}

/// Record a substate: in the workflow state (query) now; the search attribute (Web UI) and the
/// site database (CLI, metrics) with the next activity or wait (`host::deferred`).
pub(crate) async fn enter(ctx: &Ctx, substate: HostSubstate, message: &str) -> WorkflowResult<()> {
    let (machine_id, component, target_version) = ctx.state_mut(|s| {
        s.status.enter(substate, message);
        (s.status.machine_id.clone(), s.status.component, s.status.target_version.clone())
    });
    let record = SubstateUpdate {
        machine_id,
        state: HostState::HostReprovision,
        substate,
        message: message.to_string(),
        component,
        target_version,
    };
    deferred::defer_record(ctx, record);
    Ok(())
}

/// Read the host's inventory (and store it as its explored report). A read that fails for an
/// infrastructure reason is read again (`infrastructure::through_faults`).
pub(crate) async fn refresh_inventory(
    ctx: &Ctx,
    machine_id: &str,
) -> WorkflowResult<Result<InventoryReport, ActivityExecutionError>> {
    let settings = ctx.state(|s| s.input.settings.clone());
    let summary = format!("read the Redfish inventory of {machine_id}");
    let options = options::summarized(options::inventory(&settings), summary.clone());
    let input = InventoryRead { machine_id: machine_id.to_string(), records: deferred::take_records(ctx) };
    through_faults(ctx, &summary, move || {
        ctx.execute_activity(HostActivities::refresh_inventory, input.clone(), options.clone())
    })
    .await
}

/// A readable reason from a failed activity: the activity's own message, not the SDK wrapper.
pub(crate) fn reason(what: &str, err: &ActivityExecutionError) -> String {
    match err {
        ActivityExecutionError::Failed(f) => {
            let mut message = f.failure().message.clone();
            let mut cause = f.failure().cause.as_deref();
            while let Some(c) = cause {
                if !c.message.is_empty() {
                    message = c.message.clone();
                }
                cause = c.cause.as_deref();
            }
            format!("{what}: {message}")
        }
        other => format!("{what}: {other}"),
    }
}

/// Durable wait with a summary the Web UI shows.
pub(crate) async fn wait(ctx: &Ctx, secs: u64, summary: &str) -> WorkflowResult<()> {
    deferred::flush(ctx).await?;
    let options = TimerOptions::builder(Duration::from_secs(secs)).summary(summary.to_string()).build();
    ctx.timer(options).await;
    Ok(())
}

/// Check `steps` against what the BMC allows, before any of them runs (infrastructure faults
/// waited out). `Some(reason)` when the plan cannot be carried out.
async fn preflight(
    ctx: &Ctx,
    machine_id: &str,
    steps: Vec<ActivationStep>,
    settings: &ReprovisionSettings,
) -> WorkflowResult<Option<String>> {
    let summary = format!("check the BMC of {machine_id} allows the {} activation steps", steps.len());
    let options = options::summarized(options::preflight(settings), summary.clone());
    let input = PreflightInput {
        machine_id: machine_id.to_string(),
        steps,
        waits: settings.bmc_waits,
        records: deferred::take_records(ctx),
    };
    let run = move || ctx.execute_activity(HostActivities::activation_preflight, input.clone(), options.clone());
    Ok(through_faults(ctx, &summary, run).await?.err().map(|e| reason("activation preflight", &e)))
}

/// Run one activation step as an activity (infrastructure faults waited out).
async fn activation_step(
    ctx: &Ctx,
    machine_id: &str,
    step: ActivationStep,
    settings: &crate::host::settings::ReprovisionSettings,
) -> WorkflowResult<Result<(), ActivityExecutionError>> {
    let summary = format!("{step:?} on {machine_id}");
    let options = options::summarized(options::activation(&step, settings), summary.clone());
    let input = ActivateInput {
        machine_id: machine_id.to_string(),
        step,
        waits: settings.bmc_waits,
        records: deferred::take_records(ctx),
    };
    let run = move || ctx.execute_activity(HostActivities::activate, input.clone(), options.clone());
    through_faults(ctx, &summary, run).await
}

/// Run an activation plan: steps as activities, waits as durable timers. A plan of several steps
/// is checked against what the BMC allows first (the power preflight). A step that fails while
/// the plan has the host powered off (a ForceOff succeeded, no On since) powers it back on first:
/// a host is never left off by a failed activation.
pub(crate) async fn run_plan(ctx: &Ctx, machine_id: &str, plan: Vec<ActivationAction>) -> WorkflowResult<StepEnd> {
    let settings = ctx.state(|s| s.input.settings.clone());
    if let Some(steps) = preflight_steps(&plan) {
        if let Some(why) = preflight(ctx, machine_id, steps, &settings).await? {
            return Ok(StepEnd::Failed(why));
        }
    }
    let mut powered_off = false;
    for action in plan {
        match action {
            ActivationAction::Step(step) => {
                let kind = step.clone();
                match activation_step(ctx, machine_id, step, &settings).await? {
                    Ok(()) => match kind {
                        ActivationStep::PowerOff => powered_off = true,
                        ActivationStep::PowerOn => powered_off = false,
                        _ => {}
                    },
                    Err(e) => {
                        let mut why = reason("activation", &e);
                        if powered_off {
                            match activation_step(ctx, machine_id, ActivationStep::PowerOn, &settings).await? {
                                Ok(()) => why.push_str("; the host was powered back on"),
                                Err(e) => why
                                    .push_str(&format!("; powering the host back on failed too: {}", reason("On", &e))),
                            }
                        }
                        return Ok(StepEnd::Failed(why));
                    }
                }
            }
            ActivationAction::Wait { secs, reason } => wait(ctx, secs, &reason).await?,
        }
    }
    Ok(StepEnd::Done)
}
