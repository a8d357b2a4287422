//! The scheduler's view of the site: one `PassInput` read from the site database and the catalog
//! (machines, requests, explored reports, health reports, the error budget's record, the
//! durations of past runs, the approval holds and the operator's brakes: freezes and manual
//! target pauses).
//!
//! Owns turning rows (machines, requests, explored reports, health reports) into the pure
//! `hostfw_model::gates` input, so the manager's pass, `hostfw plan` and the metrics endpoint all
//! decide from the same view: [`read`] reads every row ([`read_rows`], which the compliance view
//! reads too, `compliance_read`); `site_view_cache` keeps the per-row parts
//! ([`MachineFacts`], [`ReportFacts`]) across reads and builds the same view with [`assemble`].
//! It must not decide anything itself (that is `gates::plan`).
//!
//! The rules, in one place for both: hosts come in machine id order (bytes, whatever the
//! database's collation); a machine's report is the one linked to it with the greatest BMC
//! address; a host is unhealthy when its last exploration failed or it has a health report from
//! anyone but our own update marker; its firmware status comes from its report alone.

use std::collections::{HashMap, HashSet};

use hostfw_model::gates::{
    firmware_status, host_targets, ApprovalFacts, ApprovalHold, ApprovalWait, Brakes, FirmwareStatus, HostView,
    PassInput, SchedulingPolicy, Target, TargetRecord, UpdateDurations,
};
use hostfw_model::{Catalog, HostState, Labels, SiteConfig, TimeWindow};
use hostfw_store::{ExploredReport, HealthReport, Machine, Request, Store, StoreError};

use crate::host::host_state::HEALTH_SOURCE;

/// The site as the scheduler sees it, plus the request rows (metrics need their retry counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteView {
    pub input: PassInput,
    pub requests: Vec<Request>,
}

/// What the view takes from one machine row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineFacts {
    pub state: HostState,
    pub assigned: bool,
    pub auto_update: Option<bool>,
    pub window: Option<TimeWindow>,
    pub labels: Labels,
    /// Marked for hands-on repair (an abort to maintenance).
    pub repair: bool,
}

impl MachineFacts {
    pub fn of(m: &Machine) -> MachineFacts {
        MachineFacts {
            state: m.state,
            assigned: m.state.is_assigned(m.instance_id.is_some()),
            auto_update: m.auto_update,
            window: m.window,
            labels: m.labels.clone(),
            repair: m.repair.is_some(),
        }
    }
}

/// What the view takes from one explored report: its machine, whether the last exploration
/// failed, and the firmware status its inventory has under the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFacts {
    pub machine_id: Option<String>,
    pub failed: bool,
    pub firmware: FirmwareStatus,
    /// The rollout targets its drifted components would install (`gates::host_targets`).
    pub targets: Vec<Target>,
}

impl ReportFacts {
    /// The report's facts under `catalog`. The catalog is looked up with the vendor and model the
    /// BMC reports (without an inventory the status is "not explored" or "exploration failed",
    /// whatever the machine row says).
    pub fn of(catalog: &Catalog, r: &ExploredReport) -> ReportFacts {
        let inventory = r.report.as_ref();
        let firmware = firmware_status(
            catalog,
            inventory.map(|i| i.vendor.as_str()),
            inventory.map(|i| i.model.as_str()),
            inventory,
            r.error.as_deref(),
        );
        let targets = match (&firmware, inventory.and_then(|i| catalog.find(&i.vendor, &i.model))) {
            (FirmwareStatus::Drifted { differing, .. }, Some(model)) => host_targets(model, differing),
            _ => Vec::new(),
        };
        ReportFacts { machine_id: r.machine_id.clone(), failed: r.error.is_some(), firmware, targets }
    }
}

/// Every row a view is built from, as read at one time (`read_rows`). Other views of the site
/// (the compliance view, `compliance_read`) start from the same rows.
#[derive(Debug, Clone)]
pub struct SiteRows {
    pub machines: Vec<Machine>,
    pub requests: Vec<Request>,
    pub reports: Vec<ExploredReport>,
    pub health: Vec<HealthReport>,
    /// What the site recorded of past and running updates.
    pub records: PassRecords,
}

/// The site database's records a pass decides on besides the hosts: the error budget's record
/// per rollout target (canary waves too), the durations of past runs (window fit) and the holds
/// of hosts whose approval deadline passed under `skip`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassRecords {
    pub targets: Vec<TargetRecord>,
    pub update_durations: Vec<UpdateDurations>,
    pub approval_holds: Vec<ApprovalHold>,
    /// The freezes in force and the targets paused by an operator.
    pub brakes: Brakes,
}

/// Read the records of a pass.
pub async fn read_records(store: &Store) -> Result<PassRecords, StoreError> {
    Ok(PassRecords {
        targets: store.target_records().await?,
        update_durations: store.update_durations().await?,
        approval_holds: store.approval_holds().await?,
        brakes: Brakes { freezes: store.freeze_list().await?, pauses: store.target_pauses().await? },
    })
}

