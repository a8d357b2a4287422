//! The fleet file: [`FleetSpec`] / [`HostSpec`], their TOML form (`[defaults]` + `[[host]]`),
//! default values and validation. Pure data: no sockets, no clocks, no shared state.
//!
//! ```toml
//! tls = true                 # optional, default false: every BMC serves HTTPS (see below)
//!
//! [defaults]                 # optional; any host key except `id` and `bmc_address`
//! upload_style = "multipart"
//! [defaults.faults]          # optional; a host's own `faults` replaces it as a whole
//! slow_response_secs = 0.1
//!
//! [[host]]
//! id = "host-001"
//! vendor = "Dell"
//! model = "PowerEdge R760"
//! bmc_address = "127.0.0.11:8000"
//! lockdown = true            # platform lockdown at start (Oem.Hostfw.Lockdown); default true
//! faults = { fail_next_tasks = 1, http_errors = { count = 2, status = 503 } }
//! firmware = [ { id = "BMC", version = "1.0" } ]
//!
//! [[host]]
//! id = "host-002"
//! vendor = "Nvidia"
//! model = "DGX H100"
//! bmc_address = "127.0.0.12:8000"
//! firmware = [ { id = "CPLD_0", version = "1.0" } ]
//! [host.faults]              # the same table, written for the host just above
//! hide_members = ["CPLD_0"]
//! ```
//!
//! Host keys: `id`, `bmc_address` (required); `vendor`, `model` (required without a profile);
//! `serial`, `username`, `password`, `upload_style` (multipart|httppush|simpleupdate),
//! `task_style` (spec|bmcweb|dell|sushy), `apply_time` (Immediate|OnReset), `task_seconds`,
//! `reset_seconds` (system reset AND AC power cycle), `manager_reset_seconds`, `lockdown`,
//! `faults`, `profile`, `required_parts` (multipart parts the BMC insists on, e.g.
//! `["OemParameters"]`), `targets_required` (refuse an update without `Targets`),
//! `expand_query` (default true: advertise and answer `$expand` as the captured BMCs do; false:
//! a BMC without it), `firmware`.
//!
//! `profile = "<folder>"` (relative to the fleet file) serves a Redfish tree captured from real
//! hardware instead of the generic shape: its Ids, links, OEM blocks, allowable values and ETags
//! as captured, with uploads, tasks, resets and versions layered on in that tree's own shape.
//! Vendor, model, serial and the inventory members then come from the tree; `firmware` entries
//! name members of the tree and override their running versions (to make a host drift):
//!
//! ```toml
//! [[host]]
//! id = "r750-01"
//! bmc_address = "127.0.0.21:8000"
//! profile = "../shared/redfish/vendor-mockups/dell"
//! firmware = [ { id = "Installed-159-1.8.2__BIOS.Setup.1-1", version = "1.7.5" } ]
//! ```
//!
//! `faults` keys (all optional, see [`Fault`]): `fail_next_tasks`, `version_never_changes`,
//! `slow_response_secs`, `unreachable_for_secs` (from start), `hide_members`,
//! `malformed_json_next`, `refuse_resets`, `refuse_patches`, `http_errors = { count, status }`, `foreign_links`,
//! `failing_actions = ["Chassis.Reset"]`.
//!
//! Fleet keys: `tls` (top level, default false): every BMC listener serves HTTPS with a
//! certificate for its bind IP and `localhost`, signed by a CA generated at start
//! (`RunningFleet::ca_pem`, `bmc-sim --ca-out`); host base URLs then say `https://`.
//!
//! An image may carry its own activation requirement, which overrides `apply_time` for it:
//! `HOSTFW-SIM-IMAGE applies_to=^CPLD version=2.0 activation=ac_cycle` (see `activation`).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use hostfw_model::Secret;
use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::fault::Fault;
use crate::profile::Profile;

/// Default BMC user name.
pub const DEFAULT_USERNAME: &str = "admin";
/// Default BMC password.
pub const DEFAULT_PASSWORD: &str = "password";
/// Default update task duration: long enough to poll a monitor twice, short enough for a demo.
pub const DEFAULT_TASK_SECONDS: f64 = 2.0;
/// Default ComputerSystem.Reset power transition time.
pub const DEFAULT_RESET_SECONDS: f64 = 1.0;
/// Default time a BMC stays unreachable after Manager.Reset.
pub const DEFAULT_MANAGER_RESET_SECONDS: f64 = 2.0;
/// Upper bound for any duration in the fleet file (a day): larger values are typos.
const MAX_SECONDS: f64 = 86_400.0;

