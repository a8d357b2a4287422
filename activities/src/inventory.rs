//! Inventory refresh (a Redfish crawl stored as the machine's explored report) and catalog lookup.

use hostfw_model::{HostModel, InventoryReport};
use hostfw_store::Machine;
use hostfw_workflows::CatalogQuery;
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::Deps;

/// Explore `machine`'s BMC and store the result: the report, or the error while keeping the last
/// good report. Shared by the workflow activity and the CLI's `site-explorer explore`.
pub async fn explore_machine(deps: &Deps, machine: &Machine) -> Result<InventoryReport, String> {
    let client = bmc::open_client(deps, machine).await.map_err(|e| e.to_string())?;
    let result = client.explore().await.map_err(|e| e.to_string());
    deps.store
        .report_put(&machine.bmc_address, Some(&machine.id), &result)
        .await
        .map_err(|e| format!("storing the report of {}: {e}", machine.id))?;
    result
}

/// The activity: explore and store, with Redfish errors classified for retries.
pub async fn refresh(deps: &Deps, machine_id: &str) -> Result<InventoryReport, ActivityError> {
    let machine = bmc::machine(deps, machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    let result = client.explore().await;
    let stored: Result<InventoryReport, String> = match &result {
        Ok(report) => Ok(report.clone()),
        Err(e) => Err(e.to_string()),
    };
    deps.store.report_put(&machine.bmc_address, Some(&machine.id), &stored).await.map_err(error::store)?;
    result.map_err(error::redfish)
}

/// The effective catalog entry for a vendor and model (one lookup rule everywhere:
/// `Catalog::find`).
pub fn catalog_lookup(deps: &Deps, query: &CatalogQuery) -> Option<HostModel> {
    deps.catalog.find(&query.vendor, &query.model).cloned()
}
