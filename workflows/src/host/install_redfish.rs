//! The Redfish route: precheck and upload each artifact, follow the BMC's task, then activate and
//! verify once after the last artifact.

use hostfw_model::{ComponentType, HostModel, HostSubstate, Matcher, Verification};
use temporalio_workflow::{ActivityExecutionError, RetryState, WorkflowResult};

use crate::contracts::*;
use crate::host::deferred;
use crate::host::infrastructure::through_faults;
use crate::host::steps::{enter, reason, refresh_inventory, ComponentInstall, Ctx, StepEnd};
use crate::host::verify::activate_and_verify;
use crate::options;
use crate::step_failure::{failed_result, UPDATE_TASK_FAILED};

/// True when the activity failed in a way no retry can fix (the BMC refused, the artifact is
/// missing): the attempt fails. Otherwise the failure was transient and retries ran out.
fn is_permanent(err: &ActivityExecutionError) -> bool {
    matches!(err, ActivityExecutionError::Failed(f) if f.retry_state() == RetryState::NonRetryableFailure)
}

/// Install `component` at `target` over Redfish.
pub(crate) async fn install(ctx: &Ctx, job: &ComponentInstall<'_>) -> WorkflowResult<StepEnd> {
    let ComponentInstall { settings, model, machine_id, component, target, entry } = *job;
    let matcher: Matcher = match model.components.get(&component) {
        Some(c) => c.current_version_reported_as.clone(),
        None => return Ok(StepEnd::Failed(format!("component {component} vanished from the catalog entry"))),
    };
    let artifacts = entry.artifacts();
    if artifacts.is_empty() {
        return Ok(StepEnd::Failed(format!(
            "component {component} version {target}: the catalog entry names no artifact (filename/filenames)"
        )));
    }
    let count = artifacts.len() as u32;
    for (index, artifact) in artifacts.iter().enumerate() {
        let index = index as u32;
        enter(
            ctx,
            HostSubstate::WaitingForUpload,
            &format!(
                "waiting for a site upload slot (firmware_global.max_uploads) to upload {component} {target} \
                 (artifact {}/{count}: {artifact})",
                index + 1
            ),
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
            precheck: (index == 0).then(|| Precheck { matcher: matcher.clone(), target_version: target.to_string() }),
            records: deferred::take_records(ctx),
        };
        let summary = format!("upload {component} {target} ({}/{count}) to {machine_id}", index + 1);
        let options = options::summarized(options::upload(settings.heartbeat()), summary.clone());
        let run = move || ctx.execute_activity(HostActivities::upload, upload.clone(), options.clone());
        let accepted = match through_faults(ctx, &summary, run).await? {
            Ok(r) => r,
            Err(e) if is_permanent(&e) => return Ok(StepEnd::Failed(reason("upload refused", &e))),
            Err(e) => return Ok(StepEnd::Retry(reason("upload failed", &e))),
        };
        match accepted {
            UploadResult::AlreadyAtTarget => {
                enter(ctx, HostSubstate::NewFirmwareReportedWait, "already at target: nothing uploaded").await?;
                return Ok(StepEnd::Done);
            }
            UploadResult::AlreadyStaged => {
                // Reported for single-artifact entries only: go straight to the activation.
                enter(
                    ctx,
                    HostSubstate::WaitingForFirmwareUpgrade,
                    &format!("the BMC already holds {component} {target} staged: nothing uploaded"),
                )
                .await?;
                break;
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
                let wait =
                    WaitTaskInput { machine_id: machine_id.to_string(), task, records: deferred::take_records(ctx) };
                let summary = format!("follow the BMC task of {component} {target}");
                let options = options::summarized(options::wait_task(settings), summary.clone());
                let run = move || ctx.execute_activity(HostActivities::wait_task, wait.clone(), options.clone());
                // A task that ended failed is a failed activity carrying its result (histories
                // recorded before that shape have it as a completed one): both are read alike.
                let result = match through_faults(ctx, &summary, run).await? {
                    Ok(r) => r,
                    Err(e) => match failed_result::<TaskResult>(&e, UPDATE_TASK_FAILED) {
                        Some(r) => r,
                        None => return Ok(StepEnd::Retry(reason("following the update task", &e))),
                    },
                };
                if !result.succeeded {
                    if result.vanished && vanished_but_applied(ctx, model, machine_id, component, target).await? {
                        continue;
                    }
                    let messages =
                        if result.messages.is_empty() { "no message".to_string() } else { result.messages.join("; ") };
                    return Ok(StepEnd::Failed(format!("update task ended {}: {messages}", result.state)));
                }
            }
        }
    }
    activate_and_verify(ctx, job).await
}

/// A task that vanished (404 before any final state) counts as done when the inventory already
/// reports the target.
async fn vanished_but_applied(
    ctx: &Ctx,
    model: &HostModel,
    machine_id: &str,
    component: ComponentType,
    target: &str,
) -> WorkflowResult<bool> {
    Ok(match refresh_inventory(ctx, machine_id).await? {
        Ok(report) => hostfw_model::verify(model, component, target, &report) == Verification::AllAtTarget,
        Err(_) => false,
    })
}