/// Which push URIs the UpdateService advertises (SimpleUpdate is always advertised).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum UploadStyle {
    /// `MultipartHttpPushUri` (+ SimpleUpdate).
    #[default]
    #[serde(rename = "multipart")]
    Multipart,
    /// Legacy `HttpPushUri` only (+ SimpleUpdate).
    #[serde(rename = "httppush")]
    HttpPush,
    /// Only the SimpleUpdate action.
    #[serde(rename = "simpleupdate")]
    SimpleUpdate,
}

/// How the update POST and the task monitor answer (vendor profiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStyle {
    /// DSP0266: 202 + monitor; monitor 202 while running, final 200 once, then 404.
    #[default]
    Spec,
    /// OpenBMC: monitor at `Tasks/<n>/Monitor`, 202 while running, 204 once, then 404.
    Bmcweb,
    /// Dell/NVIDIA: `Location` is the Task itself, always 200 + Task.
    Dell,
    /// sushy-tools: POST answers 204 + `Location` of the Task.
    Sushy,
}

/// When a finished update task changes the running version. An image whose header carries
/// `activation=...` overrides this for that image (see [`crate::Activation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ApplyTime {
    /// At task completion.
    #[default]
    Immediate,
    /// Staged at completion; running after the next host power-on (system reset or AC power
    /// cycle) or manager reset.
    OnReset,
}

impl ApplyTime {
    /// The Redfish `OperationApplyTime` name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyTime::Immediate => "Immediate",
            ApplyTime::OnReset => "OnReset",
        }
    }

    /// Parse a Redfish `OperationApplyTime` value this simulator supports.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Immediate" => Some(ApplyTime::Immediate),
            "OnReset" => Some(ApplyTime::OnReset),
            _ => None,
        }
    }
}

/// One firmware inventory member of a host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareSpec {
    /// SoftwareInventory `Id` (also the last URI segment).
    pub id: String,
    /// Running version at start.
    pub version: String,
    /// SoftwareInventory `Name`; defaults to the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// SoftwareInventory `Updateable`.
    #[serde(default = "yes")]
    pub updateable: bool,
}

impl FirmwareSpec {
    /// A member with a running version, named after its id, updateable.
    pub fn new(id: impl Into<String>, version: impl Into<String>) -> Self {
        FirmwareSpec { id: id.into(), version: version.into(), name: None, updateable: true }
    }
}

/// One simulated BMC (after `[defaults]` have been merged in).
/// The BMC password is a [`Secret`]: `Debug` redacts it (a fleet file written back names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Machine id.
    pub id: String,
    /// ComputerSystem.Manufacturer (a profile host: taken from the tree unless given).
    #[serde(default)]
    pub vendor: String,
    /// ComputerSystem.Model (a profile host: taken from the tree unless given).
    #[serde(default)]
    pub model: String,
    /// ComputerSystem.SerialNumber.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// The operator's labels of this host (`labels = { rack = "r12" }`), read by `hostfw machine
    /// import`; the simulator does nothing with them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Listen address; port 0 picks a free port.
    pub bmc_address: SocketAddr,
    #[serde(default = "default_username")]
    pub username: String,
    #[serde(default = "default_password", serialize_with = "write_secret")]
    pub password: Secret,
    #[serde(default)]
    pub upload_style: UploadStyle,
    #[serde(default)]
    pub task_style: TaskStyle,
    /// Apply time used when the request does not say.
    #[serde(default)]
    pub apply_time: ApplyTime,
    /// How long an update task runs before completing.
    #[serde(default = "default_task_seconds")]
    pub task_seconds: f64,
    /// ComputerSystem.Reset power transition time.
    #[serde(default = "default_reset_seconds")]
    pub reset_seconds: f64,
    /// How long the BMC is unreachable after Manager.Reset.
    #[serde(default = "default_manager_reset_seconds")]
    pub manager_reset_seconds: f64,
    /// Platform lockdown at start (`Oem.Hostfw.Lockdown` of the System; PATCH changes it).
    #[serde(default = "yes")]
    pub lockdown: bool,
    /// Faults injected from the start (runtime changes: `RunningFleet::set_fault`).
    #[serde(default, skip_serializing_if = "Fault::is_empty")]
    pub faults: Fault,
    /// A Redfish tree captured from real hardware, served as captured with the dynamic
    /// behaviour layered on (see `profile`). Relative to the fleet file; absolute once loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<PathBuf>,
    /// Multipart parts this BMC refuses an upload without, besides `UpdateFile` (Supermicro's
    /// BMC wants `OemParameters`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_parts: Vec<String>,
    /// This BMC refuses an update whose `Targets` is empty or absent (Supermicro).
    #[serde(default, skip_serializing_if = "is_false")]
    pub targets_required: bool,
    /// Advertise `ProtocolFeaturesSupported.ExpandQuery` and answer `$expand` on the
    /// FirmwareInventory and the Systems collection (default true, as every captured BMC does; see `expand`). False: no
    /// `ExpandQuery` in the ServiceRoot (a profile's is taken out) and `$expand` gets 501.
    #[serde(default = "yes")]
    pub expand_query: bool,
    /// Firmware inventory members (kept last: TOML wants tables after plain keys). With a
    /// `profile`, the tree's members; entries written in the fleet file override their versions.
    #[serde(default)]
    pub firmware: Vec<FirmwareSpec>,
}

