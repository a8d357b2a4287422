//! Platform steps around the update of an assigned host: platform lockdown off and on (through
//! the model's own property, from the catalog's `lockdown` setting), booting the discovery
//! environment and back to the host's own OS. Each step is idempotent: a retry after a
//! worker crash finds the host already in the wanted state and does nothing more.

use hostfw_redfish::RedfishClient;
use hostfw_store::Machine;
use hostfw_workflows::{PlatformInput, PlatformStep};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::host::activation::wait_power;
use crate::host::host_model::{host_model, HostIdentity};
use crate::host::reset_types;
use crate::Deps;

/// Run one platform step.
pub async fn platform(deps: &Deps, input: PlatformInput) -> Result<(), ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    // The waits the workflow derived this activity's timeout from (`BmcWaits::platform_budget`).
    let client = bmc::client_with_waits(deps, &machine, &input.waits).await?;
    let power_within = input.waits.power_state_within();
    match input.step {
        PlatformStep::Lockdown { enabled } => lockdown(deps, &machine, &client, enabled).await?,
        // Which image runs is known only where the BMC reports it (the simulator's generic
        // shape); a real BMC does not, so there each step boots: at least once, never skipped.
        PlatformStep::DiscoveryBoot => {
            if client.booted_image().await.map_err(error::redfish)?.as_deref() != Some("discovery") {
                client.set_boot_override("Pxe", "Once").await.map_err(error::redfish)?;
                client.reset_system(reset_types::SYSTEM_RESTART).await.map_err(error::redfish)?;
                wait_power(&client, "On", power_within).await?;
            }
        }
        PlatformStep::BootToOs => {
            if client.booted_image().await.map_err(error::redfish)?.as_deref() != Some("os") {
                client.reset_system(reset_types::SYSTEM_RESTART).await.map_err(error::redfish)?;
                wait_power(&client, "On", power_within).await?;
            }
        }
    }
    tracing::info!(machine_id = %machine.id, step = ?input.step, "platform step done");
    Ok(())
}

/// Lockdown through the model's own property (catalog `lockdown`). A model without one has no
/// lockdown to change: the step counts as done, and says so.
async fn lockdown(deps: &Deps, machine: &Machine, client: &RedfishClient, enabled: bool) -> Result<(), ActivityError> {
    let HostIdentity { vendor, model, entry } = host_model(deps, machine, client).await?;
    let Some(setting) = entry.and_then(|m| m.lockdown) else {
        tracing::info!(machine_id = %machine.id, %vendor, %model, enabled,
            "platform lockdown not supported on this model (no catalog lockdown setting): counted as done");
        return Ok(());
    };
    let state = client.lockdown_state(&setting).await.map_err(error::redfish)?;
    if state.effective() == enabled {
        return Ok(());
    }
    let deferred = client.set_lockdown_at(&setting, enabled).await.map_err(error::redfish)?;
    if deferred {
        tracing::info!(machine_id = %machine.id, enabled, "platform lockdown change runs after the next host reset");
    }
    Ok(())
}
