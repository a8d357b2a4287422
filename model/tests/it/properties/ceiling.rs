//! The site ceiling over evolving sites (seed "Site capacity" and "Existing work"; checklist S9,
//! S11–S13; issue 27's repair cap).
//!
//! Owns one property: a pass never takes the hosts in flight past the ceiling. The ceiling and
//! the in-flight count are computed here from the site's facts, not read from the plan:
//! `absolute`, or `ceil(percent × hosts / 100) − unhealthy hosts` (floored at 0), the smaller of
//! the two, 0 when both are unset; in flight is every host with a request, updating or in
//! maintenance (S9: "Machines already in maintenance or another update workflow count against
//! the shared budget"), except that with `max_hosts_in_repair` set the hosts in repair are set
//! apart under that cap (and at the cap nothing starts).

use hostfw_model::{PassInput, Plan};
use proptest::prelude::*;

use super::site_gen::{count, scenario, Focus, Site};
use super::{config, evolve, regressions, Invariant};

/// The ceiling computed from the site's facts (S11, S12, S13).
pub fn expected_ceiling(site: &Site) -> u32 {
    let total = u64::try_from(site.hosts.len()).unwrap_or(u64::MAX);
    let unhealthy = u64::try_from(site.hosts.iter().filter(|h| Site::unhealthy(h)).count()).unwrap_or(u64::MAX);
    let limits = site.policy.limits;
    let by_percent = limits.percent.map(|p| {
        let share = (u64::from(p) * total).div_ceil(100);
        u32::try_from(share.saturating_sub(unhealthy)).unwrap_or(u32::MAX)
    });
    match (limits.absolute, by_percent) {
        (None, None) => 0,
        (Some(a), None) => a,
        (None, Some(p)) => p,
        (Some(a), Some(p)) => a.min(p),
    }
}

/// The hosts holding a slot of the ceiling before the pass (S9; repair hosts apart when the
/// repair cap is set).
pub fn expected_in_flight(site: &Site) -> u32 {
    let apart = site.policy.max_hosts_in_repair.is_some();
    count(site.hosts.iter().filter(|h| Site::in_flight(h) && !(apart && Site::in_repair(h))).count())
}

/// The hosts in repair, when the repair cap sets them apart.
pub fn expected_in_repair(site: &Site) -> u32 {
    count(site.hosts.iter().filter(|h| Site::in_repair(h)).count())
}

struct CeilingHolds;

impl Invariant for CeilingHolds {
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        let ceiling = expected_ceiling(site);
        let in_flight = expected_in_flight(site);
        let starts = count(plan.start.len());
        if plan.ceiling.limit != ceiling {
            return Err(format!(
                "the plan's ceiling is {} ({}), the site's is {ceiling}",
                plan.ceiling.limit, plan.ceiling.how
            ));
        }
        if plan.in_flight != in_flight {
            return Err(format!("the plan counts {} hosts in flight, the site has {in_flight}", plan.in_flight));
        }
        // Only when the pass starts hosts: direct requests (with or without the rollout gates) and
        // maintenance may have taken the hosts in flight past the ceiling; the pass then starts
        // none.
        if starts > 0 && in_flight + starts > ceiling {
            return Err(format!(
                "{starts} hosts started with {in_flight} in flight under a ceiling of {ceiling} ({})",
                plan.ceiling.how
            ));
        }
        if let Some(cap) = site.policy.max_hosts_in_repair {
            let in_repair = expected_in_repair(site);
            if in_repair > 0 && in_repair >= cap && starts > 0 {
                return Err(format!(
                    "{starts} hosts started with {in_repair} in repair at max_hosts_in_repair = {cap}"
                ));
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("ceiling")))]

    /// Seed "Site capacity": `max_concurrent_machine_updates_absolute` is the site-wide ceiling
    /// (S11), the percentage ceiling accounts for unhealthy hosts (S12), both unset is 0 (S13), and
    /// "Machines already in maintenance consume this budget" (S9): no pass brings the hosts in
    /// flight above the ceiling, whatever hosts join, fail, enter maintenance or turn unhealthy.
    #[test]
    fn a_pass_never_takes_the_hosts_in_flight_past_the_ceiling(scenario in scenario(Focus::Ceiling)) {
        evolve(&scenario, &mut CeilingHolds)?;
    }
}
