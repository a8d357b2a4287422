//! [`FleetRoster`]: the part of a bmc-sim fleet file that registers machines (`hostfw machine
//! import`): the fleet's `tls` (https unless the file writes `tls = false`), and per host its id, BMC address, vendor, model and login, with
//! `[defaults]` merged in, and its `labels`. bmc-sim keeps the full fleet format (`hostfw_bmc_sim::FleetSpec`: faults,
//! firmware, task styles, …); this reads the same file and ignores the keys that only the simulator
//! uses, so the CLI does not link the simulator.
//!
//! Errors name the file, and the TOML line and column (syntax) or the host and key (a wrong
//! value), as bmc-sim's own do. A host with a `profile` (a captured Redfish tree, relative to the
//! fleet file) and no `vendor`/`model` takes them from the tree's ComputerSystem that reports both
//! (preferring the one with the Reset action), as bmc-sim serves it.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::labels::Labels;
use serde_json::Value;

/// bmc-sim's default BMC user name.
const DEFAULT_USERNAME: &str = "admin";
/// bmc-sim's default BMC password.
const DEFAULT_PASSWORD: &str = "password";

/// A fleet file's hosts, as registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetRoster {
    /// Every BMC serves HTTPS: `tls = true`, or no `tls` key at all (registration means https
    /// unless told otherwise, as `machine add` does). Plain http only where the file writes
    /// `tls = false` (bmc-sim's own default is http, so a file meant for it says so).
    pub tls: bool,
    pub hosts: Vec<RosterHost>,
}

/// One host of a fleet file, `[defaults]` merged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterHost {
    pub id: String,
    /// Where the simulated BMC listens.
    pub bmc_address: SocketAddr,
    pub vendor: String,
    pub model: String,
    pub username: String,
    pub password: String,
    /// The host's `labels = { rack = "r12" }` (failure domains); `None` when the file gives none
    /// (registering it again keeps the stored labels).
    pub labels: Option<Labels>,
}

/// Why a fleet file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum FleetRosterError {
    #[error("cannot read fleet file {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not TOML, or the wrong overall shape; the message has the line and column.
    #[error("fleet file {}: {message}", label(file))]
    Syntax { file: Option<PathBuf>, message: String },
    /// One key of one host (or of `[defaults]`) is wrong.
    #[error("fleet file {}: {location}: key `{key}`: {message}", label(file))]
    Host { file: Option<PathBuf>, location: String, key: String, message: String },
}

fn label(file: &Option<PathBuf>) -> String {
    file.as_ref().map_or_else(|| "<text>".to_string(), |f| f.display().to_string())
}

impl FleetRosterError {
    fn in_file(self, path: &Path) -> Self {
        match self {
            FleetRosterError::Syntax { message, .. } => FleetRosterError::Syntax { file: Some(path.into()), message },
            FleetRosterError::Host { location, key, message, .. } => {
                FleetRosterError::Host { file: Some(path.into()), location, key, message }
            }
            other => other,
        }
    }
}

/// The file as written, before `[defaults]` are merged into each host.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFleet {
    #[serde(default)]
    tls: Option<bool>,
    #[serde(default)]
    defaults: Option<toml::Table>,
    #[serde(default)]
    host: Vec<toml::Table>,
}

/// The keys of a host this reads; the simulator's other keys are ignored.
#[derive(Deserialize)]
struct RawHost {
    id: String,
    bmc_address: SocketAddr,
    #[serde(default)]
    vendor: String,
    #[serde(default)]
    model: String,
    #[serde(default = "default_username")]
    username: String,
    #[serde(default = "default_password")]
    password: String,
    #[serde(default)]
    profile: Option<PathBuf>,
    #[serde(default)]
    labels: Option<Labels>,
}

fn default_username() -> String {
    DEFAULT_USERNAME.into()
}
fn default_password() -> String {
    DEFAULT_PASSWORD.into()
}

