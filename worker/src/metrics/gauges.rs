//! The scheduler gauges of a scrape, from the site view and the pass it would plan.
//!
//! Owns the meaning of each gauge (see docs/operations.md, "Metrics"), as the seed defines them:
//! - pending: hosts the drift query selects as needing firmware work (`Plan::pending`, the same
//!   hosts the compliance view counts as pending): the pass would start them now, or holds them
//!   only for the site-wide ceiling, a failure-domain cap or their update window. A drifted
//!   host that no gate would select (nothing installable, version not reported, not ready,
//!   auto-update off, manual tagging) is not pending; `plan` names its reason;
//! - active: started requests whose retry budget is not spent;
//! - exhausted: requests whose workflow recorded the budget as spent (stored with the retry
//!   record), never a host during its last pending retry;
//! - in maintenance, ceiling and free slots straight from the `Plan`.
//!
//! Assigned hosts count like unassigned ones (NICo's queries miss them). It must stay pure: the
//! caller reads the database and runs `gates::plan`.

use hostfw_model::gates::Plan;
use hostfw_store::Request;

use super::render::Gauges;

/// The gauges for `requests` and their `plan`.
pub fn compute(requests: &[Request], plan: &Plan) -> Gauges {
    let exhausted = |r: &Request| r.exhausted;
    Gauges {
        pending: count(plan.pending()),
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