impl HostSpec {
    /// A host with every optional key at its default.
    pub fn new(
        id: impl Into<String>,
        vendor: impl Into<String>,
        model: impl Into<String>,
        bmc_address: SocketAddr,
        firmware: Vec<FirmwareSpec>,
    ) -> Self {
        HostSpec {
            id: id.into(),
            vendor: vendor.into(),
            model: model.into(),
            serial: None,
            labels: Default::default(),
            bmc_address,
            username: default_username(),
            password: default_password(),
            upload_style: UploadStyle::default(),
            task_style: TaskStyle::default(),
            apply_time: ApplyTime::default(),
            task_seconds: DEFAULT_TASK_SECONDS,
            reset_seconds: DEFAULT_RESET_SECONDS,
            manager_reset_seconds: DEFAULT_MANAGER_RESET_SECONDS,
            lockdown: true,
            faults: Fault::default(),
            profile: None,
            required_parts: Vec::new(),
            targets_required: false,
            expand_query: true,
            firmware,
        }
    }

    /// A host serving the captured tree in `dir` (vendor, model and members from the tree).
    pub fn from_profile(
        id: impl Into<String>,
        bmc_address: SocketAddr,
        dir: impl AsRef<Path>,
    ) -> Result<Self, SimError> {
        let mut spec = HostSpec::new(id, "", "", bmc_address, Vec::new());
        spec.profile = Some(dir.as_ref().to_path_buf());
        spec.apply_profile(Path::new("."))
            .map_err(|(key, msg)| spec_err(&host_location(0, Some(&spec.id)), &key, &msg))?;
        Ok(spec)
    }

    /// Load this host's profile (relative to `base`) and take vendor, model, serial and the
    /// inventory members from it; `firmware` entries already present override versions.
    fn apply_profile(&mut self, base: &Path) -> Result<(), (String, String)> {
        let Some(dir) = self.profile.clone() else {
            return Ok(());
        };
        let dir = base.join(dir);
        let profile = Profile::load(&dir).map_err(|e| ("profile".to_string(), e.to_string()))?;
        self.profile = Some(profile.dir.clone());
        let shape = &profile.shape;
        if self.vendor.is_empty() {
            self.vendor = shape.vendor.clone();
        }
        if self.model.is_empty() {
            self.model = shape.model.clone();
        }
        if self.serial.is_none() {
            self.serial = shape.serial.clone();
        }
        let overrides = std::mem::take(&mut self.firmware);
        for (i, o) in overrides.iter().enumerate() {
            if !shape.members.iter().any(|m| m.id == o.id) {
                return Err((
                    format!("firmware[{i}].id"),
                    format!("{:?} is not a FirmwareInventory member of profile {}", o.id, profile.dir.display()),
                ));
            }
        }
        self.firmware = shape
            .members
            .iter()
            .map(|m| {
                let over = overrides.iter().find(|o| o.id == m.id);
                FirmwareSpec {
                    id: m.id.clone(),
                    version: over.map(|o| o.version.clone()).or_else(|| m.version.clone()).unwrap_or_default(),
                    name: m.name.clone(),
                    updateable: over.map_or(m.updateable, |o| o.updateable),
                }
            })
            .collect();
        Ok(())
    }

