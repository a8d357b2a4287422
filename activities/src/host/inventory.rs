//! Inventory refresh (a Redfish crawl stored as the machine's explored report) and catalog lookup.

use hostfw_model::InventoryReport;
use hostfw_redfish::{RedfishClient, RedfishError};
use hostfw_store::{Machine, StoreError};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::Deps;

/// Explore with `client` and store the result as `machine`'s explored report: the report, or the
/// error while keeping the last good report. The outer error is the store's, the inner the BMC's.
async fn explore_and_store(
    deps: &Deps,
    machine: &Machine,
    client: &RedfishClient,
) -> Result<Result<InventoryReport, RedfishError>, StoreError> {
    let result = client.explore().await;
    let stored = result.as_ref().map(Clone::clone).map_err(ToString::to_string);
    deps.store.report_put(&machine.bmc_address, Some(&machine.id), &stored).await?;
    Ok(result)
}

/// Explore `machine`'s BMC and store the result. Used by the CLI's `site-explorer explore`.
pub async fn explore_machine(deps: &Deps, machine: &Machine) -> Result<InventoryReport, String> {
    let client = bmc::open_client(deps, machine).await.map_err(|e| hostfw_model::error_chain(&e))?;
    explore_and_store(deps, machine, &client)
        .await
        .map_err(|e| format!("storing the report of {}: {e}", machine.id))?
        .map_err(|e| hostfw_model::error_chain(&e))
}

/// The activity: explore and store, with errors classified for retries.
pub async fn refresh(deps: &Deps, machine_id: &str) -> Result<InventoryReport, ActivityError> {
    let machine = bmc::machine(deps, machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    explore_and_store(deps, &machine, &client).await.map_err(error::store)?.map_err(error::redfish)
}
