//! The scheduler gauges of a scrape, from the site view and the pass it would plan.
//!
//! Owns the meaning of each gauge (see README "Metrics"): pending = drifted hosts without a
//! request; active = started requests whose retry budget is not spent; exhausted = requests with
//! `retry_count >= max_retries`; in maintenance, ceiling and free slots straight from the `Plan`.
//! Assigned hosts count like unassigned ones (NICo's queries miss them). It must stay pure: the
//! caller reads the database and runs `gates::plan`.

use hostfw_model::gates::{FirmwareStatus, HostView, Plan};
use hostfw_store::Request;

use super::render::Gauges;

/// The gauges for `hosts`, `requests` and their `plan`, with the site's `max_retries`.
pub fn compute(hosts: &[HostView], requests: &[Request], plan: &Plan, max_retries: u32) -> Gauges {
    let exhausted = |r: &Request| r.retry_count >= max_retries;
    Gauges {
        pending: count(hosts.iter().filter(|h| {
            !h.has_request && matches!(h.firmware, FirmwareStatus::Drifted { .. }) && !h.firmware.is_compliant()
        })),
        active: count(requests.iter().filter(|r| r.started_at_ms.is_some() && !exhausted(r))),
        exhausted: count(requests.iter().filter(|r| exhausted(r))),
        in_maintenance: plan.in_flight,
        ceiling: plan.ceiling.limit,
        slots_free: plan.available,
    }
}

fn count<T>(items: impl Iterator<Item = T>) -> u32 {
    u32::try_from(items.count()).unwrap_or(u32::MAX)
}
