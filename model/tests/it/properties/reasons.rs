//! The plan's skip reasons over evolving sites (`gates::reason`, `gates::pass`: "Every host
//! neither compliant nor started, in input order, with its first failing gate").
//!
//! Owns one property: the reasons are complete and true. Every host that is not compliant is
//! either started or skipped, exactly once, and no compliant host is either (a host with a
//! component whose version is not reported is not compliant); every reason holds against the
//! site's facts (its firmware, the components it does not report, policy, request, state,
//! window, the ceiling and the failure-domain load computed as the ceiling and label-cap
//! properties compute them, the record of its targets, the holds and brakes in force) and agrees
//! with the numbers it names.

use std::collections::BTreeMap;

use hostfw_model::gates::Target;
use hostfw_model::{FirmwareStatus, HostState, PassInput, Plan, SkipReason};
use proptest::prelude::*;

use super::brakes::{budget_spent, covers};
use super::ceiling::{expected_ceiling, expected_in_flight, expected_in_repair};
use super::label_caps::label_load;
use super::races::{reported_drift, unreported};
use super::site_gen::{count, scenario, Focus, Host, Site};
use super::waves::{starts_on, wave_facts};
use super::windows::{explicit, likely_duration};
use super::{config, evolve, regressions, Invariant};

struct ReasonsHold;

/// A canary wave of `target` ended over the budget's share (`gates::waves`: "A wave that ended
/// with too many failures holds the target").
fn wave_share_exceeded(site: &Site, target: &Target) -> bool {
    if site.policy.waves.waves.is_empty() {
        return false;
    }
    let facts = wave_facts(site, target);
    let pct = site.policy.error_budget.failed_percent;
    facts.failed_last > 0
        && (pct == 0 || u64::from(facts.failed_last) * 100 > u64::from(pct) * u64::from(facts.attempted))
}

