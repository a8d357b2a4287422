//! The rollout brakes over evolving sites: the operator's freezes and target pauses
//! (`gates::freeze`, issue 27) and the error budget (`gates::budget`).
//!
//! Owns one property: no pass starts a host that a freeze in force covers, or that would install
//! a target an operator paused or whose error budget is spent. Coverage and the budget are
//! computed here from the site's facts: a site freeze covers every host, a model freeze the hosts
//! of that catalog model (names compared like the catalog: case and blanks ignored, vendor
//! optional), a label freeze the hosts with that label; the budget is spent when
//! `error_budget_failed_hosts` (not 0) hosts failed, or when `error_budget_failed_percent` (not
//! 0) of at least `error_budget_min_hosts` attempted hosts failed.

use hostfw_model::gates::{Freeze, FreezeScope, Target};
use hostfw_model::{same_name, PassInput, Plan};
use proptest::prelude::*;

use super::site_gen::{count, scenario, Focus, Host, Site};
use super::{config, evolve, regressions, started, Invariant};

/// Whether `freeze` covers `host`, from the site's facts.
pub fn covers(site: &Site, freeze: &Freeze, host: &Host) -> bool {
    match &freeze.scope {
        FreezeScope::Site => true,
        FreezeScope::Model { vendor, model } => host.model.is_some_and(|m| {
            let m = &site.catalog[m];
            same_name(&m.model, model) && vendor.as_deref().is_none_or(|v| same_name(&m.vendor, v))
        }),
        FreezeScope::Label { key, value } => host.labels.get(key) == Some(value),
    }
}

/// The error budget of `target` is spent, from its attempts on record (`gates::budget`: every
/// host that failed counts once, however often it retried).
pub fn budget_spent(site: &Site, target: &Target) -> bool {
    let b = site.policy.error_budget;
    let rows: Vec<_> = site.rows_of(target).collect();
    let attempted = u64::from(count(rows.len()));
    let failed = u64::from(count(rows.iter().filter(|(_, r)| r.failed_at_ms.is_some()).count()));
    (b.failed_hosts > 0 && failed >= u64::from(b.failed_hosts))
        || (b.failed_percent > 0
            && attempted >= u64::from(b.min_hosts.max(1))
            && failed * 100 >= u64::from(b.failed_percent) * attempted)
}

struct BrakesHold;

impl Invariant for BrakesHold {
    /// Only the pass's starts: a host an operator started under a freeze or on a paused target
    /// (`--ignore-rollout-gates`) has a request, and is never among them.
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        for h in started(site, plan) {
            if let Some(f) = site.brakes.freezes.iter().find(|f| covers(site, f, h)) {
                return Err(format!("{} started under freeze {} on {}", h.id, f.id, f.scope));
            }
            for t in site.targets(h) {
                if site.brakes.pauses.iter().any(|p| p.target == t) {
                    return Err(format!("{} started on {t}, paused by an operator", h.id));
                }
                if budget_spent(site, &t) {
                    return Err(format!("{} started on {t}, whose error budget is spent", h.id));
                }
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("brakes")))]

    /// `gates::freeze`: "A freeze stops new starts in its scope: the whole site, one catalog
    /// model or one label value", and "A manual pause stops new starts on one rollout target";
    /// `gates::budget`: "when the failed hosts reach the site's budget, the target is paused: the
    /// scheduler starts no new host that would install it". Freezes and pauses are set and lifted,
    /// and targets resumed, while hosts run and fail.
    #[test]
    fn a_frozen_scope_or_a_paused_target_never_starts_a_host(scenario in scenario(Focus::Brakes)) {
        evolve(&scenario, &mut BrakesHold)?;
    }
}
