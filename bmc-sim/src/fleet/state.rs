//! The mutable state of one simulated BMC ([`Host`] / [`HostData`]) and what the whole fleet
//! shares ([`FleetShared`]). Holds data and tiny invariant-keeping helpers; no HTTP, no timers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

use crate::fleet::stats::{FleetCounters, HostStats};
use crate::power::boot::{BootOverride, BootedImage};
use crate::tasks::task::Task;
use crate::update::activation::{Activation, ActivationEvent};
use hostfw_fleet::Fault;
use hostfw_fleet::HostSpec;
use hostfw_fleet::Profile;

/// What every BMC of a fleet shares.
pub(crate) struct FleetShared {
    pub counters: FleetCounters,
    /// Fetches SimpleUpdate `ImageURI`s.
    pub http: reqwest::Client,
}

/// One firmware inventory member.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub id: String,
    /// Its `@odata.id`: `FirmwareInventory/<id>`, or where a profile's tree serves it.
    pub uri: String,
    pub name: String,
    pub version: String,
    /// Installed but not running yet; becomes `version` when its activation event happens.
    pub staged: Option<Staged>,
    pub updateable: bool,
}

/// A version waiting for its activation event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Staged {
    pub version: String,
    /// Never `Immediate`.
    pub on: Activation,
}

/// ComputerSystem.PowerState.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PowerState {
    On,
    Off,
    PoweringOn,
    PoweringOff,
}

impl PowerState {
    pub fn as_str(self) -> &'static str {
        match self {
            PowerState::On => "On",
            PowerState::Off => "Off",
            PowerState::PoweringOn => "PoweringOn",
            PowerState::PoweringOff => "PoweringOff",
        }
    }
}

/// An authenticated Redfish session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub id: u64,
    pub token: String,
    pub user: String,
}

/// Everything about one BMC that changes at run time.
#[derive(Debug)]
pub(crate) struct HostData {
    pub members: Vec<Member>,
    pub power: PowerState,
    /// Bumped by every ComputerSystem.Reset; a pending transition only lands if still current.
    pub power_generation: u64,
    pub tasks: BTreeMap<u64, Task>,
    pub next_task_id: u64,
    /// An update POST or task holds the BMC's one update slot.
    pub update_busy: bool,
    pub sessions: BTreeMap<u64, Session>,
    pub next_session_id: u64,
    /// False while a Manager.Reset has the BMC down.
    pub bmc_up: bool,
    /// A Manager.Reset was accepted and the BMC is about to go down.
    pub manager_reset_pending: bool,
    pub stats: HostStats,
    /// `Oem.Hostfw.Lockdown` of the System.
    pub lockdown: bool,
    pub boot: BootOverride,
    /// `Oem.Hostfw.BootedImage`: decided at each power-on.
    pub booted_image: BootedImage,
    /// An AC power cycle happened and the host has not powered on since.
    pub ac_cycle_pending: bool,
    /// The faults in force (counters already decremented by what consumed them).
    pub faults: Fault,
    /// Bumped by every replacement of `faults` (a delayed outage only starts if still current).
    pub fault_generation: u64,
    /// While set and in the future, the BMC's listener is closed (the `unreachable_for_secs` fault).
    pub unreachable_until: Option<tokio::time::Instant>,
    /// Profile BMCs: accepted PATCHes, per resource path, laid over the captured document.
    pub patched: BTreeMap<String, Value>,
    /// Profile BMCs: settings-object PATCHes waiting for the next power-on, per parent resource:
    /// (settings object path, changes).
    pub pending_settings: BTreeMap<String, (String, Value)>,
}

impl HostData {
    fn new(spec: &HostSpec, profile: Option<&Profile>) -> Self {
        let uri_of = |id: &str| {
            profile
                .and_then(|p| p.shape.members.iter().find(|m| m.id == id))
                .map_or_else(|| crate::resources::uris::firmware_member(id), |m| m.uri.clone())
        };
        HostData {
            members: spec
                .firmware
                .iter()
                .map(|f| Member {
                    uri: uri_of(&f.id),
                    id: f.id.clone(),
                    name: f.name.clone().unwrap_or_else(|| f.id.clone()),
                    version: f.version.clone(),
                    staged: None,
                    updateable: f.updateable,
                })
                .collect(),
            power: PowerState::On,
            power_generation: 0,
            tasks: BTreeMap::new(),
            // Captured Tasks keep their ids; new ones are numbered after them.
            next_task_id: profile.map_or(0, |p| p.shape.last_captured_task) + 1,
            update_busy: false,
            sessions: BTreeMap::new(),
            next_session_id: 1,
            bmc_up: true,
            manager_reset_pending: false,
            stats: HostStats::default(),
            lockdown: spec.lockdown,
            boot: profile.map_or_else(BootOverride::default, |p| {
                BootOverride::captured(p.shape.boot.0.as_deref(), p.shape.boot.1.as_deref())
            }),
            booted_image: BootedImage::Os,
            ac_cycle_pending: false,
            faults: Fault::default(),
            fault_generation: 0,
            unreachable_until: None,
            patched: BTreeMap::new(),
            pending_settings: BTreeMap::new(),
        }
    }

    /// Make every version staged for `event` the running one.
    pub fn activate(&mut self, event: ActivationEvent) {
        for m in &mut self.members {
            if m.staged.as_ref().is_some_and(|s| s.on.activated_by(event)) {
                if let Some(s) = m.staged.take() {
                    m.version = s.version;
                }
            }
        }
    }

