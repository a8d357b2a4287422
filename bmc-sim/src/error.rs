//! The library's one error type, [`SimError`]: what can go wrong loading a fleet file or
//! starting a fleet. Errors answered to HTTP clients are NOT here (see `redfish_error`).

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Everything the simulator library can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The fleet file could not be read at all.
    #[error("cannot read fleet file {}", path.display())]
    ReadFleetFile {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The fleet text is not valid TOML (or has the wrong overall shape).
    #[error("fleet file {}: {message}", file_label(file))]
    FleetSyntax { file: Option<PathBuf>, message: String },

    /// One key of one host (or of `[defaults]`) is wrong.
    #[error("fleet file {}: {location}: key `{key}`: {message}", file_label(file))]
    FleetSpec {
        file: Option<PathBuf>,
        /// `host "host-001"`, `host #3` (when it has no usable id), `[defaults]` or `fleet`.
        location: String,
        key: String,
        message: String,
    },

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
    #[error("profile {}: {message}", dir.display())]
    Profile { dir: PathBuf, message: String },
}

impl SimError {
    /// Attach the file name to a spec error produced while parsing text.
    pub(crate) fn in_file(self, path: PathBuf) -> Self {
        match self {
            SimError::FleetSyntax { message, .. } => SimError::FleetSyntax { file: Some(path), message },
            SimError::FleetSpec { location, key, message, .. } => {
                SimError::FleetSpec { file: Some(path), location, key, message }
            }
            other => other,
        }
    }
}

fn file_label(file: &Option<PathBuf>) -> String {
    match file {
        Some(p) => p.display().to_string(),
        None => "<text>".to_string(),
    }
}
