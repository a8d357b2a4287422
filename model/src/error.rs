//! Every error this crate returns, with structured fields (file, key, position, problem).
//!
//! Owns the error enums and their messages only. It must not decide *when* something is an error:
//! the config loader, the catalog loader and the name parsers do that.

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

/// A 1-based line and column in a TOML file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPos {
    pub line: usize,
    pub column: usize,
}

impl TextPos {
    /// The position of byte offset `offset` inside `text` (clamped to the text's length).
    pub fn of_offset(text: &str, offset: usize) -> TextPos {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        TextPos { line, column }
    }
}

impl fmt::Display for TextPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Renders `file[:line:col]` for the error messages below.
fn located(file: &std::path::Path, at: &Option<TextPos>) -> String {
    match at {
        Some(pos) => format!("{}:{pos}", file.display()),
        None => file.display().to_string(),
    }
}

/// The site config file (`SiteConfig::load`) could not be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read the site config", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file was read but a key is wrong (syntax, unknown key, wrong type, bad value).
    #[error("{}: `{key}`: {problem}", located(file, at))]
    Invalid {
        file: PathBuf,
        /// Dotted key path, e.g. `redfish.timeout` or `host_models.r760.components.bmc`.
        key: String,
        /// Where in the file, when the TOML parser knows it.
        at: Option<TextPos>,
        problem: String,
    },
}

/// The firmware catalog (static `[host_models.*]` plus the directory overlay) could not be built.
#[derive(Debug, Error)]
pub enum CatalogError {
    /// A catalog file or the firmware directory could not be read.
    #[error("{}: cannot read the firmware catalog", file.display())]
    Read {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A catalog entry is wrong; `key` is the full key path inside `file`.
    #[error("{}: `{key}`: {problem}", located(file, at))]
    Invalid {
        file: PathBuf,
        /// Dotted key path, e.g. `host_models.r760.components.bmc.known_firmware[1].default`.
        key: String,
        at: Option<TextPos>,
        problem: String,
    },
}

impl CatalogError {
    /// The file (or stored document label) the error is about.
    pub fn file(&self) -> &std::path::Path {
        match self {
            CatalogError::Read { file, .. } | CatalogError::Invalid { file, .. } => file,
        }
    }
}

/// A name (component type, host substate, host state) that is not one of the known names.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {what} `{value}`; expected one of: {expected}")]
pub struct ParseNameError {
    /// What kind of name was parsed, e.g. "component type".
    pub what: &'static str,
    /// The rejected input, verbatim.
    pub value: String,
    /// The accepted names, comma-separated.
    pub expected: String,
}

/// A duration value that is not an integer of seconds or a number with an `ms`/`s`/`m`/`h` suffix.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid duration `{value}`: {problem}")]
pub struct DurationError {
    pub value: String,
    pub problem: String,
}

/// A `current_version_reported_as` pattern that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid regex `{pattern}`: {problem}")]
pub struct MatcherError {
    pub pattern: String,
    pub problem: String,
}

/// A BMC address (`BmcAddress`, `BmcLookup`) that cannot be parsed: the input and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid BMC address {input:?}: {problem}")]
pub struct BmcAddressError {
    /// The rejected input, trimmed; a user-info part (`user:password@`) is shown as `***@`.
    pub input: String,
    pub problem: BmcAddressProblem,
}

/// Why a BMC address was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BmcAddressProblem {
    #[error("it is empty; expected [http(s)://]host[:port][/prefix]")]
    Empty,
    #[error("it has no host; expected [http(s)://]host[:port][/prefix]")]
    EmptyHost,
    #[error("unknown scheme {scheme:?}: a BMC is reached over http:// or https://")]
    UnknownScheme { scheme: String },
    #[error("user-info (user:password@) is not allowed in an address: the BMC login is stored separately")]
    UserInfo,
    #[error("a query (?...) is not allowed in an address")]
    Query,
    #[error("a fragment (#...) is not allowed in an address")]
    Fragment,
    #[error("port {port:?} is not a number from 1 to 65535")]
    PortNotANumber { port: String },
    #[error("port 0 is not a port a BMC can listen on")]
    PortZero,
    #[error("host {host:?}: {reason}")]
    InvalidHost { host: String, reason: String },
    #[error("path prefix {path:?}: {reason}")]
    InvalidPath { path: String, reason: String },
}

/// `err` and each of its sources, joined by ": ": how an error is written where only text can go
/// (an activity failure message, a report). Messages name their own context only and mark the
/// cause as `#[source]`; this is the one place that puts the chain together.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut next = err.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod chain_tests {
    use super::*;

    #[test]
    fn the_chain_names_every_cause_once() {
        let e = ConfigError::Read {
            file: "/etc/hostfw/site.toml".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory"),
        };
        assert_eq!(error_chain(&e), "/etc/hostfw/site.toml: cannot read the site config: No such file or directory");
    }
}
