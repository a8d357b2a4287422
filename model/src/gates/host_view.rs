//! What the scheduler knows about one host at the start of a pass: lifecycle, tenant assignment,
//! per-machine auto-update override and update window, existing request, health and firmware
//! status, plus the update window's time test.
//!
//! Owns these plain data types and their small accessors. It must not read a store or a clock
//! (the caller fills a `HostView` and passes `now`), nor decide anything (see `gates::host_gates`).

use serde::{Deserialize, Serialize};

use super::budget::Target;
use super::firmware::FirmwareStatus;
use crate::labels::Labels;
use crate::{HostState, TimeWindow};

/// One host as input to a scheduling pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostView {
    pub machine_id: String,
    pub state: HostState,
    /// A tenant instance runs on it.
    pub assigned: bool,
    /// Per-machine override (`machine auto-update --enable/--disable`); `None` = site default.
    pub auto_update: Option<bool>,
    /// Per-machine firmware update window (`managed-host start-updates`).
    pub window: Option<TimeWindow>,
    /// A reprovisioning request exists (pending or running).
    pub has_request: bool,
    /// Its request's retry budget is spent: it holds its slot until an operator resets it, but
    /// runs no more (a canary wave does not wait for it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exhausted: bool,
    /// Marked for hands-on repair (`host reprovision abort --to-maintenance`, or a platform
    /// restore that failed during an abort) until it leaves maintenance.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repair: bool,
    pub unhealthy: bool,
    pub firmware: FirmwareStatus,
    /// The machine's labels (failure domains: `max_concurrent_per_label`).
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// The rollout targets it would install (its differing components at their desired
    /// versions): the error budget pauses a host when one of them is paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<Target>,
}

impl HostView {
    /// Runs tenant work: an instance is on it or its lifecycle is `Assigned`.
    pub fn is_assigned(&self) -> bool {
        self.state.is_assigned(self.assigned)
    }

    /// Out of service for the fleet: has a request, or is updating or in maintenance (S9). The
    /// failure-domain caps count these hosts; the update ceiling counts those not in repair.
    pub fn is_in_flight(&self) -> bool {
        self.has_request || self.state.is_busy()
    }

    /// Needs hands-on repair (issue 27): its request's retry budget is spent, or it was aborted
    /// to maintenance. Such a host is set apart from the update ceiling, under its own cap
    /// (`machine_updater.max_hosts_in_repair`), so broken hosts do not starve healthy targets.
    pub fn in_repair(&self) -> bool {
        (self.has_request && self.exhausted) || self.repair
    }

    /// Takes a slot of the update ceiling: in flight and not in repair.
    pub fn holds_update_slot(&self) -> bool {
        self.is_in_flight() && !self.in_repair()
    }
}
