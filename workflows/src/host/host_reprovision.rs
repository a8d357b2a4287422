//! The `HostReprovision` workflow: one per host, it brings every component of the host to the
//! catalog's default version (seed, "Update workflow").
//!
//! (assigned: wait for approval →) protect → (assigned: platform configuration, discovery boot →)
//! attempts of the component loop, with FailedFirmwareUpgrade and bounded retries between them →
//! restore. Signals let operators and tenants move it on; the `status` query shows where it is.
//! This file must stay deterministic: no clocks, randomness or I/O (see the crate docs).

use hostfw_model::gates::UnmatchedComponent;
use hostfw_model::{ComponentType, HostState, HostSubstate, InventoryReport, VERSION_NOT_REPORTED};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_workflow::{
    ContinueAsNewOptions, SyncWorkflowContext, WorkflowContext, WorkflowContextView, WorkflowResult,
};

use crate::contracts::*;
use crate::host::abort;
use crate::host::approval::{wait_for_approval, Approval};
use crate::host::attempt::{run_attempt, AttemptEnd};
use crate::host::carried::{CarriedRun, HISTORY_EVENTS_BOUND};
use crate::host::deferred::{self, Deferred};
use crate::host::failure::after_failure;
use crate::host::platform_steps;
use crate::host::status::{HostOutcome, HostStatus};
use crate::host::steps::Ctx;
use crate::options;
use crate::search_attributes as sa;

pub use crate::host::settings::{HostReprovisionInput, PowerDrainWaits, ReprovisionSettings, TimeWindow};

/// Per-host firmware reprovisioning. Query `status` for the current substate.
#[workflow]
pub struct HostReprovisionWorkflow {
    pub(crate) input: HostReprovisionInput,
    pub(crate) status: HostStatus,
    /// `host reprovision mark-manual-upgrade-complete` was received.
    pub(crate) manual_upgrade_complete: bool,
    /// Tenant approval (`instance reboot --apply-updates-on-reboot`), by whom.
    pub(crate) approved_by: Option<String>,
    /// `host reprovision clear` before the update started, by whom.
    pub(crate) cancelled_by: Option<String>,
    /// `host reprovision abort`: taken at the next safe point (`abort`).
    pub(crate) abort: Option<AbortOrder>,
    /// Count of `managed-host reset-host-reprovisioning` signals received.
    pub(crate) reset_requests: u32,
    /// Count of `settings_changed` signals received (a wait re-reads what it depends on).
    pub(crate) settings_changes: u32,
    /// Records and search attributes waiting for the next activity or wait (`host::deferred`).
    pub(crate) deferred: Deferred,
    /// The inventory the last verification read, which the next firmware check selects from
    /// instead of reading it again.
    pub(crate) fresh_report: Option<InventoryReport>,
}

#[workflow_methods]
impl HostReprovisionWorkflow {
    #[init]
    pub fn new(_ctx: &WorkflowContextView, input: HostReprovisionInput) -> Self {
        let carried = input.carried.clone();
        let status = carried.as_ref().map_or_else(|| HostStatus::new(&input.machine_id), |c| c.status.clone());
        HostReprovisionWorkflow {
            input,
            status,
            manual_upgrade_complete: carried.as_ref().is_some_and(|c| c.manual_upgrade_complete),
            approved_by: carried.and_then(|c| c.approved_by),
            cancelled_by: None,
            abort: None,
            reset_requests: 0,
            settings_changes: 0,
            deferred: Deferred::default(),
            fresh_report: None,
        }
    }

    #[run(name = crate::names::HOST_REPROVISION_WORKFLOW)]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<HostOutcome> {
        let input = ctx.state(|s| s.input.clone());
        let machine_id = input.machine_id.clone();
        ctx.upsert_search_attributes([sa::MACHINE_ID.value_set(machine_id.clone())]);