    /// Check one host's values; the error is `(key, message)`.
    fn check(&self) -> Result<(), (String, String)> {
        let bad = |key: &str, msg: String| Err((key.to_string(), msg));
        if self.id.trim().is_empty() || self.id.chars().any(char::is_whitespace) {
            return bad("id", format!("{:?} must be non-empty and contain no whitespace", self.id));
        }
        if self.username.is_empty() || self.username.contains(':') {
            return bad("username", "must be non-empty and contain no ':'".into());
        }
        for (key, v) in [
            ("task_seconds", self.task_seconds),
            ("reset_seconds", self.reset_seconds),
            ("manager_reset_seconds", self.manager_reset_seconds),
        ] {
            if !v.is_finite() || !(0.0..=MAX_SECONDS).contains(&v) {
                return bad(key, format!("{v} is not a number of seconds between 0 and {MAX_SECONDS}"));
            }
        }
        if self.vendor.trim().is_empty() || self.model.trim().is_empty() {
            return bad(
                if self.vendor.trim().is_empty() { "vendor" } else { "model" },
                "must be non-empty (or come from a `profile`)".into(),
            );
        }
        if self.profile.is_some() {
            // Members, ids and versions are the captured tree's own, placeholders included.
            return self
                .faults
                .check(self.firmware.iter().map(|f| f.id.as_str()))
                .map_err(|(key, msg)| (format!("faults.{key}"), msg));
        }
        if self.firmware.is_empty() {
            return bad("firmware", "needs at least one inventory member".into());
        }
        let mut seen = BTreeSet::new();
        for (i, fw) in self.firmware.iter().enumerate() {
            if fw.id.is_empty() || !fw.id.chars().all(is_uri_safe) {
                return bad(
                    &format!("firmware[{i}].id"),
                    format!("{:?} must be non-empty and use only A-Z a-z 0-9 . _ - : ~", fw.id),
                );
            }
            if !seen.insert(fw.id.as_str()) {
                return bad(&format!("firmware[{i}].id"), format!("duplicate member id {:?}", fw.id));
            }
            if fw.version.trim().is_empty() {
                return bad(&format!("firmware[{i}].version"), "must be non-empty".into());
            }
        }
        self.faults
            .check(self.firmware.iter().map(|f| f.id.as_str()))
            .map_err(|(key, msg)| (format!("faults.{key}"), msg))
    }
}

/// A whole simulated fleet. Its TOML form accepts an optional `[defaults]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawFleet")]
pub struct FleetSpec {
    /// Serve every BMC over HTTPS (certificates from a CA generated at start). Default false.
    /// Kept first: TOML wants plain keys before the `[[host]]` tables. Always written out, also
    /// when false: `hostfw machine import` reads a file without the key as https.
    #[serde(default)]
    pub tls: bool,
    /// The hosts, defaults already merged in.
    #[serde(rename = "host")]
    pub hosts: Vec<HostSpec>,
}

impl FleetSpec {
    /// A plain-HTTP fleet of already-complete hosts (call [`FleetSpec::validate`] or let
    /// `start` do it). Set [`FleetSpec::tls`] for HTTPS.
    pub fn new(hosts: Vec<HostSpec>) -> Self {
        FleetSpec { tls: false, hosts }
    }

