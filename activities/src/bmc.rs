//! Opening a Redfish client for a machine: BMC address from the site database, login from the
//! credential store, TLS trust from `[redfish] ca_bundle` / `insecure_skip_verify`, the reply
//! bound from `[redfish] max_response_bytes`, the inventory concurrency from `[redfish]
//! inventory_concurrency` and `expand`, the FirmwareInventory links remembered by the worker
//! (`Deps::link_cache`, shared by every client); a step that carries its own waits (`BmcWaits`) opens its client with
//! their request timeout and reset-Task bound (`client_with_waits`). Credentials
//! stay inside the returned client; they are never logged.

use std::path::PathBuf;
use std::sync::Once;

use hostfw_model::Secret;
use hostfw_redfish::{BmcEndpoint, ClientOptions, RedfishClient, RedfishError, WaitOptions};
use hostfw_store::{Machine, StoreError};
use hostfw_workflows::waits::BmcWaits;
use temporalio_common::ActivityError;

use crate::error;
use crate::{ActivitySettings, Deps};

/// Why no client could be opened.
#[derive(Debug, thiserror::Error)]
pub enum BmcSetupError {
    #[error("no BMC credentials for machine {machine} in the credential store and no [credentials] default")]
    NoCredentials { machine: String },
    #[error("reading the credentials of machine {machine}")]
    Store { machine: String, source: StoreError },
    #[error("[redfish] ca_bundle {}: cannot read it", path.display())]
    CaBundle { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Redfish(#[from] RedfishError),
}

/// The opt-out warning is logged once per process, not once per client.
static SKIP_VERIFY_WARNING: Once = Once::new();

/// The Redfish client options of the site: request timeout, reply bound and TLS trust. (Boxed error: the
/// `Redfish` variant makes `BmcSetupError` large.)
fn client_options(settings: &ActivitySettings) -> Result<ClientOptions, Box<BmcSetupError>> {
    let ca_bundle = match &settings.redfish_ca_bundle {
        Some(path) => Some(
            std::fs::read(path).map_err(|source| Box::new(BmcSetupError::CaBundle { path: path.clone(), source }))?,
        ),
        None => None,
    };
    if settings.redfish_insecure_skip_verify {
        SKIP_VERIFY_WARNING.call_once(|| {
            tracing::warn!(
                "[redfish] insecure_skip_verify = true: TLS certificates of BMCs are NOT verified; \
                 anyone on the BMC network can impersonate a BMC and read its credentials"
            );
        });
    }
    Ok(ClientOptions {
        request_timeout: settings.redfish_timeout,
        accept_invalid_certs: settings.redfish_insecure_skip_verify,
        ca_bundle,
        max_body_bytes: settings.redfish_max_response_bytes,
        // A host reset answered with a Task is polled like an update task; the bound stays the
        // client's (reset Tasks take seconds, not the minutes of a flash).
        reset_task_wait: WaitOptions {
            poll_interval: settings.task_poll_interval,
            timeout: settings.redfish_reset_task_timeout,
        },
        inventory_concurrency: settings.redfish_inventory_concurrency.max(1) as usize,
        expand: settings.redfish_expand,
        ..ClientOptions::default()
    })
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
async fn credentials(deps: &Deps, machine: &Machine) -> Result<(String, Secret), BmcSetupError> {
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
    open_with(deps, machine, &deps.settings).await
}

async fn open_with(
    deps: &Deps,
    machine: &Machine,
    settings: &ActivitySettings,
) -> Result<RedfishClient, BmcSetupError> {
    let (username, password) = credentials(deps, machine).await?;
    let endpoint = BmcEndpoint { address: machine.bmc_address.clone(), username, password };
    let options =
        ClientOptions { link_cache: Some(deps.link_cache.clone()), ..client_options(settings).map_err(|e| *e)? };
    Ok(RedfishClient::new(endpoint, options)?)
}

fn classify(e: BmcSetupError) -> ActivityError {
    match e {
        BmcSetupError::NoCredentials { .. } => error::not_found(e.to_string()),
        BmcSetupError::Store { source, .. } => error::store(source),
        // Checked at config load, so it went missing since: an operator has to put it back.
        BmcSetupError::CaBundle { .. } => error::not_found(hostfw_model::error_chain(&e)),
        BmcSetupError::Redfish(r) => error::redfish(r),
    }
}

/// [`open_client`] with its error classified for activity retries.
pub async fn client(deps: &Deps, machine: &Machine) -> Result<RedfishClient, ActivityError> {
    open_client(deps, machine).await.map_err(classify)
}

/// [`client`] for a step that runs with the waits its activity timeout was derived from: their
/// request timeout and reset-Task bound replace the worker's.
pub async fn client_with_waits(
    deps: &Deps,
    machine: &Machine,
    waits: &BmcWaits,
) -> Result<RedfishClient, ActivityError> {
    let mut settings = deps.settings.clone();
    settings.redfish_timeout = waits.request_timeout();
    settings.redfish_reset_task_timeout = waits.reset_task_within();
    open_with(deps, machine, &settings).await.map_err(classify)
}

/// The BMC login of `machine`, for the Core-local script route (its environment only).
pub async fn login(deps: &Deps, machine: &Machine) -> Result<(String, Secret), ActivityError> {
    credentials(deps, machine).await.map_err(classify)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn settings(ca_bundle: Option<PathBuf>, insecure: bool) -> ActivitySettings {
        ActivitySettings {
            redfish_timeout: Duration::from_secs(7),
            task_timeout: Duration::from_secs(60),
            task_poll_interval: Duration::from_secs(1),
            artifact_root: PathBuf::from("/nonexistent"),
            artifact_base_url: "http://127.0.0.1:1".into(),
            artifact_url_lifetime: Duration::from_secs(60),
            scout_scripts_dir: PathBuf::from("/nonexistent"),
            max_uploads: 1,
            default_credentials: None,
            redfish_ca_bundle: ca_bundle,
            redfish_insecure_skip_verify: insecure,
            redfish_max_response_bytes: 5 * 1024 * 1024,
            redfish_inventory_concurrency: 3,
            redfish_expand: false,
            redfish_reset_task_timeout: Duration::from_secs(42),
        }
    }

    #[test]
    fn site_tls_settings_reach_the_client_options() {
        let o = client_options(&settings(None, false)).unwrap();
        assert_eq!(o.request_timeout, Duration::from_secs(7));
        assert!(!o.accept_invalid_certs, "verification is on by default");
        assert!(o.ca_bundle.is_none());
        assert_eq!(o.max_body_bytes, 5 * 1024 * 1024, "[redfish] max_response_bytes reaches the client");
        assert_eq!(o.reset_task_wait.poll_interval, Duration::from_secs(1), "reset tasks are polled like update tasks");
        assert_eq!(
            o.reset_task_wait.timeout,
            Duration::from_secs(42),
            "[redfish] reset_task_timeout reaches the client"
        );
        assert_eq!(o.inventory_concurrency, 3, "[redfish] inventory_concurrency reaches the client");
        assert!(!o.expand, "[redfish] expand = false reaches the client");

        let o = client_options(&settings(None, true)).unwrap();
        assert!(o.accept_invalid_certs, "the site opt-out turns verification off");

        let path = std::env::temp_dir().join(format!("hostfw-bmc-ca-{}.pem", std::process::id()));
        std::fs::write(&path, b"PEM BYTES").unwrap();
        let o = client_options(&settings(Some(path.clone()), false)).unwrap();
        assert_eq!(o.ca_bundle.as_deref(), Some(&b"PEM BYTES"[..]));
        std::fs::remove_file(&path).unwrap();

        let e = client_options(&settings(Some(path.clone()), false)).unwrap_err();
        assert!(matches!(*e, BmcSetupError::CaBundle { .. }), "{e:?}");
        assert!(e.to_string().contains("ca_bundle") && e.to_string().contains(&path.display().to_string()), "{e}");
    }
}
