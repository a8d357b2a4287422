//! The brakes series of a scrape (issue 27):
//! - `hostfw_freezes_active{scope}`: the freezes in force per scope (`site`, `model=...`,
//!   `label=...`); `scope="site"` is always written (0 when the site is not frozen), a selector's
//!   series only while a freeze on it is in force;
//! - `hostfw_targets_paused_by_operator`: the rollout targets paused by hand (`budget pause`);
//! - `hostfw_hosts_in_repair` and `hostfw_max_hosts_in_repair`: hosts set apart for hands-on
//!   repair (retries exhausted, or aborted to maintenance) and their cap
//!   (`machine_updater.max_hosts_in_repair`; the cap series is absent when there is none).
//!
//! Owns these series' names, help texts and labels (freeze scopes only, never a machine id). It
//! must stay pure and must not decide what a freeze covers (`gates::freeze`).

use std::collections::BTreeMap;
use std::fmt::Write;

use hostfw_model::gates::{Brakes, FreezeScope};

use super::compliance::escape;
use super::render::header;

pub const FREEZES_ACTIVE: &str = "hostfw_freezes_active";
pub const TARGETS_PAUSED_BY_OPERATOR: &str = "hostfw_targets_paused_by_operator";
pub const HOSTS_IN_REPAIR: &str = "hostfw_hosts_in_repair";
pub const MAX_HOSTS_IN_REPAIR: &str = "hostfw_max_hosts_in_repair";

/// Hosts in repair now, and the cap on them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepairSeries {
    pub in_repair: usize,
    pub cap: Option<u32>,
}

/// Append the repair series to `out`.
pub fn write_repair(out: &mut String, r: RepairSeries) {
    let help =
        "Hosts set apart for hands-on repair (retries exhausted, or aborted to maintenance); they hold no update slot.";
    header(out, HOSTS_IN_REPAIR, "gauge", help);
    let _ = writeln!(out, "{HOSTS_IN_REPAIR} {}", r.in_repair);
    if let Some(cap) = r.cap {
        let help = "machine_updater.max_hosts_in_repair: at this many hosts in repair, no new host starts.";
        header(out, MAX_HOSTS_IN_REPAIR, "gauge", help);
        let _ = writeln!(out, "{MAX_HOSTS_IN_REPAIR} {cap}");
    }
}

/// Append the brakes series of `brakes` (the site view's) to `out`.
pub fn write(out: &mut String, brakes: &Brakes) {
    let mut by_scope: BTreeMap<String, usize> = BTreeMap::from([(FreezeScope::Site.key(), 0)]);
    for f in &brakes.freezes {
        *by_scope.entry(f.scope.key()).or_default() += 1;
    }
    header(out, FREEZES_ACTIVE, "gauge", "Freezes in force per scope (hostfw freeze): no new host starts in scope.");
    for (scope, n) in &by_scope {
        let _ = writeln!(out, "{FREEZES_ACTIVE}{{scope=\"{}\"}} {n}", escape(scope));
    }
    let help = "Rollout targets paused by an operator (hostfw budget pause) until hostfw budget resume.";
    header(out, TARGETS_PAUSED_BY_OPERATOR, "gauge", help);
    let _ = writeln!(out, "{TARGETS_PAUSED_BY_OPERATOR} {}", brakes.pauses.len());
}

#[cfg(test)]
mod tests {
    use hostfw_model::gates::Freeze;

    use super::*;

    fn freeze(id: i64, selector: Option<&str>) -> Freeze {
        Freeze {
            id,
            scope: selector.map_or(FreezeScope::Site, |s| FreezeScope::parse(s).unwrap()),
            reason: "r".into(),
            drain: false,
            by: "a".into(),
            at_ms: 0,
        }
    }

    #[test]
    fn freezes_are_counted_per_scope_and_the_site_series_is_always_there() {
        let mut out = String::new();
        write(&mut out, &Brakes::default());
        assert!(out.contains("# TYPE hostfw_freezes_active gauge\nhostfw_freezes_active{scope=\"site\"} 0\n"), "{out}");
        assert!(out.contains("\nhostfw_targets_paused_by_operator 0\n"), "{out}");
        let brakes = Brakes {
            freezes: vec![freeze(1, None), freeze(2, Some("label=rack=r1")), freeze(3, Some("label=rack=r1"))],
            pauses: vec![],
        };
        let mut out = String::new();
        write(&mut out, &brakes);
        assert!(out.contains("hostfw_freezes_active{scope=\"site\"} 1\n"), "{out}");
        assert!(out.contains("hostfw_freezes_active{scope=\"label=rack=r1\"} 2\n"), "{out}");
    }

    #[test]
    fn hosts_in_repair_are_written_with_their_cap_when_there_is_one() {
        let mut out = String::new();
        write_repair(&mut out, RepairSeries { in_repair: 3, cap: Some(10) });
        assert!(out.contains("# TYPE hostfw_hosts_in_repair gauge\nhostfw_hosts_in_repair 3\n"), "{out}");
        assert!(out.contains("\nhostfw_max_hosts_in_repair 10\n"), "{out}");
        let mut out = String::new();
        write_repair(&mut out, RepairSeries { in_repair: 0, cap: None });
        assert!(out.contains("\nhostfw_hosts_in_repair 0\n") && !out.contains("max_hosts_in_repair"), "{out}");
    }
}
