//! The compliance view's inputs, read from the site database: `hostfw compliance`, `hostfw watch`'s
//! report and the worker's `hostfw_component_*` metrics all read it here, so they show the same
//! numbers.
//!
//! Owns turning one read of the rows (`site_view::read_rows`: machines, requests, explored
//! reports, health reports) into each host's `hostfw_model::HostFacts`: its last good inventory
//! (the report linked to it by `site_view::link_reports`, the scheduler's rule), its substate,
//! its request, and whether the scheduler's gates count it as pending or hold it for a paused
//! target (`Plan::pending` and `Plan::held_by_pause` of `gates::plan` over the same rows, so the
//! view agrees with the pending gauge). It must not count
//! anything itself (that is `hostfw_model::compliance`), nor write to the store.

use std::collections::{HashMap, HashSet};

use hostfw_model::gates;
use hostfw_model::{compliance, Catalog, ComplianceView, HostFacts, RequestFacts, SiteConfig};
use hostfw_store::{ExploredReport, Request, Store, StoreError};

use super::site_view::{self, link_reports, SiteRows};

/// The compliance view of the site at `now_ms` (the time the update windows are tested at).
pub async fn read(
    store: &Store,
    catalog: &Catalog,
    site: &SiteConfig,
    now_ms: i64,
) -> Result<ComplianceView, StoreError> {
    let rows = site_view::read_rows(store).await?;
    Ok(assemble(&rows, catalog, site, now_ms))
}

/// The compliance view of `rows`.
pub fn assemble(rows: &SiteRows, catalog: &Catalog, site: &SiteConfig, now_ms: i64) -> ComplianceView {
    let plan = gates::plan(&rows.view(catalog, site, now_ms).input);
    let pending: HashSet<&str> = plan.pending().collect();
    let paused: HashSet<&str> = plan.held_by_pause().collect();
    let addresses: Vec<(String, &ExploredReport)> =
        rows.reports.iter().map(|r| (r.bmc_address.to_string(), r)).collect();
    let linked = link_reports(addresses.iter().map(|(a, r)| (a.as_str(), *r)), |r| r.machine_id.as_deref());
    let requests: HashMap<&str, &Request> = rows.requests.iter().map(|r| (r.machine_id.as_str(), r)).collect();
    let hosts = rows.machines.iter().map(|m| HostFacts {
        inventory: linked.get(m.id.as_str()).and_then(|r| r.report.as_ref()),
        substate: m.substate,
        request: requests
            .get(m.id.as_str())
            .map(|r| RequestFacts { started: r.started_at_ms.is_some(), exhausted: r.exhausted }),
        pending: pending.contains(m.id.as_str()),
        paused: paused.contains(m.id.as_str()),
    });
    compliance(catalog, hosts)
}
