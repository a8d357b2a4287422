//! Activation steps: system and manager resets, and the wait until the BMC answers again.
//!
//! Owns issuing one step and waiting for its effect, and not issuing it twice when a retry finds
//! that an earlier attempt already did (`activation_marks`). Every wait is bounded by the step's
//! input (`BmcWaits`, from the site config), the same values the workflow derived the activity's
//! timeout from (`waits::BmcWaits::activation_budget`): a change to what a step waits for must
//! change that budget too. It must not choose the steps (the workflow's activation plan does).

use std::time::Duration;

use hostfw_model::AcCycleSetting;
use hostfw_workflows::waits::BmcWaits;
use hostfw_workflows::{ActivateInput, ActivationStep};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::host::host_model::host_model;
use crate::host::reset_types;
use crate::tunables::HEALTHY_READ_PAUSE;
use crate::Deps;

/// Identifies one activation step across its attempts: the workflow run and the activity id
/// (every retry of one activity shares both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepKey {
    pub run_id: String,
    pub activity_id: String,
}

/// Run one activation step: issue its reset or power action, then wait for its effect.
///
/// With a `key`, the step records in the site database that it issued the reset. A retry of the
/// same step (the worker died while waiting) that finds a mark younger than the step's waiting
/// budget (`bmc_reachable_within`) only waits: the host is not reset a second time. An older mark
/// means the earlier wait ran out, so the retry resets again. Without a key (no workflow), it
/// always issues.
pub async fn activate(deps: &Deps, input: ActivateInput, key: Option<StepKey>) -> Result<(), ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let waits = input.waits;
    let client = bmc::client_with_waits(deps, &machine, &waits).await?;
    // A power drain goes through the model's configured action, never a guessed one.
    let ac_cycle = match input.step {
        ActivationStep::AcPowerCycle => Some(ac_cycle_setting(deps, &machine, &client).await?),
        _ => None,
    };
    let issued_ms_ago = match &key {
        Some(k) => match deps.store.activation_mark_get(&k.run_id, &k.activity_id).await {
            Ok(at) => at.map(|at| hostfw_store::now_ms() - at),
            Err(e) => {
                tracing::warn!(machine_id = %machine.id, error = %hostfw_model::error_chain(&e), "reading the activation mark failed; issuing the step");
                None
            }
        },
        None => None,
    };
    // The power state before an AC cycle, when this attempt sent it (see `wait`).
    let mut before_cycle = None;
    match issued_ms_ago.filter(|ago| *ago < waits.reachable_within().as_millis() as i64) {
        Some(ago) => tracing::warn!(
            machine_id = %machine.id,
            step = ?input.step,
            issued_s_ago = ago / 1000,
            "a previous attempt of this step already issued it (the worker restarted?): waiting for it, not issuing it again"
        ),
        None => {
            before_cycle = issue(&client, &input.step, ac_cycle.as_ref(), &waits).await?;
            if let Some(k) = &key {
                if let Err(e) =
                    deps.store.activation_mark_put(&k.run_id, &k.activity_id, &machine.id, hostfw_store::now_ms()).await
                {
                    tracing::warn!(machine_id = %machine.id, error = %hostfw_model::error_chain(&e), "recording the activation mark failed; a retry would issue the step again");
                }
            }
        }
    }
    wait(&client, &input.step, ac_cycle.as_ref(), before_cycle.as_deref(), &waits).await?;
    if let Some(k) = &key {
        if let Err(e) = deps.store.activation_mark_clear(&k.run_id, &k.activity_id).await {
            tracing::warn!(machine_id = %machine.id, error = %hostfw_model::error_chain(&e), "clearing the activation mark failed (it expires on its own)");
        }
    }
    tracing::info!(machine_id = %machine.id, step = ?input.step, "activation step done");
    Ok(())
}

/// The reset or power action of a step, as accepted by the BMC. The step's ResetType is tried
/// first, then its kind's fallbacks (`reset_types`); the client sends the first the BMC allows,
/// and follows a host reset that answers with a Task to its end. For an AC cycle without
/// `power_off_first`, returns the host's power state read just before the cycle was sent.
async fn issue(
    client: &hostfw_redfish::RedfishClient,
    step: &ActivationStep,
    ac_cycle: Option<&AcCycleSetting>,
    waits: &BmcWaits,
) -> Result<Option<String>, ActivityError> {
    if let (ActivationStep::AcPowerCycle, Some(setting)) = (step, ac_cycle) {
        let before = if setting.power_off_first {
            power_action(client, reset_types::POWER_OFF, "Off").await.map_err(error::redfish)?;
            wait_power(client, "Off", waits.power_state_within()).await?;
            None
        } else {
            client.power_state().await.ok().flatten()
        };
        client.ac_power_cycle_at(setting).await.map_err(error::redfish)?;
        return Ok(before);
    }
    match step {
        ActivationStep::PowerOff => power_action(client, reset_types::POWER_OFF, "Off").await,
        ActivationStep::PowerOn => power_action(client, reset_types::POWER_ON, "On").await,
        ActivationStep::AcPowerCycle => Ok(()),
        ActivationStep::SystemReset { reset_type } => {
            client.reset_system(&reset_types::preferences(reset_type, reset_types::SYSTEM_RESTART)).await.map(drop)
        }
        ActivationStep::ManagerReset { reset_type, .. } => {
            client.reset_manager(&reset_types::preferences(reset_type, reset_types::BMC_RESTART)).await.map(drop)
        }
    }
    .map(|()| None)
    .map_err(error::redfish)
}

