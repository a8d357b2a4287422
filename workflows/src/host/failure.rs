//! FailedFirmwareUpgrade and its way out (seed "Failures and recovery"): wait the retry interval
//! and try again, at most `max_retries` times for assigned and unassigned hosts alike; then stay
//! failed (exhausted) until an operator resets host reprovisioning. The count is persisted on the
//! host's request so the CLI and metrics see it. An abort (`host reprovision abort`) ends either
//! wait at once; the caller takes it.

use std::pin::pin;
use std::time::Duration;

use hostfw_model::HostSubstate;
use temporalio_workflow::{select, CancellableFuture, TimerOptions, WorkflowResult};

use crate::contracts::*;
use crate::host::deferred;
use crate::host::settings::HostReprovisionInput;
use crate::host::steps::{enter, Ctx};
use crate::options;

async fn record(ctx: &Ctx, machine_id: &str, retry_count: u32, exhausted: bool, message: String) -> WorkflowResult<()> {
    let (component, target_version, was_exhausted) = ctx.state_mut(|s| {
        let was = s.status.exhausted;
        s.status.retry_count = retry_count;
        s.status.exhausted = exhausted;
        (s.status.component, s.status.target_version.clone(), was)
    });
    if was_exhausted != exhausted {
        ctx.upsert_search_attributes([crate::search_attributes::RETRIES_EXHAUSTED.value_set(exhausted)]);
    }
    deferred::flush(ctx).await?;
    let record =
        RetryRecord { machine_id: machine_id.to_string(), retry_count, exhausted, message, component, target_version };
    ctx.execute_activity(HostActivities::record_retry, record, options::bookkeeping()).await?;
    Ok(())
}

/// Enter FailedFirmwareUpgrade for `reason`, then wait until the next attempt may start.
/// `retries` is the number of retries already used; it is updated. `resets_applied` is the count
/// of reset signals the caller has already applied to `retries`: any later one ends the wait.
pub(crate) async fn after_failure(
    ctx: &Ctx,
    input: &HostReprovisionInput,
    retries: &mut u32,
    reason: &str,
    resets_applied: u32,
) -> WorkflowResult<()> {
    let machine_id = input.machine_id.as_str();
    enter(ctx, HostSubstate::FailedFirmwareUpgrade, reason).await?;
    wait_under_current_limits(ctx, machine_id, retries, resets_applied).await
}

/// The record of a spent budget. The failure itself is the FailedFirmwareUpgrade entry just
/// before it: it is not repeated.
fn exhausted_message(max_retries: u32) -> String {
    format!("retry budget of {max_retries} spent; the host stays failed until `managed-host reset-host-reprovisioning`")
}

fn reset_message() -> String {
    "reset by an operator: firmware checking restarts now".to_string()
}

async fn read_limits(ctx: &Ctx, machine_id: &str) -> WorkflowResult<RetryLimits> {
    deferred::flush(ctx).await?;
    Ok(ctx.execute_activity(HostActivities::retry_limits, machine_id.to_string(), options::bookkeeping()).await?)
}

/// Wait the retry interval, or stay exhausted, under the limits of the worker's current site
/// config (read when the failure is recorded and again on `settings_changed`).
async fn wait_under_current_limits(
    ctx: &Ctx,
    machine_id: &str,
    retries: &mut u32,
    resets_seen: u32,
) -> WorkflowResult<()> {
    let reset = move |s: &crate::HostReprovisionWorkflow| s.reset_requests != resets_seen;
    let aborted = |s: &crate::HostReprovisionWorkflow| s.abort.is_some();
    let mut limits = read_limits(ctx, machine_id).await?;
    loop {
        let changes_seen = ctx.state(|s| s.settings_changes);
        let changed = move |s: &crate::HostReprovisionWorkflow| s.settings_changes != changes_seen;
        if *retries >= limits.max_retries {
            let message = exhausted_message(limits.max_retries);
            record(ctx, machine_id, *retries, true, message).await?;
            ctx.wait_condition(move |s| reset(s) || changed(s) || aborted(s)).await?;
            // An abort ends the wait (an exhausted host is aborted at once); the caller takes it.
            if ctx.state(aborted) {
                return Ok(());
            }
            if ctx.state(|s| reset(s)) {
                *retries = 0;
                record(ctx, machine_id, 0, false, reset_message()).await?;
                return Ok(());
            }
            limits = read_limits(ctx, machine_id).await?;
            continue;
        }
        *retries += 1;
        let message = format!("retry {}/{} in {} s", *retries, limits.max_retries, limits.retry_interval_secs);
        record(ctx, machine_id, *retries, false, message).await?;
        let started = crate::clock::now_ms(ctx);
        loop {
            let left_ms = (limits.retry_interval_secs as i64) * 1000 - (crate::clock::now_ms(ctx) - started);
            if left_ms <= 0 {
                return Ok(());
            }
            let changes_seen = ctx.state(|s| s.settings_changes);
            let changed = move |s: &crate::HostReprovisionWorkflow| s.settings_changes != changes_seen;
            let timer = ctx.timer(
                TimerOptions::builder(Duration::from_millis(left_ms as u64))
                    .summary(format!("host_firmware_upgrade_retry_interval before retry {}", *retries))
                    .build(),
            );
            let mut timer = pin!(timer);
            let woken = select! {
                r = ctx.wait_condition(move |s| reset(s) || changed(s) || aborted(s)) => { r?; true }
                _ = timer.as_mut() => false,
            };
            if !woken {
                return Ok(());
            }
            timer.cancel();
            if ctx.state(aborted) {
                return Ok(());
            }
            if ctx.state(|s| reset(s)) {
                *retries = 0;
                record(ctx, machine_id, 0, false, reset_message()).await?;
                return Ok(());
            }
            limits = read_limits(ctx, machine_id).await?;
        }
    }
}
