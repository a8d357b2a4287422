//! The compliance view (`hostfw compliance`, the `hostfw_component_*` metrics): per catalog
//! vendor/model and component, the desired (default) version, every version the fleet runs with
//! its host count, and how many hosts are compliant, drifted, pending, active, failed, exhausted
//! or paused for it.
//!
//! Owns the counting rules and the view's types. It must do no I/O, no async and read no clock:
//! the caller reads the site database and hands in each host's facts, including whether the
//! scheduler's gates count it as pending (`Plan::pending`, the one definition the
//! `carbide_pending_host_firmware_update_count` gauge uses too). It must not compare versions
//! itself: a component's state on a host is `drift::drift`'s verdict, and its running versions
//! are those of the members its matcher finds (`InventoryReport::matching`), known or not
//! (`InventoryMember::known_version`).
//!
//! The rules, per (model, component with a managed default), over the hosts whose stored
//! inventory reports that model (`Catalog::find` on the reported vendor and model):
//! - `hosts`: those hosts. Each is exactly one of `compliant` (every matching member reports the
//!   default), `drifted` (a matching member reports another known version), `not_reported` (no
//!   known version differs, but one is not reported) or `unmatched` (no member matches);
//! - of the drifted hosts: `pending` (no request, and the gates would start it now or hold it only
//!   for the ceiling or a closed update window), `active` (a started request whose retry budget
//!   is not spent), `failed` (substate `FailedFirmwareUpgrade`, a request, budget left: it waits
//!   for its retry, so it is active too, as in the `active` gauge) and `exhausted` (the request's
//!   budget is spent), `paused` (no request, and the gates hold it because a target it would
//!   install, this component's or another, is paused by its error budget). A drifted host may be none of these (a request not started yet, a gate
//!   that holds it: auto-update off, manual tagging, ...; `hostfw plan` says why);
//! - `versions`: each distinct version among a host's matching members counts that host once; a
//!   member whose version is not reported counts under `None`. Versions are listed in text order,
//!   `None` last.
//!
//! Hosts without a stored inventory, or whose model has no catalog entry, are only counted
//! (`not_explored`, `no_catalog_entry`). A host whose last exploration failed is counted from its
//! last good inventory. Rows come in catalog order, components in `ComponentType` order; every
//! catalog component with a default has its row, with zeros when no host runs that model.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::component::ComponentType;
use crate::drift::{drift, DriftKind};
use crate::host_model::HostModel;
use crate::inventory::InventoryReport;
use crate::names::named_enum;
use crate::substate::HostSubstate;

/// A host's reprovisioning request, as far as compliance cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFacts {
    /// The update has started (the host was protected).
    pub started: bool,
    /// The retry budget is spent.
    pub exhausted: bool,
}

/// One managed host's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostFacts<'a> {
    /// The last good inventory of its BMC (`None`: never explored successfully).
    pub inventory: Option<&'a InventoryReport>,
    /// Its current substate.
    pub substate: Option<HostSubstate>,
    /// Its reprovisioning request, if any.
    pub request: Option<RequestFacts>,
    /// The gates count it as pending (`Plan::pending`).
    pub pending: bool,
    /// The gates hold it because a target it would install is paused by its error budget
    /// (`SkipReason::TargetPaused`).
    pub paused: bool,
}

named_enum! {
    /// What a host counts as for one component (the `status` label of the metrics).
    pub enum ComplianceStatus ("compliance status") {
        Compliant => "compliant",
        Drifted => "drifted",
        Pending => "pending",
        Active => "active",
        Failed => "failed",
        Exhausted => "exhausted",
        Paused => "paused",
        NotReported => "not_reported",
        Unmatched => "unmatched",
    }
}

/// Host counts of one (model, component); see the module doc for each rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostCounts {
    /// Hosts of the model with a stored inventory.
    pub hosts: u32,
    pub compliant: u32,
    pub drifted: u32,
    pub pending: u32,
    pub active: u32,
    pub failed: u32,
    pub exhausted: u32,
    #[serde(default)]
    pub paused: u32,
    pub not_reported: u32,
    pub unmatched: u32,
}

impl HostCounts {
    /// The count of one status.
    pub fn get(&self, status: ComplianceStatus) -> u32 {
        match status {
            ComplianceStatus::Compliant => self.compliant,
            ComplianceStatus::Drifted => self.drifted,
            ComplianceStatus::Pending => self.pending,
            ComplianceStatus::Active => self.active,
            ComplianceStatus::Failed => self.failed,
            ComplianceStatus::Exhausted => self.exhausted,
            ComplianceStatus::Paused => self.paused,
            ComplianceStatus::NotReported => self.not_reported,
            ComplianceStatus::Unmatched => self.unmatched,
        }
    }
}