        let carried = input.carried.clone();
        let host = match &carried {
            Some(c) => c.host.clone(),
            None => match protect_after_approval(ctx, &input).await? {
                Ok(host) => host,
                Err(outcome) => return Ok(outcome),
            },
        };
        let mut labelled = false;
        let mut retries = carried.as_ref().map_or(0, |c| c.retries);
        // Resets already applied to `retries`; one that arrives while an attempt runs clears the
        // count before that attempt's failure is counted.
        let mut resets_applied = ctx.state(|s| s.reset_requests);
        let mut not_reported: Vec<ComponentType> = Vec::new();
        let mut unmatched: Vec<UnmatchedComponent> = Vec::new();
        // Assigned hosts run the platform steps first; a failure there is a failed attempt.
        let mut prepared = carried.as_ref().map_or(!input.assigned, |c| c.prepared);
        loop {
            // Between attempts is a safe point (issue 27): an abort is taken before anything else.
            if abort::requested(ctx) {
                return abort::take(ctx, &input, &host).await;
            }
            if ctx.continue_as_new_suggested() || ctx.history_length() >= HISTORY_EVENTS_BOUND {
                // A reset that arrived and is not applied yet clears the count it would have.
                if ctx.state(|s| s.reset_requests) != resets_applied {
                    retries = 0;
                }
                let next = ctx.state(|s| {
                    let mut next = s.input.clone();
                    next.carried = Some(Box::new(CarriedRun {
                        host: host.clone(),
                        status: s.status.clone(),
                        retries,
                        prepared,
                        manual_upgrade_complete: s.manual_upgrade_complete,
                        approved_by: s.approved_by.clone(),
                        runs: s.input.carried.as_ref().map_or(1, |c| c.runs + 1),
                    }));
                    next
                });
                ctx.continue_as_new(next, ContinueAsNewOptions::default())?;
            }
            if !prepared {
                match platform_steps::prepare(ctx, &machine_id).await? {
                    Ok(()) => prepared = true,
                    Err(failure) => {
                        after_failure(ctx, &input, &mut retries, &failure.reason, resets_applied).await?;
                        resets_applied = ctx.state(|s| s.reset_requests);
                        continue;
                    }
                }
            }
            match run_attempt(ctx, &input, &mut labelled).await? {
                AttemptEnd::Aborted => return abort::take(ctx, &input, &host).await,
                AttemptEnd::Compliant => break,
                AttemptEnd::VersionNotReported(components) => {
                    not_reported = components;
                    break;
                }
                AttemptEnd::NotFullyInstallable { unmatched: u, not_reported: n } => {
                    unmatched = u;
                    not_reported = n;
                    break;
                }
                AttemptEnd::NoCatalogEntry { vendor, model } => {
                    let message =
                        format!("no catalog entry for vendor {vendor:?} model {model:?}: nothing to compare with");
                    if let Some(aborted) = finish(ctx, &input, &host, &message, &mut retries).await? {
                        return Ok(aborted);
                    }
                    return Ok(HostOutcome::NoCatalogEntry { vendor, model });
                }
                AttemptEnd::Failed(reason) => {
                    let resets = ctx.state(|s| s.reset_requests);
                    if resets != resets_applied {
                        retries = 0;
                    }
                    after_failure(ctx, &input, &mut retries, &reason, resets).await?;
                    resets_applied = ctx.state(|s| s.reset_requests);
                }
            }
        }