    /// The host reached power On: staged firmware activates and the boot override decides
    /// what boots.
    pub fn host_powered_on(&mut self) {
        let event = if std::mem::take(&mut self.ac_cycle_pending) {
            ActivationEvent::AcCycle
        } else {
            ActivationEvent::HostPowerOn
        };
        self.activate(event);
        self.booted_image = self.boot.power_on();
        // Pending settings (e.g. BIOS attributes) take effect as the host comes up.
        // The settings object keeps showing them: it now matches what runs.
        for (parent, (_settings, changes)) in std::mem::take(&mut self.pending_settings) {
            let overlay = self.patched.entry(parent).or_insert_with(|| json!({}));
            crate::http::json::merge(overlay, &changes);
        }
    }

    /// Inventory members not hidden by the `hide_members` fault.
    pub fn visible_members(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| !self.faults.hide_members.contains(&m.id))
    }

    /// BiosVersion: the first member whose id contains "BIOS".
    pub fn bios_version(&self) -> Option<&str> {
        self.members.iter().find(|m| m.id.to_ascii_uppercase().contains("BIOS")).map(|m| m.version.as_str())
    }

    /// Manager.FirmwareVersion: the first member that looks like BMC firmware, else the first member.
    pub fn bmc_version(&self) -> Option<&str> {
        const BMC_WORDS: [&str; 5] = ["BMC", "IDRAC", "ILO", "XCC", "MANAGER"];
        let is_bmc = |id: &str| {
            let up = id.to_ascii_uppercase();
            BMC_WORDS.iter().any(|w| up.contains(w))
        };
        self.members.iter().find(|m| is_bmc(&m.id)).or(self.members.first()).map(|m| m.version.as_str())
    }

    /// The debugging view served at `GET /sim/state`.
    pub fn to_state_json(&self, host_id: &str) -> Value {
        let versions: BTreeMap<_, _> = self.members.iter().map(|m| (m.id.clone(), m.version.clone())).collect();
        let staged: BTreeMap<_, _> = self
            .members
            .iter()
            .filter_map(|m| {
                let s = m.staged.as_ref()?;
                Some((m.id.clone(), s.version.clone()))
            })
            .collect();
        let staged_activation: BTreeMap<_, _> =
            self.members.iter().filter_map(|m| Some((m.id.clone(), m.staged.as_ref()?.on.as_str()))).collect();
        let tasks: Vec<_> = self
            .tasks
            .values()
            .map(|t| json!({"Id": t.id, "TaskState": t.state.as_str(), "PercentComplete": t.percent}))
            .collect();
        json!({
            "id": host_id,
            "power_state": self.power.as_str(),
            "bmc_up": self.bmc_up,
            "update_busy": self.update_busy,
            "versions": versions,
            "staged": staged,
            "staged_activation": staged_activation,
            "lockdown": self.lockdown,
            "boot": self.boot.to_json(),
            "booted_image": self.booted_image.as_str(),
            "faults": self.faults,
            "sessions": self.sessions.len(),
            "tasks": tasks,
            "counters": self.stats,
        })
    }
}

/// One simulated BMC: its spec, bound address and state.
pub(crate) struct Host {
    pub spec: HostSpec,
    /// The address actually bound (port 0 resolved).
    pub addr: SocketAddr,
    pub fleet: Arc<FleetShared>,
    /// Asks this BMC's server loop to go down for a Manager.Reset.
    pub go_down: mpsc::UnboundedSender<std::time::Duration>,
    /// Tells the server loop that `unreachable_until` changed.
    pub outage: Notify,
    /// Set when the fleet serves HTTPS (`tls = true`): wraps every accepted connection.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Requests this BMC is serving right now (for the fleet's busy-BMC high-water mark).
    pub requests_in_progress: std::sync::atomic::AtomicU64,
    /// The captured tree this BMC serves (`profile` in the fleet file), else the generic shape.
    pub profile: Option<Arc<Profile>>,
    data: Mutex<HostData>,
}

impl Host {
    pub fn new(
        spec: HostSpec,
        addr: SocketAddr,
        fleet: Arc<FleetShared>,
        go_down: mpsc::UnboundedSender<std::time::Duration>,
        tls: Option<tokio_rustls::TlsAcceptor>,
        profile: Option<Arc<Profile>>,
    ) -> Self {
        let data = Mutex::new(HostData::new(&spec, profile.as_deref()));
        Host {
            profile,
            spec,
            addr,
            fleet,
            go_down,
            outage: Notify::new(),
            tls,
            requests_in_progress: Default::default(),
            data,
        }
    }

    /// Lock the state. Never hold the guard across an `.await`.
    pub fn data(&self) -> MutexGuard<'_, HostData> {
        // A panic elsewhere must not turn every later request into a panic too.
        self.data.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The System whose PowerState, Boot and Reset this BMC simulates.
    pub fn system_uri(&self) -> &str {
        self.profile.as_ref().map_or(crate::resources::uris::SYSTEM, |p| p.shape.system.as_str())
    }

    /// The BMC's Manager.
    pub fn manager_uri(&self) -> &str {
        self.profile.as_ref().and_then(|p| p.shape.manager.as_deref()).unwrap_or(crate::resources::uris::MANAGER)
    }

    /// Allowed `ComputerSystem.Reset` types: the tree's, else the generic list.
    pub fn system_reset_types(&self) -> Vec<String> {
        match &self.profile {
            Some(p) if !p.shape.system_reset_types.is_empty() => p.shape.system_reset_types.clone(),
            _ => crate::power::reset_types::SYSTEM_RESET_TYPES.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Allowed `Manager.Reset` types: the tree's, else the generic list.
    pub fn manager_reset_types(&self) -> Vec<String> {
        match &self.profile {
            Some(p) if !p.shape.manager_reset_types.is_empty() => p.shape.manager_reset_types.clone(),
            _ => crate::power::reset_types::MANAGER_RESET_TYPES.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// `http://ip:port`, or `https://ip:port` for a TLS fleet.
    pub fn base_url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }
}
