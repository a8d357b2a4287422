//! Binds the activity functions of this crate to the contract names declared in
//! `hostfw-workflows` (`#[activity(definition = ...)]`). Thin wrappers only.

use std::sync::Arc;

use hostfw_model::InventoryReport;
use hostfw_workflows::defs;
use hostfw_workflows::step_failure::{failed_step, SCRIPT_FAILED, UPDATE_TASK_FAILED};
use hostfw_workflows::{
    ActivateInput, ApprovalDeadlinePassed, ApprovalDeadlineRecord, ApprovalInputs, FreezeHold, HostContext,
    InstallPlan, InstallPlanQuery, InventoryRead, PlatformInput, PreflightInput, ProtectInput, RestoreInput,
    RetryLimits, RetryRecord, ScriptInput, ScriptResult, SubstateUpdate, TaskResult, UploadInput, UploadResult,
    WaitTaskInput,
};
use temporalio_common::ActivityError;
use temporalio_macros::activities;
use temporalio_sdk::activities::ActivityContext;

use crate::activity_log::logged;
use crate::heartbeat::with_heartbeat;
use crate::{
    activation, activation_preflight, approval, firmware, freeze_hold, host_state, install_plan, inventory, platform,
    script, Deps,
};

/// The implementation of `hostfw_workflows::HostActivities`, registered on the worker.
pub struct HostActivitiesImpl {
    deps: Deps,
}

impl HostActivitiesImpl {
    pub fn new(deps: Deps) -> Self {
        HostActivitiesImpl { deps }
    }
}

#[activities]
impl HostActivitiesImpl {
    #[activity(definition = defs::Protect)]
    pub async fn protect(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: ProtectInput,
    ) -> Result<HostContext, ActivityError> {
        logged(&ctx, host_state::protect(&self.deps, input)).await
    }

    #[activity(definition = defs::RecordSubstates)]
    pub async fn record_substates(
        self: Arc<Self>,
        ctx: ActivityContext,
        records: Vec<SubstateUpdate>,
    ) -> Result<(), ActivityError> {
        logged(&ctx, carried(&self.deps, &ctx, &records)).await
    }

    #[activity(definition = defs::PlanInstall)]
    pub async fn plan_install(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: InstallPlanQuery,
    ) -> Result<InstallPlan, ActivityError> {
        logged(&ctx, install_plan::plan_install(&self.deps, &input)).await
    }