        let installed = ctx.state(|s| s.status.installed.clone());
        let list: Vec<String> = installed.iter().map(|c| format!("{} {}", c.component, c.to)).collect();
        let mut message = match (installed.is_empty(), not_reported.is_empty()) {
            (true, true) => "nothing differs from the catalog: no install needed".to_string(),
            (false, true) => format!("compliant after installing {}", list.join(", ")),
            (true, false) => format!("nothing to install; {VERSION_NOT_REPORTED} by {}", names(&not_reported)),
            (false, false) => format!(
                "installed {}; nothing else to install; {VERSION_NOT_REPORTED} by {}",
                list.join(", "),
                names(&not_reported)
            ),
        };
        if !unmatched.is_empty() {
            let skipped: Vec<String> = unmatched
                .iter()
                .map(|u| format!("{} (no inventory entry matches {:?})", u.component, u.matcher))
                .collect();
            message = format!("not fully installable: {}", skipped.join(", "));
            if !installed.is_empty() {
                message += &format!("; installed {}", list.join(", "));
            }
            if !not_reported.is_empty() {
                message += &format!("; {VERSION_NOT_REPORTED} by {}", names(&not_reported));
            }
        }
        if let Some(aborted) = finish(ctx, &input, &host, &message, &mut retries).await? {
            return Ok(aborted);
        }
        if !unmatched.is_empty() {
            Ok(HostOutcome::NotFullyInstallable { installed, unmatched, not_reported })
        } else if not_reported.is_empty() {
            Ok(HostOutcome::Compliant { installed })
        } else {
            Ok(HostOutcome::VersionNotReported { installed, components: not_reported })
        }
    }

    /// Current substate, component, target, retries and recent transitions.
    #[query(name = crate::names::QUERY_STATUS)]
    pub fn status(&self, _ctx: &WorkflowContextView) -> HostStatus {
        self.status.clone()
    }

    /// The approved platform procedure is done (seed "Manual platform gate").
    #[signal(name = crate::names::SIGNAL_MARK_MANUAL_UPGRADE_COMPLETE)]
    pub fn mark_manual_upgrade_complete(&mut self, _ctx: &mut SyncWorkflowContext<Self>, by: String) {
        self.manual_upgrade_complete = true;
        self.status.manual_upgrade_completed_by = Some(by);
    }

    /// The tenant approves applying updates on reboot.
    #[signal(name = crate::names::SIGNAL_APPROVE_UPDATES)]
    pub fn approve_updates(&mut self, _ctx: &mut SyncWorkflowContext<Self>, by: String) {
        if self.approved_by.is_none() {
            self.approved_by = Some(by);
        }
    }

    /// Restart firmware checking and clear the retry count.
    #[signal(name = crate::names::SIGNAL_RESET_REPROVISIONING)]
    pub fn reset_reprovisioning(&mut self, _ctx: &mut SyncWorkflowContext<Self>, _by: String) {
        self.reset_requests += 1;
    }

    /// The site's settings or the request's stored approval changed: a wait re-reads them.
    #[signal(name = crate::names::SIGNAL_SETTINGS_CHANGED)]
    pub fn settings_changed(&mut self, _ctx: &mut SyncWorkflowContext<Self>, _by: String) {
        self.settings_changes += 1;
    }

    /// `host reprovision abort`: stop at the next safe point and restore the host. The first
    /// order counts; a later one changes nothing.
    #[signal(name = crate::names::SIGNAL_ABORT)]
    pub fn abort(&mut self, _ctx: &mut SyncWorkflowContext<Self>, order: AbortOrder) {
        if self.abort.is_none() {
            self.status.abort_requested = Some(format!("by {}: {}", order.by, order.reason));
            self.abort = Some(order);
        }
    }

    /// The request was cleared before it started.
    #[signal(name = crate::names::SIGNAL_CANCEL_REQUEST)]
    pub fn cancel_request(&mut self, _ctx: &mut SyncWorkflowContext<Self>, by: String) {
        if self.cancelled_by.is_none() {
            self.cancelled_by = Some(by);
        }
    }
}

/// An assigned host's request ends before its update started: the host is restored to
/// `Assigned` with `message` (the restore removes the request) and the run is `Completed`.
async fn end_unstarted(ctx: &Ctx, machine_id: &str, message: &str) -> WorkflowResult<()> {
    let restore = RestoreInput {
        machine_id: machine_id.to_string(),
        state: HostState::Assigned,
        message: message.to_string(),
        records: Vec::new(),
        abort: None,
    };
    ctx.execute_activity(HostActivities::restore, restore, options::bookkeeping()).await?;
    ctx.state_mut(|s| s.status.enter(HostSubstate::Completed, message));
    Ok(())
}

