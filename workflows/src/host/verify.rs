//! Activation and verification of an installed component: run the activation plan, then re-read
//! the inventory until every matching entry reports the target (a version not reported is never
//! the target); re-activate a bounded number of times (NICo resets every 30 min forever), then
//! fail.

use std::time::Duration;

use hostfw_model::{verify, HostSubstate, Verification, VERSION_NOT_REPORTED};
use temporalio_workflow::WorkflowResult;

use crate::host::activation::{activation_plan, unrunnable};
use crate::host::deferred;
use crate::host::steps::{enter, reason, refresh_inventory, run_plan, ComponentInstall, Ctx, StepEnd};

/// Activate `component` and wait until every matching inventory entry reports `target`.
pub(crate) async fn activate_and_verify(ctx: &Ctx, job: &ComponentInstall<'_>) -> WorkflowResult<StepEnd> {
    let ComponentInstall { settings, model, machine_id, component, target, entry } = *job;
    let mut last = String::new();
    for round in 0..=settings.max_reactivations {
        let label = if round == 0 {
            format!("activating {component} {target}")
        } else {
            format!(
                "re-activating {component} {target} ({round}/{}): it still reports {last}",
                settings.max_reactivations
            )
        };
        enter(ctx, HostSubstate::ResetForNewFirmware, &label).await?;
        let plan = activation_plan(component, entry, settings);
        if let Some(why) = unrunnable(&plan, model) {
            return Ok(StepEnd::Failed(why));
        }
        if let StepEnd::Failed(r) = run_plan(ctx, machine_id, plan).await? {
            return Ok(StepEnd::Failed(r));
        }
        enter(ctx, HostSubstate::NewFirmwareReportedWait, &format!("waiting for {component} to report {target}"))
            .await?;
        for poll in 0..settings.verify_max_polls.max(1) {
            if poll > 0 {
                deferred::flush(ctx).await?;
                ctx.timer(Duration::from_secs(settings.verify_poll_interval_secs)).await;
            }
            let report = match refresh_inventory(ctx, machine_id).await? {
                Ok(r) => r,
                Err(e) => return Ok(StepEnd::Failed(reason("reading the inventory after activation", &e))),
            };
            match verify(model, component, target, &report) {
                Verification::AllAtTarget => {
                    ctx.state_mut(|s| s.fresh_report = Some(report));
                    return Ok(StepEnd::Done);
                }
                Verification::Pending { reported } => {
                    last = reported.iter().map(|(id, v)| format!("{id}={v}")).collect::<Vec<_>>().join(", ");
                }
                // Not a success: an unknown version proves nothing. Keep reading, then re-activate.
                Verification::VersionNotReported { members } => {
                    let list: Vec<String> = members.iter().map(ToString::to_string).collect();
                    last = format!("{VERSION_NOT_REPORTED} ({})", list.join(", "));
                }
                Verification::NoInventoryMatch { matcher } => {
                    return Ok(StepEnd::Failed(format!(
                        "component {component}: no inventory entry matches {matcher:?} after activation"
                    )));
                }
            }
        }
    }
    Ok(StepEnd::Failed(format!(
        "component {component} never reported {target} after {} activations of {} inventory reads each (last: {last})",
        settings.max_reactivations + 1,
        settings.verify_max_polls
    )))
}
