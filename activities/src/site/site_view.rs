//! The scheduler's view of the site: one `PassInput` read from the site database and the catalog.
//!
//! Owns turning rows (machines, requests, explored reports, health reports) into the pure
//! `hostfw_model::gates` input, so the manager's pass, `hostfw plan` and the metrics endpoint all
//! decide from the same view. It must not decide anything itself (that is `gates::plan`).

use std::collections::{HashMap, HashSet};

use hostfw_model::gates::{firmware_status, HostView, PassInput, SchedulingPolicy};
use hostfw_model::{Catalog, SiteConfig};
use hostfw_store::{Request, Store, StoreError};

use crate::host::host_state::HEALTH_SOURCE;

/// The site as the scheduler sees it, plus the request rows (metrics need their retry counts).
pub struct SiteView {
    pub input: PassInput,
    pub requests: Vec<Request>,
}

/// Read the site at `now_ms`.
pub async fn read(store: &Store, catalog: &Catalog, site: &SiteConfig, now_ms: i64) -> Result<SiteView, StoreError> {
    let machines = store.machine_list().await?;
    let requests = store.request_list().await?;
    let requested: HashSet<&str> = requests.iter().map(|r| r.machine_id.as_str()).collect();
    let reports: HashMap<String, hostfw_store::ExploredReport> =
        store.report_list().await?.into_iter().filter_map(|r| r.machine_id.clone().map(|id| (id, r))).collect();
    // Any health report but our own update marker makes a host unhealthy.
    let unhealthy: HashSet<String> = store
        .health_report_list()
        .await?
        .into_iter()
        .filter(|h| h.source != HEALTH_SOURCE)
        .map(|h| h.machine_id)
        .collect();
    let hosts = machines
        .iter()
        .map(|m| {
            let report = reports.get(&m.id);
            let inventory = report.and_then(|r| r.report.as_ref());
            let error = report.and_then(|r| r.error.as_deref());
            // One lookup rule everywhere: the vendor and model the BMC reports.
            let vendor = inventory.map(|i| i.vendor.as_str()).or(m.vendor.as_deref());
            let model = inventory.map(|i| i.model.as_str()).or(m.model.as_deref());
            HostView {
                machine_id: m.id.clone(),
                state: m.state,
                assigned: m.state.is_assigned(m.instance_id.is_some()),
                auto_update: m.auto_update,
                window: m.window,
                has_request: requested.contains(m.id.as_str()),
                unhealthy: error.is_some() || unhealthy.contains(&m.id),
                firmware: firmware_status(catalog, vendor, model, inventory, error),
            }
        })
        .collect();
    Ok(SiteView { input: PassInput { now_ms, policy: SchedulingPolicy::from_config(site), hosts }, requests })
}
