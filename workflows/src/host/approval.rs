//! Assigned hosts (seed "Assigned hosts need reboot approval"): the request does not interrupt the
//! tenant's instance until the tenant approves (`instance reboot --apply-updates-on-reboot`, a
//! signal) or the site's `instance_autoreboot_period` is open (a durable timer to its start). A
//! request cleared before it started ends the workflow here.
//!
//! Each time the wait wakes, it reads the stored approval and the current autoreboot period
//! (`hostfw.host.approval_inputs`, a local activity): an approval whose signal was lost, or a
//! workflow started again for a request approved earlier, is still heard, and a period
//! configured after the request was made applies. A `settings_changed` signal wakes it.
//!
//! Approval deadline: the read also says when the request's
//! approval deadline falls (`machine_updater.approval_deadline`, from the request) and its policy;
//! a durable timer wakes the wait then. At the deadline `skip` holds the host until its next
//! window (`hostfw.host.approval_deadline`) and ends the wait, so the request is given up;
//! `escalate` records the host as overdue once, sets `HostfwApprovalOverdue = true` and goes on
//! waiting (an approval after it clears the flag).
//!
//! Approval recheck ([`Change::ApprovalRecheck`]): with nothing else to wake it, the wait reads
//! the stored approval again every `host_reprovision.approval_recheck`.

use std::pin::pin;
use std::time::Duration;

use hostfw_model::gates::DeadlinePolicy;
use hostfw_model::{HostState, HostSubstate};
use temporalio_workflow::{select, CancellableFuture, TimerOptions, WorkflowResult};

use crate::clock::now_ms;
use crate::contracts::*;
use crate::host::deferred;
use crate::host::settings::HostReprovisionInput;
use crate::host::steps::Ctx;
use crate::options;
use crate::versions::Change;

/// How the wait for approval ended.
pub(crate) enum Approval {
    Granted(String),
    Cancelled(String),
    /// The deadline passed under `skip`: the host is held; the request is to be given up.
    DeadlinePassed(ApprovalDeadlineRecord),
}

/// Wait for tenant approval, the autoreboot period, or a cancellation.
pub(crate) async fn wait_for_approval(ctx: &Ctx, input: &HostReprovisionInput) -> WorkflowResult<Approval> {
    let machine_id = input.machine_id.as_str();
    let note = SubstateUpdate {
        machine_id: machine_id.to_string(),
        state: HostState::Assigned,
        substate: HostSubstate::WaitingForApproval,
        message: format!(
            "request pending: waiting for the tenant of instance {} to approve, or the autoreboot period",
            input.instance_id.as_deref().unwrap_or("?")
        ),
        component: None,
        target_version: None,
    };
    ctx.state_mut(|s| s.status.enter(HostSubstate::WaitingForApproval, &note.message));
    deferred::defer_record(ctx, note);
    let mut flagged = false;
    loop {
        // An abort before the update started is a clear.
        if let Some(by) = ctx.state(|s| s.cancelled_by.clone().or_else(|| s.abort.as_ref().map(|a| a.by.clone()))) {
            return Ok(Approval::Cancelled(by));
        }
        if let Some(by) = ctx.state(|s| s.approved_by.clone()) {
            return granted(ctx, flagged, format!("approved by {by}"));
        }
        let settings_seen = ctx.state(|s| s.settings_changes);
        // The pending record (and attributes) first, so the wait below is what they show.
        deferred::flush(ctx).await?;
        let read = ctx
            .execute_local_activity(
                HostActivities::approval_inputs,
                machine_id.to_string(),
                options::local_bookkeeping(),
            )
            .await?;
        if read.approved {
            return granted(ctx, flagged, "approved (recorded on the request)".to_string());
        }
        let window = read.autoreboot_period;
        let deadline = read.deadline;
        let now = now_ms(ctx);
        if let Some(w) = window.filter(|w| w.contains(now)) {
            return granted(ctx, flagged, format!("inside the instance autoreboot period ({w})"));
        }
        if let Some(d) = deadline.filter(|d| d.at_ms <= now) {
            let passed = ApprovalDeadlinePassed { machine_id: machine_id.to_string(), deadline: d };
            match d.policy {
                DeadlinePolicy::Skip => {
                    let record =
                        ctx.execute_activity(HostActivities::approval_deadline, passed, options::bookkeeping()).await?;
                    // Decided once, in the site database: an approval that landed first wins.
                    if record.approved_first {
                        return granted(ctx, flagged, "approved (recorded on the request) before its deadline".into());
                    }
                    return Ok(Approval::DeadlinePassed(record));
                }
                DeadlinePolicy::Escalate if !flagged => {
                    let record =
                        ctx.execute_activity(HostActivities::approval_deadline, passed, options::bookkeeping()).await?;
                    ctx.upsert_search_attributes([crate::search_attributes::APPROVAL_OVERDUE.value_set(true)]);
                    ctx.state_mut(|s| s.status.enter(HostSubstate::WaitingForApproval, &record.message));
                    flagged = true;
                }
                DeadlinePolicy::Escalate => {}
            }
        }
        let decided = move |s: &crate::HostReprovisionWorkflow| {
            s.approved_by.is_some()
                || s.cancelled_by.is_some()
                || s.abort.is_some()
                || s.settings_changes != settings_seen
        };
        // The next wake: the autoreboot period opening, the deadline still ahead, or (since
        // change 1) the next read of the stored approval, whichever comes first.
        let opens =
            window.filter(|w| now < w.start_ms).map(|w| (w.start_ms, "until the instance autoreboot period opens"));
        let due = deadline.filter(|d| now < d.at_ms).map(|d| (d.at_ms, "until the approval deadline"));
        let recheck = Change::ApprovalRecheck.applies(ctx).then(|| {
            let every_ms = (input.settings.approval_recheck_secs as i64).saturating_mul(1000);
            (now.saturating_add(every_ms), "until the stored approval is read again")
        });
        let wake = [opens, due, recheck].into_iter().flatten().min_by_key(|(at_ms, _)| *at_ms);
        match wake {
            Some((at_ms, why)) => {
                let timer = ctx.timer(
                    TimerOptions::builder(Duration::from_millis((at_ms - now) as u64)).summary(why.to_string()).build(),
                );
                let mut timer = pin!(timer);
                let signalled = select! {
                    r = ctx.wait_condition(decided) => { r?; true }
                    _ = timer.as_mut() => false,
                };
                if signalled {
                    timer.cancel();
                }
            }
            None => ctx.wait_condition(decided).await?,
        }
    }
}

/// The wait ends approved; an overdue flag set by this run is cleared.
fn granted(ctx: &Ctx, flagged: bool, how: String) -> WorkflowResult<Approval> {
    if flagged {
        ctx.upsert_search_attributes([crate::search_attributes::APPROVAL_OVERDUE.value_set(false)]);
    }
    Ok(Approval::Granted(how))
}