impl FleetRoster {
    /// Read a fleet file; errors name the file, and the line or the host and key.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, FleetRosterError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| FleetRosterError::Read { path: path.to_path_buf(), source })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml_str_in(&text, base).map_err(|e| e.in_file(path))
    }

    /// Parse fleet TOML text whose `profile` folders are relative to `base`.
    pub fn from_toml_str_in(text: &str, base: &Path) -> Result<Self, FleetRosterError> {
        let raw: RawFleet =
            toml::from_str(text).map_err(|e| FleetRosterError::Syntax { file: None, message: e.to_string() })?;
        let defaults = raw.defaults.unwrap_or_default();
        let mut hosts = Vec::with_capacity(raw.host.len());
        for (i, table) in raw.host.into_iter().enumerate() {
            let location = host_location(i, table.get("id").and_then(|v| v.as_str()));
            let mut merged = defaults.clone();
            merged.extend(table);
            let host = deserialize_located(merged, &location)?;
            hosts.push(resolve(host, base, &location)?);
        }
        let roster = FleetRoster { tls: raw.tls.unwrap_or(true), hosts };
        roster.validate()?;
        Ok(roster)
    }

    /// What every registration needs: hosts, unique ids, one BMC per host.
    fn validate(&self) -> Result<(), FleetRosterError> {
        if self.hosts.is_empty() {
            return Err(host_err("fleet", "host", "no [[host]] entries"));
        }
        let mut ids = BTreeSet::new();
        let mut addrs = BTreeSet::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let location = host_location(i, Some(&h.id));
            if !ids.insert(h.id.as_str()) {
                return Err(host_err(&location, "id", "duplicate host id"));
            }
            if h.bmc_address.port() != 0 && !addrs.insert(h.bmc_address) {
                let message = format!("{} is already used by another host", h.bmc_address);
                return Err(host_err(&location, "bmc_address", &message));
            }
        }
        Ok(())
    }
}

fn resolve(raw: RawHost, base: &Path, location: &str) -> Result<RosterHost, FleetRosterError> {
    if raw.id.trim().is_empty() || raw.id.chars().any(char::is_whitespace) {
        return Err(host_err(location, "id", &format!("{:?} must be non-empty and contain no whitespace", raw.id)));
    }
    if raw.username.is_empty() || raw.username.contains(':') {
        return Err(host_err(location, "username", "must be non-empty and contain no ':'"));
    }
    let (mut vendor, mut model) = (raw.vendor, raw.model);
    if let Some(dir) = &raw.profile {
        if vendor.trim().is_empty() || model.trim().is_empty() {
            let (v, m) = profile_identity(&base.join(dir)).map_err(|e| host_err(location, "profile", &e))?;
            if vendor.trim().is_empty() {
                vendor = v;
            }
            if model.trim().is_empty() {
                model = m;
            }
        }
    }
    for (key, value) in [("vendor", &vendor), ("model", &model)] {
        if value.trim().is_empty() {
            return Err(host_err(location, key, "must be non-empty (or come from a `profile`)"));
        }
    }
    if let Some(labels) = &raw.labels {
        crate::labels::check_labels(labels).map_err(|e| host_err(location, "labels", &e.to_string()))?;
    }
    Ok(RosterHost {
        labels: raw.labels,
        id: raw.id,
        bmc_address: raw.bmc_address,
        vendor,
        model,
        username: raw.username,
        password: raw.password,
    })
}

/// Deserialize a host table, turning serde's error into one that names the key.
fn deserialize_located(table: toml::Table, location: &str) -> Result<RawHost, FleetRosterError> {
    serde_path_to_error::deserialize::<_, RawHost>(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        // toml appends "\nin `key`" lines; the path already names the key.
        let full = e.inner().to_string();
        let message = full.lines().next().unwrap_or_default().trim().to_string();
        let key =
            if path.is_empty() || path == "." { message.split('`').nth(1).unwrap_or("?").to_string() } else { path };
        host_err(location, &key, &message)
    })
}

fn host_location(index: usize, id: Option<&str>) -> String {
    match id {
        Some(id) if !id.is_empty() => format!("host {id:?}"),
        _ => format!("host #{}", index + 1),
    }
}

fn host_err(location: &str, key: &str, message: &str) -> FleetRosterError {
    FleetRosterError::Host { file: None, location: location.into(), key: key.into(), message: message.into() }
}

