//! The platform steps of an assigned host around its update: before it, lockdown off and the
//! discovery boot; after it, lockdown on and the boot back to its own OS. A step that fails is a
//! failed attempt like any other (FailedFirmwareUpgrade, the retry budget, then the steps again)
//! instead of failing the workflow: the caller gets the reason and decides. Deterministic
//! workflow code only.

use hostfw_model::HostSubstate;
use temporalio_workflow::WorkflowResult;

use crate::contracts::*;
use crate::host::deferred;
use crate::host::infrastructure::through_faults;
use crate::host::steps::{enter, reason, Ctx};
use crate::options;

/// A platform step that failed (after its activity's own retries).
pub(crate) struct StepFailure {
    /// What failed and why, for FailedFirmwareUpgrade.
    pub reason: String,
}

/// Run one platform step.
pub(crate) async fn platform(
    ctx: &Ctx,
    machine_id: &str,
    step: PlatformStep,
) -> WorkflowResult<Result<(), StepFailure>> {
    let settings = ctx.state(|s| s.input.settings.clone());
    let what = match &step {
        PlatformStep::Lockdown { enabled: true } => "re-enabling platform lockdown",
        PlatformStep::Lockdown { enabled: false } => "disabling platform lockdown",
        PlatformStep::DiscoveryBoot => "booting the discovery environment",
        PlatformStep::BootToOs => "booting the host's own OS",
    };
    let options = options::platform(&step, &settings);
    let input = PlatformInput {
        machine_id: machine_id.to_string(),
        step,
        waits: settings.bmc_waits,
        records: deferred::take_records(ctx),
    };
    let run = move || ctx.execute_activity(HostActivities::platform, input.clone(), options.clone());
    match through_faults(ctx, what, run).await? {
        Ok(()) => Ok(Ok(())),
        Err(error) => Ok(Err(StepFailure { reason: reason(what, &error) })),
    }
}

/// Before the update: lockdown off, then the discovery boot. `Err` names the failed step.
pub(crate) async fn prepare(ctx: &Ctx, machine_id: &str) -> WorkflowResult<Result<(), StepFailure>> {
    enter(ctx, HostSubstate::PlatformConfiguration, "disabling platform lockdown").await?;
    if let Err(failure) = platform(ctx, machine_id, PlatformStep::Lockdown { enabled: false }).await? {
        return Ok(Err(failure));
    }
    enter(ctx, HostSubstate::DiscoveryBoot, "booting the discovery environment").await?;
    platform(ctx, machine_id, PlatformStep::DiscoveryBoot).await
}

/// After the update: lockdown on, then the boot back to the host's own OS.
pub(crate) async fn restore(ctx: &Ctx, machine_id: &str) -> WorkflowResult<Result<(), StepFailure>> {
    enter(ctx, HostSubstate::PlatformConfiguration, "re-enabling platform lockdown").await?;
    if let Err(failure) = platform(ctx, machine_id, PlatformStep::Lockdown { enabled: true }).await? {
        return Ok(Err(failure));
    }
    platform(ctx, machine_id, PlatformStep::BootToOs).await
}