/// One version running in the fleet for a component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunningVersion {
    /// The reported version; `None` for members whose version is not reported.
    pub version: Option<String>,
    /// Hosts with at least one matching member on it.
    pub hosts: u32,
}

/// One row of the view: a (vendor/model, component) of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComponentCompliance {
    pub vendor: String,
    pub model: String,
    pub component: ComponentType,
    /// The catalog default version.
    pub desired: String,
    /// Every version the fleet runs (text order, `None` last).
    pub versions: Vec<RunningVersion>,
    #[serde(flatten)]
    pub counts: HostCounts,
}

/// The whole view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComplianceView {
    /// Catalog order, components in `ComponentType` order.
    pub components: Vec<ComponentCompliance>,
    /// Hosts without a stored inventory.
    pub not_explored: u32,
    /// Hosts whose reported vendor/model has no catalog entry.
    pub no_catalog_entry: u32,
}

/// Per-row accumulator.
#[derive(Default)]
struct Tally {
    counts: HostCounts,
    versions: BTreeMap<Option<String>, u32>,
}

/// The view of `hosts` under `catalog`.
pub fn compliance<'a>(catalog: &Catalog, hosts: impl IntoIterator<Item = HostFacts<'a>>) -> ComplianceView {
    // One row group per catalog model; a later model for the same names is never found.
    let models: Vec<&HostModel> = catalog
        .models()
        .iter()
        .enumerate()
        .filter(|(i, m)| catalog.models()[..*i].iter().all(|earlier| !earlier.is_for(&m.vendor, &m.model)))
        .map(|(_, m)| m)
        .collect();
    let mut tallies: Vec<BTreeMap<ComponentType, Tally>> =
        models.iter().map(|m| m.desired_versions().into_keys().map(|c| (c, Tally::default())).collect()).collect();
    let mut view = ComplianceView::default();
    for host in hosts {
        let Some(report) = host.inventory else {
            view.not_explored += 1;
            continue;
        };
        let Some(index) = catalog
            .find(&report.vendor, &report.model)
            .and_then(|found| models.iter().position(|m| std::ptr::eq(*m, found)))
        else {
            view.no_catalog_entry += 1;
            continue;
        };
        count_host(models[index], report, &host, &mut tallies[index]);
    }
    for (model, rows) in models.iter().zip(tallies) {
        let desired = model.desired_versions();
        for (component, tally) in rows {
            let mut versions: Vec<RunningVersion> =
                tally.versions.into_iter().map(|(version, hosts)| RunningVersion { version, hosts }).collect();
            // `BTreeMap` puts `None` first; the view lists it last.
            let unknown_first = versions.first().is_some_and(|v| v.version.is_none());
            versions.rotate_left(usize::from(unknown_first));
            view.components.push(ComponentCompliance {
                vendor: model.vendor.clone(),
                model: model.model.clone(),
                component,
                desired: desired.get(&component).cloned().unwrap_or_default(),
                versions,
                counts: tally.counts,
            });
        }
    }
    view
}

/// Count one host of `model` into its rows.
fn count_host(
    model: &HostModel,
    report: &InventoryReport,
    host: &HostFacts<'_>,
    rows: &mut BTreeMap<ComponentType, Tally>,
) {
    let d = drift(model, report);
    let request = host.request;
    let budget_left = request.is_some_and(|r| !r.exhausted);
    for (component, tally) in rows.iter_mut() {
        let c = &mut tally.counts;
        c.hosts += 1;
        let difference = d.differences.iter().find(|x| x.component == *component).map(|x| &x.kind);
        match difference {
            Some(DriftKind::Differs) => {
                c.drifted += 1;
                c.pending += u32::from(host.pending && request.is_none());
                c.active += u32::from(request.is_some_and(|r| r.started) && budget_left);
                c.failed += u32::from(host.substate == Some(HostSubstate::FailedFirmwareUpgrade) && budget_left);
                c.exhausted += u32::from(request.is_some_and(|r| r.exhausted));
                c.paused += u32::from(host.paused && request.is_none());
            }
            Some(DriftKind::NoInventoryMatch { .. }) => c.unmatched += 1,
            None if d.not_reported.iter().any(|n| n.component == *component) => c.not_reported += 1,
            None => c.compliant += 1,
        }
        let Some(matcher) = model.components.get(component).map(|c| &c.current_version_reported_as) else {
            continue;
        };
        let running: BTreeSet<Option<&str>> = report.matching(matcher).map(|m| m.known_version()).collect();
        for version in running {
            *tally.versions.entry(version.map(str::to_string)).or_default() += 1;
        }
    }
}