    /// Read and validate a fleet file; errors name the file, the host and the key.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SimError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| SimError::ReadFleetFile { path: path.to_path_buf(), source })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml_str_in(&text, base).map_err(|e| e.in_file(path.to_path_buf()))
    }

    /// Parse and validate fleet TOML text (`profile` folders relative to the working directory).
    pub fn from_toml_str(s: &str) -> Result<Self, SimError> {
        Self::from_toml_str_in(s, Path::new("."))
    }

    /// Parse and validate fleet TOML text whose `profile` folders are relative to `base`.
    pub fn from_toml_str_in(s: &str, base: &Path) -> Result<Self, SimError> {
        let raw: RawFleet =
            toml::from_str(s).map_err(|e| SimError::FleetSyntax { file: None, message: e.to_string() })?;
        resolve(raw, base)
    }

    /// The fleet as TOML (every key explicit, no `[defaults]`).
    pub fn to_toml_string(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        toml::to_string(self).unwrap_or_default()
    }

    /// Check every host and the fleet-wide rules (unique ids and fixed addresses).
    pub fn validate(&self) -> Result<(), SimError> {
        if self.hosts.is_empty() {
            return Err(spec_err("fleet", "host", "no [[host]] entries"));
        }
        let mut ids = BTreeSet::new();
        let mut addrs = BTreeSet::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let loc = host_location(i, Some(&h.id));
            h.check().map_err(|(key, msg)| spec_err(&loc, &key, &msg))?;
            if !ids.insert(h.id.as_str()) {
                return Err(spec_err(&loc, "id", "duplicate host id"));
            }
            if h.bmc_address.port() != 0 && !addrs.insert(h.bmc_address) {
                return Err(spec_err(
                    &loc,
                    "bmc_address",
                    &format!("{} is already used by another host", h.bmc_address),
                ));
            }
        }
        Ok(())
    }
}

/// The fleet file as written, before `[defaults]` are merged into each host.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFleet {
    #[serde(default)]
    tls: bool,
    #[serde(default)]
    defaults: Option<toml::Table>,
    #[serde(default)]
    host: Vec<toml::Table>,
}

impl TryFrom<RawFleet> for FleetSpec {
    type Error = SimError;
    fn try_from(raw: RawFleet) -> Result<Self, SimError> {
        resolve(raw, Path::new("."))
    }
}

/// `[defaults]` checked on its own so a wrong default is blamed on `[defaults]`, not a host.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // only deserialized, for its errors
struct DefaultsCheck {
    vendor: Option<String>,
    model: Option<String>,
    serial: Option<String>,
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

fn resolve(raw: RawFleet, base: &Path) -> Result<FleetSpec, SimError> {
    let defaults = raw.defaults.unwrap_or_default();
    deserialize_located::<DefaultsCheck>(&defaults, "[defaults]")?;
    let mut hosts = Vec::with_capacity(raw.host.len());
    for (i, table) in raw.host.into_iter().enumerate() {
        let loc = host_location(i, table.get("id").and_then(|v| v.as_str()));
        let mut merged = defaults.clone();
        merged.extend(table);
        let mut host = deserialize_located::<HostSpec>(&merged, &loc)?;
        host.apply_profile(base).map_err(|(key, msg)| spec_err(&loc, &key, &msg))?;
        hosts.push(host);
    }
    let spec = FleetSpec { tls: raw.tls, hosts };
    spec.validate()?;
    Ok(spec)
}

/// Deserialize a table, turning serde's error into one that names the key.
fn deserialize_located<T: serde::de::DeserializeOwned>(table: &toml::Table, location: &str) -> Result<T, SimError> {
    let value = toml::Value::Table(table.clone());
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        // toml appends "\nin `key`" lines; the path already names the key.
        let full = e.inner().to_string();
        let message = full.lines().next().unwrap_or_default().trim().to_string();
        let key = if path.is_empty() || path == "." { first_backticked(&message) } else { path };
        spec_err(location, &key, &message)
    })
}

/// serde names missing/unknown fields as "missing field `x`": use `x` as the key.
fn first_backticked(message: &str) -> String {
    message.split('`').nth(1).unwrap_or("?").to_string()
}

fn host_location(index: usize, id: Option<&str>) -> String {
    match id {
        Some(id) if !id.is_empty() => format!("host {id:?}"),
        _ => format!("host #{}", index + 1),
    }
}

fn spec_err(location: &str, key: &str, message: &str) -> SimError {
    SimError::FleetSpec { file: None, location: location.into(), key: key.into(), message: message.into() }
}

fn is_uri_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '~')
}

