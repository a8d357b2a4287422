//! Connecting to the Temporal server: the one helper the worker, the `hostfw` CLI and Scout share.
//!
//! Where the connection comes from, first match wins:
//! 1. an address given explicitly ([`Endpoint::address`], e.g. Scout's `--temporal-address`);
//! 2. Temporal's standard environment settings: `TEMPORAL_ADDRESS`, `TEMPORAL_PROFILE` or
//!    `TEMPORAL_CONFIG_FILE` (and with them `TEMPORAL_TLS_*`, `TEMPORAL_API_KEY`), read by the SDK's
//!    envconfig loader;
//! 3. the fallback address ([`Endpoint::default_address`]: the site config's `[temporal] address`
//!    for the worker and the CLI, `localhost:7233` for Scout).
//!
//! The namespace is [`Endpoint::namespace`], else `TEMPORAL_NAMESPACE`, else the environment
//! profile's, else [`Endpoint::default_namespace`]. The connection's identity is `identity` unless
//! the environment profile names one.
//!
//! A crate of its own because its three users share no other crate that may link a Temporal client:
//! `hostfw-workflows` must stay free of side-effecting dependencies, `hostfw-model` is pure, and
//! Scout (on tenant hosts) must not link the activities' sqlx. It depends on the Temporal client only.

use temporalio_client::envconfig::LoadClientConfigProfileOptions;
use temporalio_client::{Client, ClientOptions, Connection, ConnectionOptions, Url};

/// Scout's fallback server when neither a flag nor the environment names one.
pub const DEFAULT_TEMPORAL_ADDRESS: &str = "localhost:7233";
/// Scout's fallback namespace when neither a flag nor the environment names one.
pub const DEFAULT_NAMESPACE: &str = "default";

/// Why no client could be had.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("temporal address {address:?} is not a valid URL")]
    BadAddress {
        address: String,
        #[source]
        source: url::ParseError,
    },
    #[error("Temporal environment settings: {message}")]
    Environment { message: String },
    #[error("cannot reach the Temporal server at {address}")]
    Unreachable {
        address: String,
        #[source]
        source: temporalio_client::errors::ClientConnectError,
    },
    #[error("Temporal client for {address}: {message}")]
    Client { address: String, message: String },
}

/// Which server and namespace to connect to (see the crate doc for the order).
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    /// Given explicitly: wins over the environment.
    pub address: Option<&'a str>,
    /// Given explicitly: wins over `TEMPORAL_NAMESPACE`.
    pub namespace: Option<&'a str>,
    /// Used when neither an explicit address nor the environment names a server.
    pub default_address: &'a str,
    /// Used when nothing else names a namespace.
    pub default_namespace: &'a str,
}

impl<'a> Endpoint<'a> {
    /// A configured server (e.g. the site config's `[temporal]` table) that the environment may
    /// override: the worker's and the CLI's.
    pub fn configured(address: &'a str, namespace: &'a str) -> Self {
        Endpoint { address: None, namespace: None, default_address: address, default_namespace: namespace }
    }
}

fn env_value(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// True when the environment configures the Temporal connection.
fn env_configured() -> bool {
    ["TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE"].iter().any(|k| env_value(k).is_some())
}

fn parse_address(address: &str) -> Result<Url, ConnectError> {
    let with_scheme = if address.contains("://") { address.to_string() } else { format!("http://{address}") };
    Url::parse(&with_scheme).map_err(|source| ConnectError::BadAddress { address: address.to_string(), source })
}

/// Connect a client, with a clear error naming the address when the server cannot be reached.
pub async fn connect(endpoint: Endpoint<'_>, identity: &str) -> Result<Client, ConnectError> {
    let (mut conn, mut opts, address) = match endpoint.address {
        None if env_configured() => {
            let (conn, opts) = ClientOptions::load_from_config(LoadClientConfigProfileOptions::default())
                .map_err(|e| ConnectError::Environment { message: e.to_string() })?;
            let address = conn.target.to_string();
            (conn, opts, address)
        }
        given => {
            let address = given.unwrap_or(endpoint.default_address);
            let conn = ConnectionOptions::new(parse_address(address)?).build();
            (conn, ClientOptions::new(endpoint.default_namespace.to_string()).build(), address.to_string())
        }
    };
    if let Some(ns) = endpoint.namespace.map(str::to_string).or_else(|| env_value("TEMPORAL_NAMESPACE")) {
        opts.namespace = ns;
    }
    if conn.identity.is_empty() {
        conn.identity = identity.to_string();
    }
    let connection = Connection::connect(conn)
        .await
        .map_err(|source| ConnectError::Unreachable { address: address.clone(), source })?;
    Client::new(connection, opts).map_err(|e| ConnectError::Client { address, message: e.to_string() })
}
