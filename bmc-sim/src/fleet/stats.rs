//! Counters a test can assert on: [`SimStats`] / [`HostStats`] and the fleet-wide atomic
//! counters behind them. Counting only; never decides anything.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use serde::Serialize;

/// Fleet-wide counters, as returned by `RunningFleet::stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SimStats {
    /// Update tasks accepted, fleet-wide.
    pub uploads_started: u64,
    /// High-water mark of uploads in flight at once, fleet-wide. An upload is in flight from
    /// the moment its POST is accepted for processing until its task finishes.
    pub max_concurrent_uploads: u64,
    /// ComputerSystem.Reset actions accepted.
    pub resets_system: u64,
    /// Manager.Reset actions accepted.
    pub resets_manager: u64,
    /// Chassis.Reset PowerCycle (AC power cycle) actions accepted.
    pub ac_cycles_total: u64,
    /// High-water mark of BMCs serving at least one request at the same moment, fleet-wide. A
    /// client that talks to at most K BMCs at once can never push this above K (the gaps between
    /// its requests to one BMC only lower it), so it checks a client's concurrency bound.
    pub max_busy_bmcs: u64,
    /// Requests received, fleet-wide (every method and path, `/sim` included).
    pub requests_total: u64,
    pub per_host: BTreeMap<String, HostStats>,
}

/// Per-host counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostStats {
    /// Update tasks accepted by this BMC.
    pub uploads: u64,
    /// Update requests (upload POSTs, SimpleUpdate actions) that reached the BMC's update slot,
    /// accepted or refused because an update was in progress: a client that POSTs while its own
    /// earlier update still runs shows up here, not in `uploads`.
    pub update_requests: u64,
    pub system_resets: u64,
    pub manager_resets: u64,
    /// Chassis.Reset PowerCycle (AC power cycle) actions accepted by this BMC.
    pub ac_cycles: u64,
    /// Per inventory member id: how many update tasks applied or staged a version to it (a
    /// re-flash of the same version counts again; failed tasks and `version_never_changes`
    /// tasks do not count).
    pub installs: BTreeMap<String, u64>,
    /// Accepted PATCHes that change a setting other than the boot override: the generic
    /// shape's lockdown, or any captured resource of a profile (vendor lockdown, BIOS attributes).
    pub setting_patches: u64,
    /// Requests received by this BMC (every method and path, `/sim` included).
    pub requests: u64,
    /// High-water mark of requests this BMC was serving at the same moment: a client that keeps
    /// at most K requests in flight to one BMC can never push it above K.
    pub max_requests_in_flight: u64,
    /// Collection GETs answered with their members expanded (`$expand`).
    pub expanded_reads: u64,
}

/// The fleet-wide counters, shared by every BMC of one fleet.
#[derive(Debug, Default)]
pub(crate) struct FleetCounters {
    uploads_started: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    resets_system: AtomicU64,
    resets_manager: AtomicU64,
    ac_cycles: AtomicU64,
    /// Signed: a BMC's idle transition can be counted a moment before its busy one.
    busy_bmcs: AtomicI64,
    max_busy_bmcs: AtomicI64,
    requests: AtomicU64,
}

impl FleetCounters {
    pub fn request(&self) {
        self.requests.fetch_add(1, Ordering::SeqCst);
    }
    /// A BMC went from no request in progress to one.
    pub fn bmc_busy(&self) {
        let now = self.busy_bmcs.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_busy_bmcs.fetch_max(now, Ordering::SeqCst);
    }
    /// A BMC finished its last request in progress.
    pub fn bmc_idle(&self) {
        self.busy_bmcs.fetch_sub(1, Ordering::SeqCst);
    }
    pub fn upload_in_flight(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
    }
    pub fn upload_done(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
    pub fn upload_started(&self) {
        self.uploads_started.fetch_add(1, Ordering::SeqCst);
    }
    pub fn system_reset(&self) {
        self.resets_system.fetch_add(1, Ordering::SeqCst);
    }
    pub fn manager_reset(&self) {
        self.resets_manager.fetch_add(1, Ordering::SeqCst);
    }
    pub fn ac_cycle(&self) {
        self.ac_cycles.fetch_add(1, Ordering::SeqCst);
    }
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// A snapshot; `per_host` is filled by the caller.
    pub fn snapshot(&self) -> SimStats {
        SimStats {
            uploads_started: self.uploads_started.load(Ordering::SeqCst),
            max_concurrent_uploads: self.max_in_flight.load(Ordering::SeqCst),
            resets_system: self.resets_system.load(Ordering::SeqCst),
            resets_manager: self.resets_manager.load(Ordering::SeqCst),
            ac_cycles_total: self.ac_cycles.load(Ordering::SeqCst),
            max_busy_bmcs: self.max_busy_bmcs.load(Ordering::SeqCst).max(0) as u64,
            requests_total: self.requests.load(Ordering::SeqCst),
            per_host: BTreeMap::new(),
        }
    }
}
