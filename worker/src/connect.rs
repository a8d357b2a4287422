//! Connecting the worker to the site's Temporal server: `hostfw_connect` with the site config's
//! `[temporal]` table as the fallback (Temporal's standard environment settings win).

use hostfw_connect::Endpoint;
use hostfw_model::SiteConfig;
use temporalio_client::Client;

/// Connect a client to the site's server (see `hostfw_connect` for the order of sources).
pub async fn connect(site: &SiteConfig, identity: &str) -> anyhow::Result<Client> {
    let endpoint = Endpoint::configured(&site.temporal.address, &site.temporal.namespace);
    Ok(hostfw_connect::connect(endpoint, identity).await?)
}