fn yes() -> bool {
    true
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn default_username() -> String {
    DEFAULT_USERNAME.into()
}
/// A fleet file is the simulator's own input: writing one back names the password it serves.
fn write_secret<S: serde::Serializer>(secret: &Secret, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(secret.expose())
}

fn default_password() -> Secret {
    DEFAULT_PASSWORD.into()
}
fn default_task_seconds() -> f64 {
    DEFAULT_TASK_SECONDS
}
fn default_reset_seconds() -> f64 {
    DEFAULT_RESET_SECONDS
}
fn default_manager_reset_seconds() -> f64 {
    DEFAULT_MANAGER_RESET_SECONDS
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[defaults]
username = "root"
task_style = "dell"
firmware = [ { id = "BMC", version = "1.0" } ]

[[host]]
id = "host-001"
vendor = "Dell"
model = "PowerEdge R760"
serial = "SN001"
bmc_address = "127.0.0.11:8000"
firmware = [ { id = "Installed-25227-7.00.00.00__iDRAC.Embedded.1-1", version = "7.00.00.00" },
             { id = "Installed-159-2.1.0__BIOS.Setup.1-1", version = "2.1.0", name = "BIOS" } ]

[[host]]
id = "host-002"
vendor = "Supermicro"
model = "X13"
bmc_address = "127.0.0.12:8000"
task_style = "bmcweb"
apply_time = "OnReset"
"#;

    fn err_of(text: &str) -> String {
        FleetSpec::from_toml_str(text).expect_err("must fail").to_string()
    }

    #[test]
    fn defaults_merge_and_host_overrides() {
        let f = FleetSpec::from_toml_str(GOOD).unwrap();
        assert_eq!(f.hosts.len(), 2);
        let (a, b) = (&f.hosts[0], &f.hosts[1]);
        assert_eq!(a.username, "root");
        assert_eq!(a.password.expose(), DEFAULT_PASSWORD);
        assert_eq!(a.task_style, TaskStyle::Dell);
        assert_eq!(a.firmware.len(), 2);
        assert_eq!(a.firmware[1].name.as_deref(), Some("BIOS"));
        assert_eq!(b.task_style, TaskStyle::Bmcweb);
        assert_eq!(b.apply_time, ApplyTime::OnReset);
        assert_eq!(b.firmware, vec![FirmwareSpec::new("BMC", "1.0")]);
        assert_eq!(b.task_seconds, DEFAULT_TASK_SECONDS);
    }

    #[test]
    fn round_trips_through_toml() {
        let f = FleetSpec::from_toml_str(GOOD).unwrap();
        let again = FleetSpec::from_toml_str(&f.to_toml_string()).unwrap();
        assert_eq!(f, again);
    }

    #[test]
    fn unknown_host_key_names_host_and_key() {
        let e = err_of(&GOOD.replace("serial = \"SN001\"", "serail = \"SN001\""));
        assert!(e.contains("host \"host-001\"") && e.contains("serail"), "{e}");
    }

    #[test]
    fn wrong_type_names_key() {
        let e = err_of(&GOOD.replace("apply_time = \"OnReset\"", "task_seconds = \"slow\""));
        assert!(e.contains("host \"host-002\"") && e.contains("key `task_seconds`"), "{e}");
        let e = err_of(&GOOD.replace("version = \"2.1.0\"", "version = 2"));
        assert!(e.contains("firmware[1].version"), "{e}");
    }

    #[test]
    fn bad_enum_and_missing_key() {
        let e = err_of(&GOOD.replace("\"bmcweb\"", "\"ilo\""));
        assert!(e.contains("host-002") && e.contains("task_style") && e.contains("ilo"), "{e}");
        let e = err_of(&GOOD.replace("bmc_address = \"127.0.0.12:8000\"", ""));
        assert!(e.contains("host-002") && e.contains("key `bmc_address`"), "{e}");
    }

    #[test]
    fn defaults_errors_blame_defaults() {
        let e = err_of(&GOOD.replace("username = \"root\"", "id = \"x\""));
        assert!(e.contains("[defaults]") && e.contains("`id`"), "{e}");
        let e = err_of(&GOOD.replace("task_style = \"dell\"", "task_seconds = -1"));
        assert!(e.contains("task_seconds"), "{e}");
    }

    #[test]
    fn fleet_rules() {
        let e = err_of(&GOOD.replace("host-002", "host-001"));
        assert!(e.contains("duplicate host id"), "{e}");
        let e = err_of(&GOOD.replace("127.0.0.12:8000", "127.0.0.11:8000"));
        assert!(e.contains("bmc_address") && e.contains("already used"), "{e}");
        let e = err_of("[defaults]\nusername = \"a\"\n");
        assert!(e.contains("no [[host]]"), "{e}");
        let e = err_of(&GOOD.replace("id = \"BMC\"", "id = \"B/MC\""));
        assert!(e.contains("firmware[0].id"), "{e}");
        let e = err_of("[[hosts]]\nid = \"a\"\n");
        assert!(e.contains("hosts"), "{e}");
    }

    #[test]
    fn tls_is_a_top_level_key_off_by_default() {
        let f = FleetSpec::from_toml_str(GOOD).unwrap();
        assert!(!f.tls);
        assert!(f.to_toml_string().starts_with("tls = false\n"), "written out for `machine import`");
        let f = FleetSpec::from_toml_str(&format!("tls = true\n{GOOD}")).unwrap();
        assert!(f.tls);
        let again = FleetSpec::from_toml_str(&f.to_toml_string()).unwrap();
        assert_eq!(f, again);
        let e = err_of(&format!("tls = \"yes\"\n{GOOD}"));
        assert!(e.contains("tls"), "{e}");
        // a host-level `tls` is not a thing: the whole fleet is HTTPS or none of it
        let e = err_of(&GOOD.replace("serial = \"SN001\"", "tls = true"));
        assert!(e.contains("host-001") && e.contains("tls"), "{e}");
    }

    #[test]
    fn ports_zero_may_repeat() {
        let text = GOOD.replace("127.0.0.11:8000", "127.0.0.1:0").replace("127.0.0.12:8000", "127.0.0.1:0");
        assert!(FleetSpec::from_toml_str(&text).is_ok());
    }

    #[test]
    fn lockdown_defaults_to_true() {
        let f = FleetSpec::from_toml_str(GOOD).unwrap();
        assert!(f.hosts.iter().all(|h| h.lockdown));
        let f = FleetSpec::from_toml_str(&GOOD.replace("username = \"root\"", "lockdown = false")).unwrap();
        assert!(f.hosts.iter().all(|h| !h.lockdown));
    }

    #[test]
    fn faults_in_defaults_inline_and_subtable() {
        let text = GOOD
            .replace("version = \"1.0\" } ]\n", "version = \"1.0\" } ]\n[defaults.faults]\nslow_response_secs = 0.25\n")
            .replace(
                "serial = \"SN001\"",
                "serial = \"SN001\"\nfaults = { fail_next_tasks = 2, http_errors = { count = 1, status = 500 } }",
            )
            + "[host.faults]\nhide_members = [\"BMC\"]\nversion_never_changes = true\n";
        let f = FleetSpec::from_toml_str(&text).unwrap();
        let (a, b) = (&f.hosts[0].faults, &f.hosts[1].faults);
        assert_eq!(a.fail_next_tasks, 2);
        assert_eq!(a.http_errors.unwrap().status, 500);
        assert_eq!(a.slow_response_secs, 0.0, "a host's faults replace the default ones");
        assert_eq!(b.hide_members, vec!["BMC".to_string()]);
        assert!(b.version_never_changes);
        let again = FleetSpec::from_toml_str(&f.to_toml_string()).unwrap();
        assert_eq!(f, again);

        let only_defaults = GOOD.replace(
            "version = \"1.0\" } ]\n",
            "version = \"1.0\" } ]\n[defaults.faults]\nslow_response_secs = 0.25\n",
        );
        let f = FleetSpec::from_toml_str(&only_defaults).unwrap();
        assert!(f.hosts.iter().all(|h| h.faults.slow_response_secs == 0.25));
    }

    #[test]
    fn fault_errors_name_the_key() {
        let e = err_of(&format!("{GOOD}[host.faults]\nhide_members = [\"CPLD\"]\n"));
        assert!(e.contains("host-002") && e.contains("faults.hide_members[0]") && e.contains("CPLD"), "{e}");
        let e = err_of(&format!("{GOOD}[host.faults]\nfail_next_task = 1\n"));
        assert!(e.contains("host-002") && e.contains("fail_next_task"), "{e}");
        let e = err_of(&format!("{GOOD}[host.faults]\nhttp_errors = {{ count = 1, status = 302 }}\n"));
        assert!(e.contains("faults.http_errors.status"), "{e}");
        let e = err_of(&GOOD.replace("username = \"root\"", "faults = { slow = 1 }"));
        assert!(e.contains("[defaults]") && e.contains("slow"), "{e}");
    }
}
