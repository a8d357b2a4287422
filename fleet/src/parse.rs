//! The fleet file's TOML form: the file as written ([`RawFleet`]: top-level `tls`, optional
//! `[defaults]`, `[[host]]` tables), `[defaults]` checked on their own and merged into each host
//! (a host's `labels` merged over the default ones key by key, any other key replaced as a
//! whole), every host key type-checked (an unknown key is refused), each host's `profile`
//! resolved. Errors name the line and column, or the place (`[defaults]`, the host) and the key.
//! Owns no rule about the values (that is `spec` and `fleet`) and builds no consumer's view.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{host_err, host_location, FleetError};
use crate::fault::Fault;
use crate::spec::{ApplyTime, FirmwareSpec, HostSpec, TaskStyle, UploadStyle};

/// The fleet file as written, before `[defaults]` are merged into each host.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFleet {
    #[serde(default)]
    tls: Option<bool>,
    #[serde(default)]
    defaults: Option<toml::Table>,
    #[serde(default)]
    host: Vec<toml::Table>,
}

/// A fleet file read: the `tls` key as written, and every host with `[defaults]` merged in and
/// its profile resolved (values not checked yet).
pub(crate) struct Parsed {
    pub tls: Option<bool>,
    pub hosts: Vec<ParsedHost>,
}

pub(crate) struct ParsedHost {
    pub spec: HostSpec,
    /// Whether the file gives the host any `labels` (its own or default ones).
    pub labels_written: bool,
}

/// `[defaults]` checked on its own so a wrong default is blamed on `[defaults]`, not a host.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // only deserialized, for its errors
struct DefaultsCheck {
    vendor: Option<String>,
    model: Option<String>,
    serial: Option<String>,
    labels: Option<BTreeMap<String, String>>,
    username: Option<String>,
    password: Option<String>,
    upload_style: Option<UploadStyle>,
    task_style: Option<TaskStyle>,
    apply_time: Option<ApplyTime>,
    task_seconds: Option<f64>,
    reset_seconds: Option<f64>,
    manager_reset_seconds: Option<f64>,
    lockdown: Option<bool>,
    faults: Option<Fault>,
    profile: Option<PathBuf>,
    required_parts: Option<Vec<String>>,
    targets_required: Option<bool>,
    expand_query: Option<bool>,
    firmware: Option<Vec<FirmwareSpec>>,
}

/// The text of a fleet file and the folder its `profile` paths are relative to.
pub(crate) fn read_file(path: &Path) -> Result<(String, &Path), FleetError> {
    let text = std::fs::read_to_string(path).map_err(|source| FleetError::Read { path: path.to_path_buf(), source })?;
    Ok((text, path.parent().unwrap_or(Path::new("."))))
}

/// Merge `[defaults]` into each host, type-check every key and resolve profiles.
pub(crate) fn parse(raw: RawFleet, base: &Path) -> Result<Parsed, FleetError> {
    let defaults = raw.defaults.unwrap_or_default();
    deserialize_located::<DefaultsCheck>(&defaults, "[defaults]")?;
    let mut hosts = Vec::with_capacity(raw.host.len());
    for (i, table) in raw.host.into_iter().enumerate() {
        let loc = host_location(i, table.get("id").and_then(|v| v.as_str()));
        let merged = merge(&defaults, table);
        let labels_written = merged.contains_key("labels");
        let mut spec = deserialize_located::<HostSpec>(&merged, &loc)?;
        spec.apply_profile(base).map_err(|(key, msg)| host_err(&loc, &key, &msg))?;
        hosts.push(ParsedHost { spec, labels_written });
    }
    Ok(Parsed { tls: raw.tls, hosts })
}

/// A host's table over `[defaults]`: its keys replace the default ones, but `labels` tables
/// are merged key by key (the host's value wins).
fn merge(defaults: &toml::Table, host: toml::Table) -> toml::Table {
    let mut merged = defaults.clone();
    for (key, value) in host {
        match (key.as_str(), merged.get_mut(&key), value) {
            ("labels", Some(toml::Value::Table(under)), toml::Value::Table(over)) => under.extend(over),
            (_, _, value) => {
                merged.insert(key, value);
            }
        }
    }
    merged
}

/// Deserialize a table, turning serde's error into one that names the key.
fn deserialize_located<T: serde::de::DeserializeOwned>(table: &toml::Table, location: &str) -> Result<T, FleetError> {
    let value = toml::Value::Table(table.clone());
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        // toml appends "\nin `key`" lines; the path already names the key.
        let full = e.inner().to_string();
        let message = full.lines().next().unwrap_or_default().trim().to_string();
        let key = if path.is_empty() || path == "." { first_backticked(&message) } else { path };
        host_err(location, &key, &message)
    })
}

/// serde names missing/unknown fields as "missing field `x`": use `x` as the key.
fn first_backticked(message: &str) -> String {
    message.split('`').nth(1).unwrap_or("?").to_string()
}
