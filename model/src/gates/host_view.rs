//! What the scheduler knows about one host at the start of a pass: lifecycle, tenant assignment,
//! per-machine auto-update override and update window, existing request, health and firmware
//! status, plus the update window's time test.
//!
//! Owns these plain data types and their small accessors. It must not read a store or a clock
//! (the caller fills a `HostView` and passes `now`), nor decide anything (see `gates::host_gates`).

use serde::{Deserialize, Serialize};

use super::firmware::FirmwareStatus;

/// A host's top-level lifecycle as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostLifecycle {
    Ready,
    Assigned,
    /// In a firmware update workflow (stored state `HostReprovision`).
    Updating,
    Maintenance,
    /// Any other stored state, verbatim.
    Other(String),
}

impl HostLifecycle {
    /// Maps a stored state name (case-sensitive): `Ready`, `Assigned`, `HostReprovision`
    /// (→ `Updating`), `Maintenance`; anything else is `Other`.
    pub fn from_state(state: &str) -> HostLifecycle {
        match state {
            "Ready" => HostLifecycle::Ready,
            "Assigned" => HostLifecycle::Assigned,
            "HostReprovision" => HostLifecycle::Updating,
            "Maintenance" => HostLifecycle::Maintenance,
            other => HostLifecycle::Other(other.to_string()),
        }
    }

    /// The stored state name (inverse of `from_state`).
    pub fn state_name(&self) -> &str {
        match self {
            HostLifecycle::Ready => "Ready",
            HostLifecycle::Assigned => "Assigned",
            HostLifecycle::Updating => "HostReprovision",
            HostLifecycle::Maintenance => "Maintenance",
            HostLifecycle::Other(s) => s,
        }
    }

    /// In maintenance or another update workflow: the host uses a slot of the site budget (S9).
    pub fn is_busy(&self) -> bool {
        matches!(self, HostLifecycle::Updating | HostLifecycle::Maintenance)
    }
}

/// A per-machine firmware update window, `[start_ms, end_ms)` in unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateWindow {
    pub start_ms: i64,
    pub end_ms: i64,
}

impl UpdateWindow {
    /// True when `start_ms <= now_ms < end_ms`.
    pub fn contains(&self, now_ms: i64) -> bool {
        self.start_ms <= now_ms && now_ms < self.end_ms
    }
}

/// One host as input to a scheduling pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostView {
    pub machine_id: String,
    pub lifecycle: HostLifecycle,
    /// A tenant instance runs on it.
    pub assigned: bool,
    /// Per-machine override (`machine auto-update --enable/--disable`); `None` = site default.
    pub auto_update: Option<bool>,
    /// Per-machine firmware update window (`managed-host start-updates`).
    pub window: Option<UpdateWindow>,
    /// A reprovisioning request exists (pending or running).
    pub has_request: bool,
    pub unhealthy: bool,
    pub firmware: FirmwareStatus,
}

impl HostView {
    /// Runs tenant work: an instance is on it or its lifecycle is `Assigned`.
    pub fn is_assigned(&self) -> bool {
        self.assigned || self.lifecycle == HostLifecycle::Assigned
    }

    /// Uses a slot of the site budget: has a request, or is updating or in maintenance (S9).
    pub fn is_in_flight(&self) -> bool {
        self.has_request || self.lifecycle.is_busy()
    }
}
