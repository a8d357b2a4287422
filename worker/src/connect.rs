//! Connecting the worker to the site's Temporal server: `hostfw_connect` with the site config's
//! `[temporal]` table as the fallback (Temporal's standard environment settings win).

use hostfw_connect::{ConnectError, Endpoint};
use hostfw_model::SiteConfig;
use temporalio_client::Client;

/// Connect a client to the site's server (see `hostfw_connect` for the order of sources).
pub async fn connect(site: &SiteConfig, identity: &str) -> anyhow::Result<Client> {
    Ok(connect_endpoint(site, identity).await?)
}

/// [`connect`] with the typed error, so a caller can tell an unreachable server (worth retrying:
/// `startup::connect_temporal`) from a bad address.
pub async fn connect_endpoint(site: &SiteConfig, identity: &str) -> Result<Client, ConnectError> {
    let endpoint = Endpoint::configured(&site.temporal.address, &site.temporal.namespace);
    hostfw_connect::connect(endpoint, identity).await
}