/// Wait for the effect of a step's action; safe to repeat after a worker restart.
///
/// After an AC cycle: the BMC answering again; then, with `power_off_first`, On sent and waited
/// for. Without it, On is waited for only when the host was On just before the cycle
/// (`before_cycle`): a host that was off (a drain powers it off first) stays off through the
/// cycle on real hardware, and the plan's next step powers it on. Waiting for On there would
/// hang until `power_state_within` (10 minutes by default) and fail the drain.
async fn wait(
    client: &hostfw_redfish::RedfishClient,
    step: &ActivationStep,
    ac_cycle: Option<&AcCycleSetting>,
    before_cycle: Option<&str>,
    waits: &BmcWaits,
) -> Result<(), ActivityError> {
    let power_within = waits.power_state_within();
    if let (ActivationStep::AcPowerCycle, Some(setting)) = (step, ac_cycle) {
        client.wait_reachable(waits.reachable_within()).await.map_err(error::redfish)?;
        if setting.power_off_first {
            power_action(client, reset_types::POWER_ON, "On").await.map_err(error::redfish)?;
            return wait_power(client, "On", power_within).await;
        }
        if before_cycle == Some("On") {
            return wait_power(client, "On", power_within).await;
        }
        tracing::info!(
            bmc = %client.address(),
            before_cycle,
            "AC cycle done and the BMC answers; the host was not on before it, so powering it on is left to the plan's next step"
        );
        return Ok(());
    }
    match step {
        ActivationStep::PowerOff => wait_power(client, "Off", power_within).await?,
        ActivationStep::PowerOn => wait_power(client, "On", power_within).await?,
        ActivationStep::AcPowerCycle => {}
        ActivationStep::SystemReset { .. } => {
            client.wait_reachable(waits.reachable_within()).await.map_err(error::redfish)?;
            wait_power(client, "On", power_within).await?;
        }
        ActivationStep::ManagerReset { healthy_reads, .. } => {
            client.wait_unreachable(waits.goes_down_within()).await.map_err(error::redfish)?;
            // The BMC goes away while it reboots; wait for it, then require several consecutive
            // good reads so that a BMC still coming up is not mistaken for a healthy one. The
            // whole comeback is bounded by `bmc_reachable_within`, however often a read fails.
            let within = waits.reachable_within();
            let deadline = tokio::time::Instant::now() + within;
            let mut good = 0;
            while good < *healthy_reads {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero() {
                    return Err(error::bmc_timeout(format!(
                        "{}: BMC did not answer {healthy_reads} consecutive healthy reads within {within:?} after its reset",
                        client.address()
                    )));
                }
                client.wait_reachable(left).await.map_err(error::redfish)?;
                match client.power_state().await {
                    Ok(_) => good += 1,
                    Err(_) => good = 0,
                }
                tokio::time::sleep(HEALTHY_READ_PAUSE).await;
            }
        }
    }
    Ok(())
}

/// A power action (ForceOff, On) unless the host already is in the state it leads to: the power
/// state is read first and a host already `wanted` is left alone (a real iDRAC answers a repeated
/// ForceOff or On with 409). A 409 for a host that reads `wanted` just after counts as done.
async fn power_action(
    client: &hostfw_redfish::RedfishClient,
    preferences: &[&str],
    wanted: &str,
) -> Result<(), hostfw_redfish::RedfishError> {
    if client.power_state().await.ok().flatten().as_deref() == Some(wanted) {
        tracing::info!(bmc = %client.address(), wanted, "the host already is in that power state: nothing sent");
        return Ok(());
    }
    match client.reset_system(preferences).await {
        Ok(_) => Ok(()),
        Err(e) if e.http_status() == Some(409) => {
            if client.power_state().await.ok().flatten().as_deref() == Some(wanted) {
                tracing::info!(bmc = %client.address(), wanted, "409 Conflict, and the host is in that power state: taken as done");
                Ok(())
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
}

/// Wait until the host reports `PowerState` `wanted` (a restart passes through Off first), at
/// most `within` (`power_state_within`).
pub(crate) async fn wait_power(
    client: &hostfw_redfish::RedfishClient,
    wanted: &str,
    within: Duration,
) -> Result<(), ActivityError> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Ok(Some(state)) = client.power_state().await {
            if state == wanted {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() > deadline {
            return Err(error::bmc_timeout(format!(
                "{}: host did not reach power state {wanted} within {within:?}",
                client.address(),
            )));
        }
        tokio::time::sleep(HEALTHY_READ_PAUSE).await;
    }
}

/// The model's AC-cycle action (catalog `ac_cycle`); refused, naming the model, when it has none.
pub(crate) async fn ac_cycle_setting(
    deps: &Deps,
    machine: &hostfw_store::Machine,
    client: &hostfw_redfish::RedfishClient,
) -> Result<AcCycleSetting, ActivityError> {
    let id = host_model(deps, machine, client).await?;
    id.entry.and_then(|m| m.ac_cycle).ok_or_else(|| {
        error::bad_input(format!(
            "AC power cycle needed, but model {:?} {:?} has no ac_cycle setting in the catalog \
             (which resource and action cycle its AC power): not guessed",
            id.vendor, id.model
        ))
    })
}
