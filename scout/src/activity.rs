//! The Scout activity as Temporal sees it: binds `run_upgrade` to the contract
//! `hostfw_workflows::scout::scout_defs::RunUpgrade`, heartbeats while the task runs and turns a
//! cancellation into killing the script and reporting `Cancelled`.

use std::sync::Arc;

use hostfw_workflows::scout::{scout_defs, ScoutResult, ScoutTask};
use temporalio_common::error::ApplicationFailure;
use temporalio_common::ActivityError;
use temporalio_macros::activities;
use temporalio_sdk::activities::ActivityContext;
use tokio::sync::watch;
use tracing::Instrument;

use crate::error::ScoutError;
use crate::settings::ScoutSettings;
use crate::upgrade::{execute, TaskContext};

/// Failure type of the agent's own errors; retried by the workflow's retry policy.
pub const AGENT_FAILURE_TYPE: &str = "ScoutAgent";

/// Scout's activities for one machine (one instance per machine's task queue).
pub struct ScoutActivitiesImpl {
    machine_id: String,
    settings: ScoutSettings,
    http: reqwest::Client,
}

impl ScoutActivitiesImpl {
    /// The activities of the Scout serving `machine_id`.
    pub fn new(machine_id: impl Into<String>, settings: ScoutSettings) -> Result<Self, ScoutError> {
        let http = reqwest::Client::builder().build().map_err(|source| ScoutError::HttpClient { source })?;
        Ok(ScoutActivitiesImpl { machine_id: machine_id.into(), settings, http })
    }

    /// The machine this instance serves.
    pub fn machine_id(&self) -> &str {
        &self.machine_id
    }
}

#[activities]
impl ScoutActivitiesImpl {
    /// Download, verify, run; see [`crate::upgrade`].
    #[activity(definition = scout_defs::RunUpgrade)]
    pub async fn run_upgrade(
        self: Arc<Self>,
        ctx: ActivityContext,
        task: ScoutTask,
    ) -> Result<ScoutResult, ActivityError> {
        let span = tracing::info_span!(
            "scout_task",
            task = %task.upgrade_task_id,
            machine = %task.machine_id,
            component = %task.component,
            attempt = ctx.info().attempt,
        );
        self.supervise(&ctx, &task).instrument(span).await
    }
}

impl ScoutActivitiesImpl {
    /// Run the task while heartbeating its phase; on cancellation drop it (which kills the script
    /// and removes the working directory) and report `Cancelled`.
    async fn supervise(&self, ctx: &ActivityContext, task: &ScoutTask) -> Result<ScoutResult, ActivityError> {
        tracing::info!(target_version = %task.target_version, artifacts = task.artifacts.len(), "upgrade task received");
        let (phase, phase_rx) = watch::channel("starting".to_string());
        let cx =
            TaskContext { agent_machine: &self.machine_id, settings: &self.settings, http: &self.http, phase: &phase };
        let work = execute(&cx, task);
        tokio::pin!(work);
        let mut heartbeat = tokio::time::interval(self.settings.heartbeat_interval);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                result = &mut work => return result.map_err(agent_failure),
                _ = ctx.cancelled() => {
                    tracing::warn!("activity cancelled; stopping the task");
                    return Err(ActivityError::cancelled());
                }
                _ = heartbeat.tick() => {
                    let current = phase_rx.borrow().clone();
                    if let Err(e) = ctx.record_heartbeat(current).await {
                        tracing::warn!(error = %e, "could not record a heartbeat");
                    }
                }
            }
        }
    }
}

fn agent_failure(err: ScoutError) -> ActivityError {
    tracing::error!(error = %err, "scout could not carry out the task");
    ActivityError::application(
        ApplicationFailure::builder(err.to_string())
            .type_name(AGENT_FAILURE_TYPE.to_string())
            .non_retryable(false)
            .build(),
    )
}