/// Whether `reason` is true of `host` in this pass; `Err` says why not.
fn holds(site: &Site, plan: &Plan, host: &Host, reason: &SkipReason) -> Result<(), String> {
    let firmware = site.firmware(host);
    let now = site.now_ms;
    let ok = match reason {
        SkipReason::NotExplored => firmware == FirmwareStatus::NotExplored,
        SkipReason::ExploreFailed { .. } => matches!(firmware, FirmwareStatus::ExploreFailed { .. }),
        SkipReason::NoCatalogEntry { vendor, model } => {
            host.model.is_none() && *vendor == host.vendor_name && *model == host.model_name
        }
        SkipReason::NoInventoryMatch { unmatched } => match &firmware {
            FirmwareStatus::Drifted { differing, unmatched: u, .. } => differing.is_empty() && u == unmatched,
            _ => false,
        },
        // Nothing it reports differs and nothing is unmatched, and it names exactly the
        // components whose version the host does not report, at their defaults.
        SkipReason::VersionNotReported { not_reported } => {
            let named: Vec<_> = not_reported.iter().map(|n| n.component).collect();
            let desired_ok = not_reported.iter().all(|n| {
                let m = host.model.map(|m| &site.catalog[m]);
                m.and_then(|m| m.defaults.get(&n.component)) == Some(&n.desired) && !n.members.is_empty()
            });
            let unmatched =
                host.missing.is_some_and(|c| host.model.is_some_and(|m| site.catalog[m].defaults.contains_key(&c)));
            reported_drift(site, host).is_empty() && !unmatched && named == unreported(site, host) && desired_ok
        }
        SkipReason::AutoUpdateOffSite => {
            host.auto_update.is_none()
                && !site.policy.host_disable_autoupdate.contains(&host.id)
                && !site.policy.autoupdate
        }
        SkipReason::AutoUpdateOffHost => host.auto_update == Some(false),
        SkipReason::LegacyDisableList => {
            host.auto_update.is_none() && site.policy.host_disable_autoupdate.contains(&host.id)
        }
        SkipReason::AssignedManualTagging => site.policy.instance_updates_manual_tagging && Site::is_assigned(host),
        SkipReason::AlreadyRequested => host.request.is_some(),
        SkipReason::Busy { state } => {
            host.request.is_none()
                && *state == host.state
                && matches!(host.state, HostState::HostReprovision | HostState::Maintenance)
        }
        SkipReason::WindowClosed { window } => {
            explicit(site, host) && *window == host.window && !window.is_some_and(|w| w.contains(now))
        }
        SkipReason::CeilingZero { .. } => expected_ceiling(site) == 0,
        SkipReason::CeilingReached { limit, in_flight } => {
            let expected = expected_in_flight(site) + count(plan.start.len());
            *limit == expected_ceiling(site) && *in_flight == expected && expected >= *limit
        }
        SkipReason::RepairCapReached { in_repair, cap } => {
            site.policy.max_hosts_in_repair == Some(*cap)
                && *in_repair == expected_in_repair(site)
                && *in_repair >= *cap
                && *in_repair > 0
        }
        SkipReason::LabelCapReached { key, value, limit, in_flight } => {
            let load = label_load(site, plan);
            let (before, starts) = load.get(&(key.clone(), value.clone())).copied().unwrap_or((0, 0));
            host.labels.get(key) == Some(value)
                && site.policy.label_caps.get(key) == Some(limit)
                && *in_flight >= *limit
                && *in_flight == before + starts
        }
        SkipReason::TargetPaused { target, failed_hosts, attempted_hosts } => {
            let rows: Vec<_> = site.rows_of(target).collect();
            site.targets(host).contains(target)
                && (budget_spent(site, target) || wave_share_exceeded(site, target))
                && *attempted_hosts == count(rows.len())
                && *failed_hosts == count(rows.iter().filter(|(_, r)| r.failed_at_ms.is_some()).count())
        }
        SkipReason::WaveFull { target, allowed, .. } => {
            let facts = wave_facts(site, target);
            let started = facts.started_count() + starts_on(site, plan, target);
            let status = plan.waves.iter().find(|w| &w.target == target);
            site.targets(host).contains(target)
                && status.is_some_and(|w| w.allowed == *allowed && w.next != hostfw_model::gates::NextWave::None)
                && started >= *allowed
        }
        SkipReason::WindowTooShort { window, remaining_ms, estimate, .. } => {
            explicit(site, host)
                && Some(*window) == host.window
                && window.contains(now)
                && *remaining_ms == window.end_ms - now
                && likely_duration(site, host) == Some(estimate.p90_ms)
                && estimate.p90_ms > *remaining_ms
        }
        SkipReason::ApprovalSkipped { until_ms } => {
            *until_ms > now && site.holds.iter().any(|h| h.machine_id == host.id && h.until_ms == *until_ms)
        }
        SkipReason::Frozen { id, scope, .. } => {
            site.brakes.freezes.iter().any(|f| f.id == *id && f.scope == *scope && covers(site, f, host))
        }
        SkipReason::TargetPausedByOperator(p) => {
            site.targets(host).contains(&p.target) && site.brakes.pauses.iter().any(|x| x.target == p.target)
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{}: the reason {reason:?} is not true (firmware {firmware:?})", host.id))
    }
}

impl Invariant for ReasonsHold {
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        let mut told: BTreeMap<&str, usize> = BTreeMap::new();
        for id in plan.start.iter().chain(plan.skipped.iter().map(|s| &s.machine_id)) {
            *told.entry(id.as_str()).or_default() += 1;
        }
        for h in &site.hosts {
            let compliant = site.firmware(h) == FirmwareStatus::Compliant;
            match (compliant, told.get(h.id.as_str()).copied().unwrap_or(0)) {
                (true, 0) | (false, 1) => {}
                (true, n) => return Err(format!("{} is compliant but started or skipped {n} times", h.id)),
                (false, n) => return Err(format!("{} is not compliant and started or skipped {n} times", h.id)),
            }
        }
        if told.len() != plan.start.len() + plan.skipped.len() {
            return Err("the plan names a host twice, or one the site does not have".into());
        }
        for s in &plan.skipped {
            let Some(h) = site.host(&s.machine_id) else { return Err(format!("{} is not a host", s.machine_id)) };
            holds(site, plan, h, &s.reason)?;
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("reasons")))]

    /// `gates::pass` (`Plan::skipped`): "Every host neither compliant nor started, in input order,
    /// with its first failing gate", each reason "one operator line naming the key or command
    /// that changes it" (`gates::reason`), so it must be there once and be true; checklist S13
    /// ("hostfw says so") and S54 (an unmatched host is reported, not churned).
    #[test]
    fn every_drifted_host_not_started_has_exactly_one_true_reason(scenario in scenario(Focus::Reasons)) {
        evolve(&scenario, &mut ReasonsHold)?;
    }
}
