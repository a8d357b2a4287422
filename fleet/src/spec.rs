//! One host of the fleet file: [`HostSpec`] and the types of its keys ([`FirmwareSpec`],
//! [`UploadStyle`], [`TaskStyle`], [`ApplyTime`]), their default values, a host's `profile`
//! resolved, and the checks of one host's values. The whole file's TOML form (`[defaults]` +
//! `[[host]]`) is `parse`; the fleet, `fleet`. Pure data: no sockets, no clocks, no shared state.
//!
//! ```toml
//! tls = true                 # optional, default false: every BMC serves HTTPS (see below)
//!
//! [defaults]                 # optional; any host key except `id` and `bmc_address`
//! labels = { site = "lab" } # a host's own labels are merged over these, key by key
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
//! `serial`, `labels` (the operator's, for `machine import`), `username`, `password`,
//! `upload_style` (multipart|httppush|simpleupdate),
//! `task_style` (spec|bmcweb|dell|sushy), `apply_time` (Immediate|OnReset), `task_seconds`,
//! `reset_seconds` (system reset AND AC power cycle), `manager_reset_seconds`, `lockdown`,
//! `faults`, `profile`, `required_parts` (multipart parts the BMC insists on, e.g.
//! `["OemParameters"]`), `targets_required` (refuse an update without `Targets`, on every
//! upload route),
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

use crate::error::{host_err, host_location, FleetError};
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
/// `activation=...` overrides this for that image (see bmc-sim's `Activation`).
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
    /// import`; the simulator does nothing with them. Labels in `[defaults]` are merged under
    /// the host's own, key by key (the host's value wins).
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
    /// This BMC refuses an update whose `Targets` names no inventory member (Supermicro): on
    /// every upload route, and every update on `HttpPushUri`, which carries no parameters.
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
    ) -> Result<Self, FleetError> {
        let mut spec = HostSpec::new(id, "", "", bmc_address, Vec::new());
        spec.profile = Some(dir.as_ref().to_path_buf());
        spec.apply_profile(Path::new("."))
            .map_err(|(key, msg)| host_err(&host_location(0, Some(&spec.id)), &key, &msg))?;
        Ok(spec)
    }

    /// Load this host's profile (relative to `base`) and take vendor, model, serial and the
    /// inventory members from it; `firmware` entries already present override versions.
    pub(crate) fn apply_profile(&mut self, base: &Path) -> Result<(), (String, String)> {
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

    /// Check one host's values; the error is `(key, message)`. `simulated`: also what serving
    /// the host needs (at least one inventory member); registering it does not.
    pub(crate) fn check(&self, simulated: bool) -> Result<(), (String, String)> {
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
        if let Err(e) = hostfw_model::labels::check_labels(&self.labels) {
            return bad("labels", e.to_string());
        }
        if self.profile.is_some() {
            // Members, ids and versions are the captured tree's own, placeholders included.
            return self
                .faults
                .check(self.firmware.iter().map(|f| f.id.as_str()))
                .map_err(|(key, msg)| (format!("faults.{key}"), msg));
        }
        if simulated && self.firmware.is_empty() {
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
