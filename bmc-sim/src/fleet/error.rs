//! The library's one error type, [`SimError`]: what can go wrong loading a fleet file or
//! starting a fleet. Errors answered to HTTP clients are NOT here (see `http::error`).

use std::io;
use std::net::SocketAddr;

/// Everything the simulator library can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The fleet file cannot be read or is wrong (it names the file, and the line or the host and key).
    #[error(transparent)]
    Fleet(#[from] hostfw_fleet::FleetError),

    /// A host's listener could not be bound.
    #[error("host {host}: cannot listen on {addr}")]
    Bind {
        host: String,
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },

    /// A runtime call named a host the fleet does not have.
    #[error("no host {host:?} in this fleet")]
    UnknownHost { host: String },

    /// A fault set given at run time is invalid for this host.
    #[error("host {host:?}: fault key `{key}`: {message}")]
    InvalidFault { host: String, key: String, message: String },

    /// The HTTP client for SimpleUpdate image fetches could not be built.
    #[error("cannot build the HTTP client for SimpleUpdate fetches")]
    HttpClient {
        #[source]
        source: reqwest::Error,
    },

    /// The fleet CA or a BMC's TLS certificate could not be made (`tls = true`).
    #[error("cannot set up TLS for the fleet: {message}")]
    Tls { message: String },

    /// A host's `profile` folder is not a usable captured Redfish tree.
    #[error(transparent)]
    Profile(#[from] hostfw_fleet::ProfileError),
}
