//! Host selection over evolving sites (seed "Scheduling gates": "Host state", "Existing work",
//! "Automatic update policy"; checklist S6–S8, S15, S16; `gates::approval`).
//!
//! Owns one property: what a pass starts is selectable, in the seed's order. A started host has
//! no request (S8: never selected again while its request exists, even the pass after the one
//! that gave it its request), is not updating or in maintenance (S9), is drifted with something
//! installable, has automatic updates on (S6, S15), is unassigned when
//! `instance_updates_manual_tagging` is on (S7), is not held after a skipped approval; each host
//! starts once; unassigned hosts come before assigned ones (S7: "Unassigned hosts are considered
//! first"), so no unassigned host waits for a slot an assigned host took.

use std::collections::BTreeSet;

use hostfw_model::{FirmwareStatus, HostState, PassInput, Plan, SkipReason};
use proptest::prelude::*;

use super::site_gen::{scenario, Focus, Host, Site};
use super::{config, evolve, regressions, started, Invariant};

/// Automatic updates are on for `host` (S6, S15): its override decides alone; without one, the
/// legacy list disables it, else the site default applies.
pub fn auto_update_on(site: &Site, host: &Host) -> bool {
    match host.auto_update {
        Some(on) => on,
        None => !site.policy.host_disable_autoupdate.contains(&host.id) && site.policy.autoupdate,
    }
}

struct SelectionHolds;

impl Invariant for SelectionHolds {
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        let mut assigned_seen = false;
        for id in &plan.start {
            let Some(h) = site.host(id) else { return Err(format!("{id} started but is not a host of the site")) };
            if !seen.insert(id) {
                return Err(format!("{id} started twice in one pass"));
            }
            if h.request.is_some() {
                return Err(format!("{id} started again while its request exists"));
            }
            if !matches!(h.state, HostState::Ready | HostState::Assigned) {
                return Err(format!("{id} started in {}", h.state));
            }
            let installable =
                matches!(site.firmware(h), FirmwareStatus::Drifted { ref differing, .. } if !differing.is_empty());
            if !installable {
                return Err(format!("{id} started with nothing installable: {:?}", site.firmware(h)));
            }
            if !auto_update_on(site, h) {
                return Err(format!("{id} started with automatic updates off"));
            }
            let assigned = Site::is_assigned(h);
            if assigned && site.policy.instance_updates_manual_tagging {
                return Err(format!("{id} is assigned and started under instance_updates_manual_tagging"));
            }
            if site.holds.iter().any(|x| x.machine_id == *id && x.until_ms > site.now_ms) {
                return Err(format!("{id} started while held after a skipped approval"));
            }
            if assigned {
                assigned_seen = true;
            } else if assigned_seen {
                return Err(format!("unassigned {id} started after an assigned host: {:?}", plan.start));
            }
        }
        if started(site, plan).any(Site::is_assigned) {
            let waiting = plan.skipped.iter().find(|s| {
                matches!(s.reason, SkipReason::CeilingReached { .. })
                    && site.host(&s.machine_id).is_some_and(|h| !Site::is_assigned(h))
            });
            if let Some(s) = waiting {
                return Err(format!("unassigned {} waits for a slot while an assigned host started", s.machine_id));
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("selection")))]

    /// Seed "Scheduling gates": "A host with an existing reprovisioning request is not selected
    /// again" (S8), "Unassigned hosts are considered first" (S7), the per-machine policy and the
    /// legacy list (S6, S15), manual tagging (S7), and updating or maintenance hosts are not
    /// selected (S9), while the site's requests come and go.
    #[test]
    fn unassigned_first_and_a_host_with_a_request_is_never_selected_again(scenario in scenario(Focus::Selection)) {
        evolve(&scenario, &mut SelectionHolds)?;
    }
}
