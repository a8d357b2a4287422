//! Platform steps around the update of an assigned host: platform lockdown off and on, booting the
//! discovery environment and back to the host's own OS. Each step is idempotent: a retry after a
//! worker crash finds the host already in the wanted state and does nothing more.

use hostfw_workflows::{PlatformInput, PlatformStep};
use temporalio_common::ActivityError;

use crate::activation::wait_power;
use crate::bmc;
use crate::error;
use crate::reset_types;
use crate::Deps;

/// Run one platform step.
pub async fn platform(deps: &Deps, input: PlatformInput) -> Result<(), ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    match input.step {
        PlatformStep::Lockdown { enabled } => {
            if client.lockdown().await.map_err(error::redfish)? != Some(enabled) {
                client.set_lockdown(enabled).await.map_err(error::redfish)?;
            }
        }
        PlatformStep::DiscoveryBoot => {
            if client.booted_image().await.map_err(error::redfish)?.as_deref() != Some("discovery") {
                client.set_boot_override("Pxe", "Once").await.map_err(error::redfish)?;
                client.reset_system(reset_types::SYSTEM_RESTART).await.map_err(error::redfish)?;
                wait_power(&client, "On").await?;
            }
        }
        PlatformStep::BootToOs => {
            if client.booted_image().await.map_err(error::redfish)?.as_deref() == Some("discovery") {
                client.reset_system(reset_types::SYSTEM_RESTART).await.map_err(error::redfish)?;
                wait_power(&client, "On").await?;
            }
        }
    }
    tracing::info!(machine = %machine.id, step = ?input.step, "platform step done");
    Ok(())
}