/// The vendor and model a captured Redfish tree reports: its ComputerSystem with both
/// `Manufacturer` and `Model`, preferring one that carries `#ComputerSystem.Reset`.
fn profile_identity(dir: &Path) -> Result<(String, String), String> {
    let mut root = dir.to_path_buf();
    if root.ends_with("redfish/v1") {
        root.pop();
        root.pop();
    }
    let doc = |uri: &str| -> Option<Value> {
        let uri = uri.split(['?', '#']).next().unwrap_or_default().trim_matches('/');
        let text = std::fs::read(root.join(uri).join("index.json")).ok()?;
        serde_json::from_slice(&text).ok()
    };
    let service_root = doc("/redfish/v1")
        .ok_or_else(|| format!("{}: not a Redfish tree: no readable redfish/v1/index.json in it", dir.display()))?;
    let odata_id = |v: &Value| v.get("@odata.id").and_then(Value::as_str).map(str::to_string);
    let systems: Vec<Value> = service_root
        .get("Systems")
        .and_then(odata_id)
        .and_then(|c| doc(&c))
        .and_then(|c| c.get("Members").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(odata_id)
        .filter_map(|uri| doc(&uri))
        .collect();
    let text = |d: &Value, key: &str| {
        d.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
    };
    let identity = |d: &&Value| text(d, "Manufacturer").is_some() && text(d, "Model").is_some();
    let resets = |d: &&Value| d.get("Actions").and_then(|a| a.get("#ComputerSystem.Reset")).is_some();
    let system = systems
        .iter()
        .find(|d| identity(d) && resets(d))
        .or_else(|| systems.iter().find(identity))
        .ok_or_else(|| format!("{}: no ComputerSystem reports both Manufacturer and Model", dir.display()))?;
    Ok((text(system, "Manufacturer").unwrap_or_default(), text(system, "Model").unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FleetRoster, FleetRosterError> {
        FleetRoster::from_toml_str_in(text, Path::new("."))
    }

    #[test]
    fn reads_hosts_with_defaults_and_ignores_simulator_keys() {
        let roster = parse(
            "tls = true\n[defaults]\npassword = \"pw\"\nupload_style = \"multipart\"\n\
             [[host]]\nid = \"a\"\nvendor = \"Dell\"\nmodel = \"R760\"\nbmc_address = \"127.0.0.1:9001\"\n\
             firmware = [ { id = \"BMC\", version = \"1.0\" } ]\n",
        )
        .unwrap();
        assert!(roster.tls);
        let h = &roster.hosts[0];
        let host = "[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n";
        assert!(parse(host).unwrap().tls, "no tls key: https, as `machine add` means");
        assert!(!parse(&format!("tls = false\n{host}")).unwrap().tls, "http only where the file says so");
        assert_eq!((h.id.as_str(), h.username.as_str(), h.password.as_str()), ("a", "admin", "pw"));
        assert_eq!(h.bmc_address, "127.0.0.1:9001".parse().unwrap());
    }

    #[test]
    fn host_labels_are_read_and_checked() {
        let host = |labels: &str| {
            format!("[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n{labels}")
        };
        let roster = parse(&host("labels = { rack = \"r12\", power_domain = \"pd3\" }\n")).unwrap();
        let labels = roster.hosts[0].labels.clone().unwrap();
        assert_eq!(crate::labels::labels_text(&labels), "power_domain=pd3,rack=r12");
        assert_eq!(parse(&host("")).unwrap().hosts[0].labels, None, "no labels given: None (stored ones kept)");
        let err = parse(&host("labels = { Rack = \"r1\" }\n")).unwrap_err().to_string();
        assert!(err.contains("host \"a\"") && err.contains("key `labels`") && err.contains("Rack"), "{err}");
        let err = parse(&host("labels = { rack = 12 }\n")).unwrap_err().to_string();
        assert!(err.contains("labels"), "{err}");
    }

    #[test]
    fn errors_name_the_line_or_the_host_and_key() {
        let err = parse("tls = true\n[[host]\n").unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        let err = parse("[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"nope\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("host \"a\"") && err.contains("key `bmc_address`"), "{err}");
        let twice = "[[host]]\nid = \"a\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n\
                     [[host]]\nid = \"b\"\nvendor = \"D\"\nmodel = \"M\"\nbmc_address = \"127.0.0.1:1\"\n";
        let err = parse(twice).unwrap_err().to_string();
        assert!(err.contains("host \"b\"") && err.contains("127.0.0.1:1 is already used"), "{err}");
        let err = parse("[[host]]\nid = \"a\"\nbmc_address = \"127.0.0.1:1\"\n").unwrap_err().to_string();
        assert!(err.contains("key `vendor`"), "{err}");
    }
}