/// Read every row of the view.
pub async fn read_rows(store: &Store) -> Result<SiteRows, StoreError> {
    Ok(SiteRows {
        machines: store.machine_list().await?,
        requests: store.request_list().await?,
        reports: store.report_list().await?,
        health: store.health_report_list().await?,
        records: read_records(store).await?,
    })
}

impl SiteRows {
    /// The view of these rows under `catalog` at `now_ms`.
    pub fn view(&self, catalog: &Catalog, site: &SiteConfig, now_ms: i64) -> SiteView {
        let mut machines: Vec<(&str, MachineFacts)> =
            self.machines.iter().map(|m| (m.id.as_str(), MachineFacts::of(m))).collect();
        machines.sort_by(|a, b| a.0.cmp(b.0));
        let reports: Vec<(String, ReportFacts)> =
            self.reports.iter().map(|r| (r.bmc_address.to_string(), ReportFacts::of(catalog, r))).collect();
        let hosts = machines.iter().map(|(id, m)| (*id, m));
        let reports = reports.iter().map(|(k, r)| (k.as_str(), r));
        assemble(hosts, reports, self.requests.clone(), &self.health, self.records.clone(), site, now_ms)
    }
}

/// Read the site at `now_ms`, every row.
pub async fn read(store: &Store, catalog: &Catalog, site: &SiteConfig, now_ms: i64) -> Result<SiteView, StoreError> {
    Ok(read_rows(store).await?.view(catalog, site, now_ms))
}

/// Each machine's report among `reports` (keyed by BMC address as stored): the one with the
/// greatest BMC address among those `machine_of` links to it.
pub fn link_reports<'a, R>(
    reports: impl Iterator<Item = (&'a str, &'a R)>,
    machine_of: impl Fn(&'a R) -> Option<&'a str>,
) -> HashMap<&'a str, &'a R> {
    let mut linked: HashMap<&str, (&str, &R)> = HashMap::new();
    for (address, report) in reports {
        let Some(machine_id) = machine_of(report) else { continue };
        match linked.get(machine_id) {
            Some((kept, _)) if *kept >= address => {}
            _ => {
                linked.insert(machine_id, (address, report));
            }
        }
    }
    linked.into_iter().map(|(id, (_, r))| (id, r)).collect()
}

/// The view of `machines` (in the order given: machine id order) with their `reports` (keyed
/// by BMC address), the requests and the health reports.
pub fn assemble<'a>(
    machines: impl Iterator<Item = (&'a str, &'a MachineFacts)>,
    reports: impl Iterator<Item = (&'a str, &'a ReportFacts)>,
    requests: Vec<Request>,
    health: &[HealthReport],
    records: PassRecords,
    site: &SiteConfig,
    now_ms: i64,
) -> SiteView {
    let linked = link_reports(reports, |r| r.machine_id.as_deref());
    let requested: HashSet<&str> = requests.iter().map(|r| r.machine_id.as_str()).collect();
    let unstarted: HashMap<&str, i64> = requests
        .iter()
        .filter(|r| r.started_at_ms.is_none())
        .map(|r| (r.machine_id.as_str(), r.requested_at_ms))
        .collect();
    let exhausted: HashSet<&str> = requests.iter().filter(|r| r.exhausted).map(|r| r.machine_id.as_str()).collect();
    // Any health report but our own update marker makes a host unhealthy.
    let reported: HashSet<&str> =
        health.iter().filter(|h| h.source != HEALTH_SOURCE).map(|h| h.machine_id.as_str()).collect();
    let mut waits = Vec::new();
    let hosts = machines
        .map(|(id, m)| {
            let report = linked.get(id).copied();
            // An assigned host's request that has not started waits for its tenant's approval.
            if let Some(&since_ms) = unstarted.get(id).filter(|_| m.state.is_assigned(m.assigned)) {
                waits.push(ApprovalWait { machine_id: id.to_string(), since_ms });
            }
            HostView {
                machine_id: id.to_string(),
                state: m.state,
                assigned: m.assigned,
                auto_update: m.auto_update,
                window: m.window,
                has_request: requested.contains(id),
                exhausted: exhausted.contains(id),
                repair: m.repair,
                unhealthy: report.is_some_and(|r| r.failed) || reported.contains(id),
                firmware: report.map_or(FirmwareStatus::NotExplored, |r| r.firmware.clone()),
                labels: m.labels.clone(),
                targets: report.map_or_else(Vec::new, |r| r.targets.clone()),
            }
        })
        .collect();
    SiteView {
        input: PassInput {
            now_ms,
            policy: SchedulingPolicy::from_config(site),
            hosts,
            targets: records.targets,
            update_durations: records.update_durations,
            approvals: ApprovalFacts { waits, holds: records.approval_holds },
            brakes: records.brakes,
        },
        requests,
    }
}
