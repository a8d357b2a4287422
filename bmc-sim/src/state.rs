//! The mutable state of one simulated BMC ([`Host`] / [`HostData`]) and what the whole fleet
//! shares ([`FleetShared`]). Holds data and tiny invariant-keeping helpers; no HTTP, no timers.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::fleet_spec::HostSpec;
use crate::stats::{FleetCounters, HostStats};
use crate::task::Task;

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
    pub name: String,
    pub version: String,
    /// Installed with apply time OnReset; becomes `version` at the next reset.
    pub staged: Option<String>,
    pub updateable: bool,
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
}

impl HostData {
    fn new(spec: &HostSpec) -> Self {
        HostData {
            members: spec
                .firmware
                .iter()
                .map(|f| Member {
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
            next_task_id: 1,
            update_busy: false,
            sessions: BTreeMap::new(),
            next_session_id: 1,
            bmc_up: true,
            manager_reset_pending: false,
            stats: HostStats::default(),
        }
    }

    /// Make every staged version the running one.
    pub fn apply_staged(&mut self) {
        for m in &mut self.members {
            if let Some(v) = m.staged.take() {
                m.version = v;
            }
        }
    }

    /// BiosVersion: the first member whose id contains "BIOS".
    pub fn bios_version(&self) -> Option<&str> {
        self.members
            .iter()
            .find(|m| m.id.to_ascii_uppercase().contains("BIOS"))
            .map(|m| m.version.as_str())
    }

    /// Manager.FirmwareVersion: the first member that looks like BMC firmware, else the first member.
    pub fn bmc_version(&self) -> Option<&str> {
        const BMC_WORDS: [&str; 5] = ["BMC", "IDRAC", "ILO", "XCC", "MANAGER"];
        let is_bmc = |id: &str| {
            let up = id.to_ascii_uppercase();
            BMC_WORDS.iter().any(|w| up.contains(w))
        };
        self.members
            .iter()
            .find(|m| is_bmc(&m.id))
            .or(self.members.first())
            .map(|m| m.version.as_str())
    }

    /// The debugging view served at `GET /sim/state`.
    pub fn to_state_json(&self, host_id: &str) -> Value {
        let versions: BTreeMap<_, _> = self
            .members
            .iter()
            .map(|m| (m.id.clone(), m.version.clone()))
            .collect();
        let staged: BTreeMap<_, _> = self
            .members
            .iter()
            .filter_map(|m| Some((m.id.clone(), m.staged.clone()?)))
            .collect();
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
    data: Mutex<HostData>,
}

impl Host {
    pub fn new(
        spec: HostSpec,
        addr: SocketAddr,
        fleet: Arc<FleetShared>,
        go_down: mpsc::UnboundedSender<std::time::Duration>,
    ) -> Self {
        let data = Mutex::new(HostData::new(&spec));
        Host {
            spec,
            addr,
            fleet,
            go_down,
            data,
        }
    }

    /// Lock the state. Never hold the guard across an `.await`.
    pub fn data(&self) -> MutexGuard<'_, HostData> {
        // A panic elsewhere must not turn every later request into a panic too.
        self.data
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}
