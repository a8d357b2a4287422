//! Activation steps: system and manager resets, and the wait until the BMC answers again.

use std::time::Duration;

use hostfw_workflows::{ActivateInput, ActivationStep};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::Deps;

/// How long a reset may keep the BMC unreachable before the attempt fails (and is retried).
const REACHABLE_WITHIN: Duration = Duration::from_secs(10 * 60);
/// Pause between the healthy reads required after a BMC reset, and between power-state reads.
const HEALTHY_READ_PAUSE: Duration = Duration::from_millis(500);
/// How long a BMC may keep answering after accepting Manager.Reset before it goes down; a BMC
/// that never goes down within it is taken to have reset faster than we could see.
const GOES_DOWN_WITHIN: Duration = Duration::from_secs(30);
/// How long a host may take to reach the wanted power state after a reset.
const POWERS_ON_WITHIN: Duration = Duration::from_secs(10 * 60);

/// Run one activation step.
pub async fn activate(deps: &Deps, input: ActivateInput) -> Result<(), ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    match &input.step {
        ActivationStep::PowerOff => {
            client.reset_system("ForceOff").await.map_err(error::redfish)?;
            wait_power(&client, "Off").await?;
        }
        ActivationStep::PowerOn => {
            client.reset_system("On").await.map_err(error::redfish)?;
            wait_power(&client, "On").await?;
        }
        ActivationStep::AcPowerCycle => {
            client.ac_power_cycle().await.map_err(error::redfish)?;
            client.wait_reachable(REACHABLE_WITHIN).await.map_err(error::redfish)?;
        }
        ActivationStep::SystemReset { reset_type } => {
            client.reset_system(reset_type).await.map_err(error::redfish)?;
            client.wait_reachable(REACHABLE_WITHIN).await.map_err(error::redfish)?;
            wait_power(&client, "On").await?;
        }
        ActivationStep::ManagerReset { reset_type, healthy_reads } => {
            client.reset_manager(reset_type).await.map_err(error::redfish)?;
            client.wait_unreachable(GOES_DOWN_WITHIN).await.map_err(error::redfish)?;
            // The BMC goes away while it reboots; wait for it, then require several consecutive
            // good reads so that a BMC still coming up is not mistaken for a healthy one.
            let mut good = 0;
            while good < *healthy_reads {
                client.wait_reachable(REACHABLE_WITHIN).await.map_err(error::redfish)?;
                match client.power_state().await {
                    Ok(_) => good += 1,
                    Err(_) => good = 0,
                }
                tokio::time::sleep(HEALTHY_READ_PAUSE).await;
            }
        }
    }
    tracing::info!(machine = %machine.id, step = ?input.step, "activation step done");
    Ok(())
}

/// Wait until the host reports `PowerState` `wanted` (a restart passes through Off first).
pub(crate) async fn wait_power(client: &hostfw_redfish::RedfishClient, wanted: &str) -> Result<(), ActivityError> {
    let deadline = tokio::time::Instant::now() + POWERS_ON_WITHIN;
    loop {
        if let Ok(Some(state)) = client.power_state().await {
            if state == wanted {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() > deadline {
            return Err(error::bmc_timeout(format!(
                "{}: host did not reach power state {wanted} within {:?}",
                client.address(),
                POWERS_ON_WITHIN
            )));
        }
        tokio::time::sleep(HEALTHY_READ_PAUSE).await;
    }
}
