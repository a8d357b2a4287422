//! Why a fleet file, or a captured tree it names, cannot be used: [`FleetError`] and
//! [`ProfileError`]. Every message names the file, and the TOML line and column (syntax) or
//! the host and key (a wrong value). Owns no parsing; errors of a running simulator are not here.

use std::io;
use std::path::{Path, PathBuf};

/// Why a fleet file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The fleet file could not be read at all.
    #[error("cannot read fleet file {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Not TOML, or the wrong overall shape; the message has the line and column.
    #[error("fleet file {}: {message}", file_label(file))]
    Syntax { file: Option<PathBuf>, message: String },
    /// One key of one host (or of `[defaults]`) is wrong.
    #[error("fleet file {}: {location}: key `{key}`: {message}", file_label(file))]
    Host {
        file: Option<PathBuf>,
        /// `host "host-001"`, `host #3` (when it has no usable id), `[defaults]` or `fleet`.
        location: String,
        key: String,
        message: String,
    },
}

impl FleetError {
    /// Attach the file name to an error produced while parsing text.
    pub(crate) fn in_file(self, path: &Path) -> Self {
        match self {
            FleetError::Syntax { message, .. } => FleetError::Syntax { file: Some(path.into()), message },
            FleetError::Host { location, key, message, .. } => {
                FleetError::Host { file: Some(path.into()), location, key, message }
            }
            other => other,
        }
    }
}

/// A host's `profile` folder is not a usable captured Redfish tree.
#[derive(Debug, Clone, thiserror::Error)]
#[error("profile {}: {message}", dir.display())]
pub struct ProfileError {
    pub dir: PathBuf,
    pub message: String,
}

/// One key of one place (`host "a"`, `[defaults]`, `fleet`) is wrong.
pub(crate) fn host_err(location: &str, key: &str, message: &str) -> FleetError {
    FleetError::Host { file: None, location: location.into(), key: key.into(), message: message.into() }
}

/// `host "a"`, or `host #3` for a host without a usable id.
pub(crate) fn host_location(index: usize, id: Option<&str>) -> String {
    match id {
        Some(id) if !id.is_empty() => format!("host {id:?}"),
        _ => format!("host #{}", index + 1),
    }
}

fn file_label(file: &Option<PathBuf>) -> String {
    file.as_ref().map_or_else(|| "<text>".to_string(), |f| f.display().to_string())
}