    #[activity(definition = defs::RefreshInventory)]
    pub async fn refresh_inventory(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: InventoryRead,
    ) -> Result<InventoryReport, ActivityError> {
        // A crawl of a slow BMC takes minutes: heartbeats tell a dead worker from a slow read.
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            inventory::refresh(&self.deps, &input.machine_id).await
        };
        logged(&ctx, with_heartbeat(&ctx, "reading the Redfish inventory", work)).await
    }

    #[activity(definition = defs::Upload)]
    pub async fn upload(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: UploadInput,
    ) -> Result<UploadResult, ActivityError> {
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            firmware::upload(&self.deps, &ctx, input).await
        };
        logged(&ctx, work).await
    }

    #[activity(definition = defs::WaitTask)]
    pub async fn wait_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: WaitTaskInput,
    ) -> Result<TaskResult, ActivityError> {
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            firmware::wait_task(&self.deps, &ctx, input).await
        };
        // A task that ended failed is the host's failure: a failed activity, red in the Web UI.
        match logged(&ctx, work).await? {
            r if r.succeeded || r.vanished => Ok(r),
            r => {
                let message = task_failure_message(&r);
                Err(failed_step(UPDATE_TASK_FAILED, message, r))
            }
        }
    }

    #[activity(definition = defs::Activate)]
    pub async fn activate(self: Arc<Self>, ctx: ActivityContext, input: ActivateInput) -> Result<(), ActivityError> {
        let what = format!("{:?}", input.step);
        let info = ctx.info();
        let key = info
            .workflow_run_id
            .clone()
            .map(|run_id| activation::StepKey { run_id, activity_id: info.activity_id.clone() });
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            activation::activate(&self.deps, input, key).await
        };
        logged(&ctx, with_heartbeat(&ctx, &what, work)).await
    }

    #[activity(definition = defs::ActivationPreflight)]
    pub async fn activation_preflight(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: PreflightInput,
    ) -> Result<(), ActivityError> {
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            activation_preflight::preflight(&self.deps, input).await
        };
        logged(&ctx, with_heartbeat(&ctx, "activation preflight", work)).await
    }

    #[activity(definition = defs::Restore)]
    pub async fn restore(self: Arc<Self>, ctx: ActivityContext, input: RestoreInput) -> Result<(), ActivityError> {
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            host_state::restore(&self.deps, input).await
        };
        logged(&ctx, work).await
    }

    #[activity(definition = defs::ApprovalInputs)]
    pub async fn approval_inputs(
        self: Arc<Self>,
        _ctx: ActivityContext,
        machine_id: String,
    ) -> Result<ApprovalInputs, ActivityError> {
        approval::approval_inputs(&self.deps, &machine_id).await
    }

    #[activity(definition = defs::FreezeHold)]
    pub async fn freeze_hold(
        self: Arc<Self>,
        _ctx: ActivityContext,
        machine_id: String,
    ) -> Result<Option<FreezeHold>, ActivityError> {
        freeze_hold::freeze_hold(&self.deps, &machine_id).await
    }

    #[activity(definition = defs::ApprovalDeadline)]
    pub async fn approval_deadline(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: ApprovalDeadlinePassed,
    ) -> Result<ApprovalDeadlineRecord, ActivityError> {
        logged(&ctx, approval::approval_deadline(&self.deps, input)).await
    }

    #[activity(definition = defs::RetryLimits)]
    pub async fn retry_limits(
        self: Arc<Self>,
        _ctx: ActivityContext,
        _machine_id: String,
    ) -> Result<RetryLimits, ActivityError> {
        host_state::retry_limits(&self.deps)
    }

    #[activity(definition = defs::RecordRetry)]
    pub async fn record_retry(self: Arc<Self>, ctx: ActivityContext, input: RetryRecord) -> Result<(), ActivityError> {
        logged(&ctx, host_state::record_retry(&self.deps, input, workflow_id(&ctx))).await
    }

    #[activity(definition = defs::RunScript)]
    pub async fn run_script(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: ScriptInput,
    ) -> Result<ScriptResult, ActivityError> {
        let script = input.script.clone();
        // A script that ran and failed is the host's failure: a failed activity, red in the Web UI.
        match logged(&ctx, script::run_script(&self.deps, &ctx, input)).await? {
            r if r.success => Ok(r),
            r => {
                let why = r.error.clone().or(r.exit_code.map(|c| format!("exit code {c}")));
                let message = format!("script {script} failed: {}", why.as_deref().unwrap_or("no detail"));
                Err(failed_step(SCRIPT_FAILED, message, r))
            }
        }
    }

    #[activity(definition = defs::Platform)]
    pub async fn platform(self: Arc<Self>, ctx: ActivityContext, input: PlatformInput) -> Result<(), ActivityError> {
        let what = format!("{:?}", input.step);
        let work = async {
            carried(&self.deps, &ctx, &input.records).await?;
            platform::platform(&self.deps, input).await
        };
        logged(&ctx, with_heartbeat(&ctx, &what, work)).await
    }
}

/// Write the substate records the workflow handed this activity (the lean history shape).
async fn carried(deps: &Deps, ctx: &ActivityContext, records: &[SubstateUpdate]) -> Result<(), ActivityError> {
    host_state::record_carried(deps, records, workflow_id(ctx), ctx.info().attempt).await
}

/// The id of the workflow that scheduled the activity, for log lines ("" when standalone).
fn workflow_id(ctx: &ActivityContext) -> &str {
    ctx.info().workflow_id.as_deref().unwrap_or_default()
}

/// The Web UI's text of a failed update task: the BMC's own messages first, then the state.
fn task_failure_message(r: &TaskResult) -> String {
    if r.messages.is_empty() {
        format!("update task ended {} with no message", r.state)
    } else {
        format!("{} (update task ended {})", r.messages.join("; "), r.state)
    }
}