async fn protect_after_approval(
    ctx: &Ctx,
    input: &HostReprovisionInput,
) -> WorkflowResult<Result<HostContext, HostOutcome>> {
    let machine_id = input.machine_id.clone();
    if input.assigned {
        match wait_for_approval(ctx, input).await? {
            Approval::Granted(how) => ctx.state_mut(|s| s.status.approval = Some(how)),
            Approval::Cancelled(by) => {
                let message = format!("request cleared by {by} before it started");
                end_unstarted(ctx, &machine_id, &message).await?;
                ctx.upsert_search_attributes([crate::search_attributes::substate(HostSubstate::Completed)]);
                return Ok(Err(HostOutcome::Cancelled { by }));
            }
            Approval::DeadlinePassed(record) => {
                end_unstarted(ctx, &machine_id, &record.message).await?;
                ctx.upsert_search_attributes([crate::search_attributes::substate(HostSubstate::Completed)]);
                return Ok(Err(HostOutcome::ApprovalDeadlinePassed {
                    message: record.message,
                    held_until_ms: record.held_until_ms,
                }));
            }
        }
    }

    let host = ctx
        .execute_activity(
            HostActivities::protect,
            ProtectInput {
                machine_id: machine_id.clone(),
                initiator: input.initiator.clone(),
                approval: ctx.state(|s| s.status.approval.clone()),
            },
            options::bookkeeping(),
        )
        .await?;
    if host.cleared {
        // `host reprovision clear` won against protect: nothing was changed (no state, no
        // health report), so there is nothing to restore.
        let by = ctx.state(|s| s.cancelled_by.clone()).unwrap_or_else(|| "an operator".to_string());
        let message = format!("request cleared by {by} before the update started");
        ctx.state_mut(|s| s.status.enter(HostSubstate::Completed, &message));
        return Ok(Err(HostOutcome::Cancelled { by }));
    }
    Ok(Ok(host))
}

/// `bmc, uefi`.
fn names(components: &[ComponentType]) -> String {
    components.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// Restore service (seed step 7): for an assigned host lockdown back on and its own OS booted
/// (a failure there is a failed attempt, retried under the budget);
/// then the prior steady state, request cleared, health report removed. `Some` when an abort
/// was taken while the platform restore failed (the run ended that way).
async fn finish(
    ctx: &Ctx,
    input: &HostReprovisionInput,
    host: &HostContext,
    message: &str,
    retries: &mut u32,
) -> WorkflowResult<Option<HostOutcome>> {
    if input.assigned {
        loop {
            let resets = ctx.state(|s| s.reset_requests);
            match platform_steps::restore(ctx, &host.machine_id).await? {
                Ok(()) => break,
                Err(failure) => {
                    after_failure(ctx, input, retries, &failure.reason, resets).await?;
                    if abort::requested(ctx) {
                        return Ok(Some(abort::take(ctx, input, host).await?));
                    }
                }
            }
        }
    }
    ctx.state_mut(|s| s.status.enter(HostSubstate::Restoring, message));
    // The restore itself writes the state: only the search attribute shows Restoring.
    deferred::want(ctx, crate::names::SA_SUBSTATE, HostSubstate::Restoring.as_str().to_owned());
    let restore = RestoreInput {
        machine_id: host.machine_id.clone(),
        state: host.prior_state,
        message: message.to_string(),
        records: deferred::take_records(ctx),
        abort: None,
    };
    ctx.execute_activity(HostActivities::restore, restore, options::bookkeeping()).await?;
    ctx.state_mut(|s| s.status.enter(HostSubstate::Completed, message));
    deferred::want(ctx, crate::names::SA_SUBSTATE, HostSubstate::Completed.as_str().to_owned());
    deferred::flush_attributes(ctx);
    Ok(None)
}
