//! Connecting Scout to the Temporal server: flags first, then Temporal's standard environment
//! settings (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, and with them `TEMPORAL_PROFILE`,
//! `TEMPORAL_CONFIG_FILE`, `TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`), then `localhost:7233` /
//! `default`.

use anyhow::{anyhow, Context};
use temporalio_client::envconfig::LoadClientConfigProfileOptions;
use temporalio_client::{Client, ClientOptions, Connection, ConnectionOptions, Url};

/// Server used when neither a flag nor the environment names one.
pub const DEFAULT_TEMPORAL_ADDRESS: &str = "localhost:7233";
/// Namespace used when neither a flag nor the environment names one.
pub const DEFAULT_NAMESPACE: &str = "default";

fn env_value(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// True when the environment configures the Temporal connection.
fn env_configured() -> bool {
    ["TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE"].iter().any(|k| env_value(k).is_some())
}

fn parse_address(address: &str) -> anyhow::Result<Url> {
    let with_scheme = if address.contains("://") { address.to_string() } else { format!("http://{address}") };
    Url::parse(&with_scheme).with_context(|| format!("temporal address {address:?} is not a valid URL"))
}

/// Connect a client; `address` and `namespace` are the command-line flags, if given.
pub async fn connect(address: Option<&str>, namespace: Option<&str>, identity: &str) -> anyhow::Result<Client> {
    let (mut conn, mut opts) = match address {
        None if env_configured() => ClientOptions::load_from_config(LoadClientConfigProfileOptions::default())
            .map_err(|e| anyhow!("Temporal environment settings: {e}"))?,
        _ => {
            let url = parse_address(address.unwrap_or(DEFAULT_TEMPORAL_ADDRESS))?;
            (ConnectionOptions::new(url).build(), ClientOptions::new(DEFAULT_NAMESPACE).build())
        }
    };
    if let Some(ns) = namespace.map(str::to_string).or_else(|| env_value("TEMPORAL_NAMESPACE")) {
        opts.namespace = ns;
    }
    if conn.identity.is_empty() {
        conn.identity = identity.to_string();
    }
    let target = conn.target.to_string();
    let connection =
        Connection::connect(conn).await.with_context(|| format!("cannot reach the Temporal server at {target}"))?;
    Client::new(connection, opts).map_err(|e| anyhow!("Temporal client for {target}: {e}"))
}
