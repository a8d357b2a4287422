//! Opening a Redfish client for a machine: BMC address from the site database, login from the
//! credential store. Credentials stay inside the returned client; they are never logged.

use hostfw_redfish::{BmcEndpoint, ClientOptions, RedfishClient, RedfishError};
use hostfw_store::{Machine, StoreError};
use temporalio_common::ActivityError;

use crate::error;
use crate::Deps;

/// Why no client could be opened.
#[derive(Debug, thiserror::Error)]
pub enum BmcSetupError {
    #[error("no BMC credentials for machine {machine} in the credential store and no [credentials] default")]
    NoCredentials { machine: String },
    #[error("reading the credentials of machine {machine}: {source}")]
    Store { machine: String, source: StoreError },
    #[error(transparent)]
    Redfish(#[from] RedfishError),
}

/// The machine row, or a non-retryable NotFound.
pub async fn machine(deps: &Deps, machine_id: &str) -> Result<Machine, ActivityError> {
    deps.store
        .machine_get(machine_id)
        .await
        .map_err(error::store)?
        .ok_or_else(|| error::not_found(format!("machine {machine_id} is not registered")))
}

/// The BMC login of `machine`: the credential store, else the site default.
async fn credentials(deps: &Deps, machine: &Machine) -> Result<(String, String), BmcSetupError> {
    let stored = deps
        .store
        .credentials_get(&machine.id)
        .await
        .map_err(|source| BmcSetupError::Store { machine: machine.id.clone(), source })?;
    let (username, password) = match stored {
        Some(c) => (c.username, c.password),
        None => deps
            .settings
            .default_credentials
            .clone()
            .ok_or_else(|| BmcSetupError::NoCredentials { machine: machine.id.clone() })?,
    };
    Ok((username, password))
}

/// A Redfish client for `machine`'s BMC.
pub async fn open_client(deps: &Deps, machine: &Machine) -> Result<RedfishClient, BmcSetupError> {
    let (username, password) = credentials(deps, machine).await?;
    let endpoint = BmcEndpoint { address: machine.bmc_address.clone(), username, password };
    let options = ClientOptions { request_timeout: deps.settings.redfish_timeout, ..ClientOptions::default() };
    Ok(RedfishClient::new(endpoint, options)?)
}

fn classify(e: BmcSetupError) -> ActivityError {
    match e {
        BmcSetupError::NoCredentials { .. } => error::not_found(e.to_string()),
        BmcSetupError::Store { source, .. } => error::store(source),
        BmcSetupError::Redfish(r) => error::redfish(r),
    }
}

/// [`open_client`] with its error classified for activity retries.
pub async fn client(deps: &Deps, machine: &Machine) -> Result<RedfishClient, ActivityError> {
    open_client(deps, machine).await.map_err(classify)
}

/// The BMC login of `machine`, for the Core-local script route (its environment only).
pub async fn login(deps: &Deps, machine: &Machine) -> Result<(String, String), ActivityError> {
    credentials(deps, machine).await.map_err(classify)
}
