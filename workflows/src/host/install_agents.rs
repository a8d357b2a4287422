//! The two script routes: Scout (a packaged script run on the host by its agent, then activation
//! and verification like Redfish) and the Core-local script (run on the worker; it owns install
//! and activation, so the loop returns straight to inventory checking).

use std::time::Duration;

use hostfw_model::{verify, HostSubstate, Verification};
use temporalio_workflow::{ActivityOptions, RetryPolicy, WorkflowResult};

use crate::contracts::*;
use crate::host::deferred;
use crate::host::steps::{enter, reason, refresh_inventory, ComponentInstall, Ctx, StepEnd};
use crate::host::verify::activate_and_verify;
use crate::scout::{scout_task_queue, ScoutActivities, ScoutResult, ScoutTask};
use crate::step_failure::{failed_result, SCRIPT_FAILED};
use crate::tunables::SCOUT_PICKUP;

fn describe_failure(exit_code: Option<i32>, error: &Option<String>, stderr: &str) -> String {
    let mut parts = Vec::new();
    if let Some(e) = error {
        parts.push(e.clone());
    }
    if let Some(code) = exit_code {
        parts.push(format!("exit code {code}"));
    }
    let tail: String = stderr.trim().lines().last().unwrap_or("").chars().take(300).collect();
    if !tail.is_empty() {
        parts.push(format!("stderr: {tail}"));
    }
    if parts.is_empty() {
        "no detail".to_string()
    } else {
        parts.join("; ")
    }
}

/// Scout route: dispatch the task to the host's agent, then activate and verify.
pub(crate) async fn install_scout(ctx: &Ctx, job: &ComponentInstall<'_>, task: ScoutTask) -> WorkflowResult<StepEnd> {
    let ComponentInstall { settings, machine_id, component, target, .. } = *job;
    let queue = scout_task_queue(machine_id);
    enter(
        ctx,
        HostSubstate::WaitingForScoutUpgrade,
        &format!("Scout task {} on {queue}: {component} {target}", task.upgrade_task_id),
    )
    .await?;
    // Downloads (script + each artifact) and the script itself, plus a margin for the agent.
    let budget =
        task.execution_timeout_secs + task.artifact_download_timeout_secs * (task.artifacts.len() as u64 + 1) + 300;
    let options = ActivityOptions::with_start_to_close_timeout(Duration::from_secs(budget))
        .schedule_to_start_timeout(SCOUT_PICKUP)
        .heartbeat_timeout(settings.heartbeat())
        .task_queue(queue.clone())
        // A retry is safe: Scout runs a task id at most once and a retry reports the first run's
        // result (or, after an agent crash, an interrupted task), so it never flashes twice. The
        // second attempt is what carries that report back after a killed or restarted agent.
        .retry_policy(RetryPolicy::builder().maximum_attempts(2).build())
        .summary(format!("Scout: {component} {target} on {machine_id}"))
        .build();
    deferred::flush(ctx).await?;
    // A failed script is a failed activity carrying its result (a Scout before that shape
    // completed with `success: false`): both are read alike.
    let result: ScoutResult = match ctx.execute_activity(ScoutActivities::run_upgrade, task, options).await {
        Ok(r) => r,
        Err(e) => match failed_result::<ScoutResult>(&e, SCRIPT_FAILED) {
            Some(r) => r,
            None => return Ok(StepEnd::Failed(reason(&format!("Scout on {queue}"), &e))),
        },
    };
    if !result.success {
        return Ok(StepEnd::Failed(format!(
            "Scout reported failure for {component} {target}: {}",
            describe_failure(result.exit_code, &result.error, &result.stderr)
        )));
    }
    activate_and_verify(ctx, job).await
}

/// Core-local script route. A worker that dies mid-script ends the attempt through the heartbeat
/// timeout (never a host stuck in WaitingForScript); the inventory is then re-read, since the
/// script may have finished. The script itself may still be running then: the next run of it
/// waits for it and fails with `EarlierScriptRun` instead of starting it again, which comes here
/// too and is judged by the inventory the same way.
pub(crate) async fn install_script(ctx: &Ctx, job: &ComponentInstall<'_>, script: String) -> WorkflowResult<StepEnd> {
    let ComponentInstall { settings, model, machine_id, component, target, .. } = *job;
    enter(ctx, HostSubstate::WaitingForScript, &format!("running {script} on the worker: {component} {target}"))
        .await?;
    let input = ScriptInput {
        machine_id: machine_id.to_string(),
        script: script.clone(),
        component,
        target_version: target.to_string(),
        timeout_secs: settings.script_timeout_secs,
    };
    // One attempt only: a script is not idempotent, and a lost attempt is judged by the inventory.
    let options = ActivityOptions::with_start_to_close_timeout(Duration::from_secs(settings.script_timeout_secs + 60))
        .heartbeat_timeout(settings.heartbeat())
        .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
        .summary(format!("script {script}: {component} {target}"))
        .build();
    deferred::flush(ctx).await?;
    // A script that ran and failed is a failed activity carrying its result (before that shape,
    // a completed one with `success: false`): both are read alike, without the inventory read an
    // interrupted script gets.
    let outcome = ctx.execute_activity(HostActivities::run_script, input, options).await;
    let outcome = match outcome {
        Err(e) => failed_result::<ScriptResult>(&e, SCRIPT_FAILED).ok_or(e),
        ok => ok,
    };
    match outcome {
        Ok(r) if r.success => Ok(StepEnd::Done),
        Ok(r) => Ok(StepEnd::Failed(format!(
            "script {script} failed for {component} {target}: {}",
            describe_failure(r.exit_code, &r.error, &r.stderr)
        ))),
        Err(e) => {
            let why = reason(&format!("script {script} interrupted"), &e);
            match refresh_inventory(ctx, machine_id).await? {
                Ok(report) if verify(model, component, target, &report) == Verification::AllAtTarget => {
                    Ok(StepEnd::Done)
                }
                _ => Ok(StepEnd::Failed(why)),
            }
        }
    }
}
