//! Connecting to the Temporal server.
//!
//! Temporal's standard environment settings win (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, and
//! with them `TEMPORAL_PROFILE`, `TEMPORAL_CONFIG_FILE`, `TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`,
//! read by the SDK's envconfig loader); otherwise the `[temporal]` table of the site config.

use anyhow::{anyhow, Context};
use hostfw_model::SiteConfig;
use temporalio_client::envconfig::LoadClientConfigProfileOptions;
use temporalio_client::{Client, ClientOptions, Connection, ConnectionOptions, Url};

/// True when the environment configures the Temporal connection.
fn env_configured() -> bool {
    ["TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE"]
        .iter()
        .any(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
}

fn parse_address(address: &str) -> anyhow::Result<Url> {
    let with_scheme = if address.contains("://") { address.to_string() } else { format!("http://{address}") };
    Url::parse(&with_scheme).with_context(|| format!("temporal address {address:?} is not a valid URL"))
}

/// Connect a client, with a clear error naming the address when the server cannot be reached.
pub async fn connect(site: &SiteConfig, identity: &str) -> anyhow::Result<Client> {
    let (conn, mut opts, address) = if env_configured() {
        let (conn, opts) = ClientOptions::load_from_config(LoadClientConfigProfileOptions::default())
            .map_err(|e| anyhow!("Temporal environment settings: {e}"))?;
        let address = conn.target.to_string();
        (conn, opts, address)
    } else {
        let url = parse_address(&site.temporal.address)?;
        let conn = ConnectionOptions::new(url).identity(identity.to_string()).build();
        (conn, ClientOptions::new(site.temporal.namespace.clone()).build(), site.temporal.address.clone())
    };
    if let Ok(ns) = std::env::var("TEMPORAL_NAMESPACE") {
        if !ns.is_empty() {
            opts.namespace = ns;
        }
    }
    let connection = Connection::connect(conn)
        .await
        .with_context(|| format!("cannot reach the Temporal server at {address}"))?;
    Client::new(connection, opts).map_err(|e| anyhow!("Temporal client for {address}: {e}"))
}
