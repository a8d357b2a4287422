//! The `SiteNotifier` workflow: delivers the site's webhook notifications, one per site.
//!
//! It runs one `hostfw.notifier.round` activity after another: each round delivers for
//! `tunables::NOTIFIER_ROUND` (claiming due deliveries from the site database's outbox with a
//! lease, POSTing them, recording success or the next retry) while heartbeating, then returns
//! its counts. The outbox, not this workflow, holds what is left to send, so a worker killed
//! mid-round loses nothing: the round is retried on a live worker and the leased deliveries are
//! sent again (at least once, under their stable event ids). Continue-as-new every
//! `tunables::NOTIFIER_ROUNDS_PER_RUN` rounds keeps the history bounded. Deterministic: it
//! decides only from activity results.

use serde::{Deserialize, Serialize};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_workflow::{ContinueAsNewOptions, WorkflowContext, WorkflowContextView, WorkflowResult};

use crate::options;
use crate::site::contracts::*;
use crate::tunables::{NOTIFIER_ROUND, NOTIFIER_ROUNDS_PER_RUN};

/// Input (and the totals carried across continue-as-new).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifierInput {
    #[serde(default)]
    pub totals: NotifierStatus,
}

/// The answer of the `status` query: totals since the notifier first started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifierStatus {
    pub rounds: u64,
    pub delivered: u64,
    pub failed: u64,
    pub gave_up: u64,
    pub pruned: u64,
}

/// The webhook delivery loop.
#[workflow]
pub struct SiteNotifierWorkflow {
    status: NotifierStatus,
    rounds_this_run: u32,
}

#[workflow_methods]
impl SiteNotifierWorkflow {
    #[init]
    pub fn new(_ctx: &WorkflowContextView, input: NotifierInput) -> Self {
        SiteNotifierWorkflow { status: input.totals, rounds_this_run: 0 }
    }

    #[run(name = crate::names::SITE_NOTIFIER_WORKFLOW)]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<()> {
        loop {
            let request = NotifierRoundRequest { run_for_secs: NOTIFIER_ROUND.as_secs() };
            let round = ctx
                .execute_activity(
                    SiteActivities::notifier_round,
                    request,
                    options::summarized(options::notifier_round(NOTIFIER_ROUND), "deliver webhook notifications"),
                )
                .await?;
            let count = ctx.state_mut(|s| {
                s.status.rounds += 1;
                s.status.delivered += u64::from(round.delivered);
                s.status.failed += u64::from(round.failed);
                s.status.gave_up += u64::from(round.gave_up);
                s.status.pruned += round.pruned;
                s.rounds_this_run += 1;
                s.rounds_this_run
            });
            if count >= NOTIFIER_ROUNDS_PER_RUN || ctx.continue_as_new_suggested() {
                let carried = ctx.state(|s| NotifierInput { totals: s.status.clone() });
                ctx.continue_as_new(carried, ContinueAsNewOptions::default())?;
            }
        }
    }

    /// Delivery totals.
    #[query(name = crate::names::QUERY_STATUS)]
    pub fn status(&self, _ctx: &WorkflowContextView) -> NotifierStatus {
        self.status.clone()
    }
}
