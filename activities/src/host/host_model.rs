//! The catalog entry of the host a BMC serves, for the activities that need a per-model setting
//! (lockdown, AC power cycle). Owns the one rule for "which vendor and model is this machine":
//! the stored inventory, else the machine record, else read from the BMC now.

use hostfw_model::HostModel;
use hostfw_redfish::RedfishClient;
use hostfw_store::Machine;
use temporalio_common::ActivityError;

use crate::error;
use crate::Deps;

/// A machine's reported identity and its catalog entry, if any.
pub struct HostIdentity {
    pub vendor: String,
    pub model: String,
    pub entry: Option<HostModel>,
}

/// Look up the machine's catalog entry.
pub async fn host_model(deps: &Deps, machine: &Machine, client: &RedfishClient) -> Result<HostIdentity, ActivityError> {
    let (vendor, model) = identity(deps, machine, client).await?;
    let catalog = deps.catalog.current().await.map_err(error::catalog)?;
    let entry = catalog.find(&vendor, &model).cloned();
    Ok(HostIdentity { vendor, model, entry })
}

async fn identity(deps: &Deps, machine: &Machine, client: &RedfishClient) -> Result<(String, String), ActivityError> {
    let report = deps
        .store
        .report_get(&hostfw_model::BmcLookup::from(machine.bmc_address.clone()))
        .await
        .ok()
        .flatten()
        .and_then(|r| r.report);
    if let Some(r) = report.filter(|r| !r.vendor.is_empty() && !r.model.is_empty()) {
        return Ok((r.vendor, r.model));
    }
    if let (Some(v), Some(m)) = (&machine.vendor, &machine.model) {
        return Ok((v.clone(), m.clone()));
    }
    let r = client.explore().await.map_err(error::redfish)?;
    Ok((r.vendor, r.model))
}
