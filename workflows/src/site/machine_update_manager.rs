//! The `MachineUpdateManager` workflow: the site scheduler, one per site (seed "How an automatic
//! update starts").
//!
//! Each pass is one local activity (`hostfw.manager.pass`) that reads the site database, applies
//! the gates in the seed's order (pure `hostfw_model::gates`), and gives each selected host a
//! request and a `HostReprovision` workflow. It runs inside the workflow task that received the
//! wake-up: no activity task to dispatch and no second workflow task. Between passes the workflow waits for the run interval OR a
//! `wake` signal (a host workflow ended, a window opened, the catalog or config changed), so a
//! freed slot is refilled at once instead of one interval later. Continue-as-new keeps the
//! history short. After each pass its current details in the Web UI show what the pass did and
//! the brakes in force (`manager_details`). Deterministic: it decides only from activity results
//! and signals.

use std::pin::pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_workflow::{
    select, CancellableFuture, ContinueAsNewOptions, SyncWorkflowContext, TimerOptions, WorkflowContext,
    WorkflowContextView, WorkflowResult,
};

use crate::options;
use crate::site::contracts::*;
pub use crate::tunables::PASSES_PER_RUN;

/// Input (and the state carried across continue-as-new).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagerInput {
    /// Wake-ups received but not yet served by a pass.
    #[serde(default)]
    pub pending_wakes: Vec<String>,
    /// Passes of all runs so far.
    #[serde(default)]
    pub passes_total: u64,
}

/// The answer of the `status` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagerStatus {
    pub passes_total: u64,
    pub passes_this_run: u32,
    /// Why the last pass ran.
    pub last_reasons: Vec<String>,
    pub last_pass: Option<PassSummary>,
}

/// The site scheduler. Signal `wake` to run a pass now; query `status` for the last pass.
#[workflow]
pub struct MachineUpdateManagerWorkflow {
    pending_wakes: Vec<String>,
    status: ManagerStatus,
}

#[workflow_methods]
impl MachineUpdateManagerWorkflow {
    #[init]
    pub fn new(_ctx: &WorkflowContextView, input: ManagerInput) -> Self {
        MachineUpdateManagerWorkflow {
            pending_wakes: input.pending_wakes,
            status: ManagerStatus { passes_total: input.passes_total, ..ManagerStatus::default() },
        }
    }

    #[run(name = crate::names::MACHINE_UPDATE_MANAGER_WORKFLOW)]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<()> {
        let mut reasons = vec!["manager started".to_string()];
        loop {
            reasons.extend(ctx.state_mut(|s| std::mem::take(&mut s.pending_wakes)));
            let request = PassRequest { reasons: reasons.clone() };
            let pass = ctx
                .execute_local_activity(SiteActivities::manager_pass, request, options::manager_pass_local())
                .await?;
            // The Web UI's current details: what the pass did and the brakes in force.
            ctx.set_current_details(crate::site::manager_details::render(&pass, &reasons));
            let (wait, timer_reason) = next_wait(&pass);
            let event_driven = pass.event_driven;
            let passes_this_run = ctx.state_mut(|s| {
                s.status.passes_total += 1;
                s.status.passes_this_run += 1;
                s.status.last_reasons = std::mem::take(&mut reasons);
                s.status.last_pass = Some(pass);
                s.status.passes_this_run
            });
            if passes_this_run >= PASSES_PER_RUN || ctx.continue_as_new_suggested() {
                let carried = ctx.state(|s| ManagerInput {
                    pending_wakes: s.pending_wakes.clone(),
                    passes_total: s.status.passes_total,
                });
                ctx.continue_as_new(carried, ContinueAsNewOptions::default())?;
            }
            reasons = if event_driven {
                wait_for_wake(ctx, wait, timer_reason).await?
            } else {
                // NICo's policy: wake-ups wait for the interval like everything else.
                ctx.timer(TimerOptions::builder(wait).summary("until the next scheduler pass".to_string()).build())
                    .await;
                vec![timer_reason]
            };
        }
    }

    /// Counters and the last pass.
    #[query(name = crate::names::QUERY_STATUS)]
    pub fn status(&self, _ctx: &WorkflowContextView) -> ManagerStatus {
        self.status.clone()
    }

    /// Run a pass now; `reason` is shown in the pass's summary.
    #[signal(name = crate::names::SIGNAL_WAKE)]
    pub fn wake(&mut self, _ctx: &mut SyncWorkflowContext<Self>, reason: String) {
        // Many hosts may finish at once: one pending entry per distinct reason is enough.
        if !self.pending_wakes.contains(&reason) && self.pending_wakes.len() < 50 {
            self.pending_wakes.push(reason);
        }
    }
}

/// The pause before the next pass: the run interval, or less when a window opens sooner; and
/// the reason of the pass it starts.
fn next_wait(pass: &PassSummary) -> (Duration, String) {
    let interval = pass.run_interval_secs.max(1);
    let secs = pass.next_wake_secs.map_or(interval, |w| w.clamp(1, interval));
    let reason = match &pass.next_wake_reason {
        Some(why) if secs < interval => why.clone(),
        _ => format!("run interval ({secs} s)"),
    };
    (Duration::from_secs(secs), reason)
}

/// Wait for `wait` to pass or a `wake` signal; returns the reasons for the next pass.
async fn wait_for_wake(
    ctx: &WorkflowContext<MachineUpdateManagerWorkflow>,
    wait: Duration,
    timer_reason: String,
) -> WorkflowResult<Vec<String>> {
    if ctx.state(|s| !s.pending_wakes.is_empty()) {
        return Ok(Vec::new());
    }
    let timer = ctx.timer(TimerOptions::builder(wait).summary("until the next scheduler pass".to_string()).build());
    let mut timer = pin!(timer);
    let woken = select! {
        r = ctx.wait_condition(|s: &MachineUpdateManagerWorkflow| !s.pending_wakes.is_empty()) => { r?; true }
        _ = timer.as_mut() => false,
    };
    if woken {
        timer.cancel();
        Ok(Vec::new())
    } else {
        Ok(vec![timer_reason])
    }
}
