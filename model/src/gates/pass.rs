//! One Machine Update Manager pass over the fleet: derive fleet health and the ceiling, count the
//! work already in flight (S9), run each host through the gates, order the candidates
//! (unassigned first, S7) and start as many as the free slots and the failure-domain caps allow
//! (S11–S13, `gates::label_caps`). A host that would install a target whose error budget is
//! spent waits (`gates::budget`).
//!
//! Owns the whole-fleet part of scheduling and the `Plan` it returns. It must not perform the
//! starts, read a store or a clock (`now_ms` comes in), nor restate any per-host gate (see
//! `gates::host_gates`).

use serde::{Deserialize, Serialize};

use super::budget::{paused_targets, PausedTarget, TargetRecord};
use super::ceiling::{ceiling, Ceiling, FleetHealth};
use super::host_gates::{check, Verdict};
use super::host_view::HostView;
use super::label_caps::LabelLoad;
use super::policy::SchedulingPolicy;
use super::reason::{SkipReason, Skipped};

/// Everything one pass decides on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassInput {
    /// Unix milliseconds (tests the explicit-start windows).
    pub now_ms: i64,
    pub policy: SchedulingPolicy,
    /// Every managed host (all of them count in `FleetHealth`).
    pub hosts: Vec<HostView>,
    /// What the site database records per rollout target since its last resume (the error
    /// budget's evidence).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetRecord>,
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// `total` = all hosts, `unhealthy` = hosts marked unhealthy.
    pub fleet: FleetHealth,
    pub ceiling: Ceiling,
    /// Hosts with a request or updating / in maintenance, drifted or not (S9).
    pub in_flight: u32,
    /// `ceiling.limit` minus `in_flight`, at least 0.
    pub available: u32,
    /// Machine ids to start now, in selection order (unassigned first, then input order).
    pub start: Vec<String>,
    /// Every host neither compliant nor started, in input order, with its first failing gate.
    pub skipped: Vec<Skipped>,
    pub compliant: u32,
    /// Earliest window start after `now_ms` among hosts skipped only because their window is
    /// closed: when the manager should run again.
    pub next_window_open_ms: Option<i64>,
    /// Targets whose error budget is spent, with the failed hosts and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paused: Vec<PausedTarget>,
}

impl Plan {
    /// The hosts the seed's drift query counts as needing firmware work (the pending gauge, the
    /// compliance view): started by this pass, or skipped only because the ceiling (or a
    /// failure-domain cap) is full, the ceiling is 0, or their update window is closed (`SkipReason::held_only_for_capacity_or_window`). In plan order.
    pub fn pending(&self) -> impl Iterator<Item = &str> + '_ {
        let held =
            self.skipped.iter().filter(|s| s.reason.held_only_for_capacity_or_window()).map(|s| s.machine_id.as_str());
        self.start.iter().map(String::as_str).chain(held)
    }

    /// The hosts held because a target they would install is paused by its error budget
    /// (`SkipReason::TargetPaused`), in plan order.
    pub fn held_by_pause(&self) -> impl Iterator<Item = &str> + '_ {
        self.skipped
            .iter()
            .filter(|s| matches!(s.reason, SkipReason::TargetPaused { .. }))
            .map(|s| s.machine_id.as_str())
    }
}

/// Runs one scheduling pass.
pub fn plan(input: &PassInput) -> Plan {
    let hosts = &input.hosts;
    let fleet = FleetHealth { total: count(hosts, |_| true), unhealthy: count(hosts, |h| h.unhealthy) };
    let ceiling = ceiling(input.policy.limits, fleet);
    let in_flight = count(hosts, HostView::is_in_flight);
    let available = ceiling.limit.saturating_sub(in_flight);

    let paused = paused_targets(&input.policy.error_budget, &input.targets);
    let verdicts: Vec<Verdict> =
        hosts.iter().map(|h| budget_gate(check(h, &input.policy, input.now_ms), h, &paused)).collect();
    let mut candidates: Vec<usize> = (0..hosts.len()).filter(|&i| verdicts[i] == Verdict::Candidate).collect();
    // Stable: each group keeps input order.
    candidates.sort_by_key(|&i| hosts[i].is_assigned());
    // In selection order: a host whose failure domain is full waits (and leaves its slot to the
    // next candidate); the others take the free slots.
    let mut load =
        LabelLoad::new(&input.policy.label_caps, hosts.iter().filter(|h| h.is_in_flight()).map(|h| &h.labels));
    let mut chosen: Vec<usize> = Vec::new();
    let mut capped: Vec<(usize, SkipReason)> = Vec::new();
    for &i in &candidates {
        if let Some(reason) = load.full(&hosts[i].labels) {
            capped.push((i, reason));
        } else if chosen.len() < available as usize {
            load.add(&hosts[i].labels);
            chosen.push(i);
        }
    }
    let start: Vec<String> = chosen.iter().map(|&i| hosts[i].machine_id.clone()).collect();

    let over_capacity = if ceiling.limit == 0 {
        SkipReason::CeilingZero { how: ceiling.how.clone() }
    } else {
        SkipReason::CeilingReached { limit: ceiling.limit, in_flight: in_flight.saturating_add(count_len(start.len())) }
    };
    let mut skipped = Vec::new();
    let mut next_window_open_ms: Option<i64> = None;
    for (i, (host, verdict)) in hosts.iter().zip(&verdicts).enumerate() {
        let reason = match verdict {
            Verdict::Compliant => continue,
            Verdict::Candidate if chosen.contains(&i) => continue,
            Verdict::Candidate => {
                capped.iter().find(|(c, _)| *c == i).map_or_else(|| over_capacity.clone(), |(_, r)| r.clone())
            }
            Verdict::Skip(reason) => reason.clone(),
        };
        if let SkipReason::WindowClosed { window: Some(w) } = &reason {
            if w.start_ms > input.now_ms {
                let next = next_window_open_ms.map_or(w.start_ms, |n| n.min(w.start_ms));
                next_window_open_ms = Some(next);
            }
        }
        skipped.push(Skipped { machine_id: host.machine_id.clone(), reason });
    }

    Plan {
        fleet,
        compliant: count(hosts, |h| h.firmware.is_compliant()),
        ceiling,
        in_flight,
        available,
        start,
        skipped,
        next_window_open_ms,
        paused,
    }
}

/// A candidate that would install a paused target waits (`SkipReason::TargetPaused`).
fn budget_gate(verdict: Verdict, host: &HostView, paused: &[PausedTarget]) -> Verdict {
    if verdict != Verdict::Candidate {
        return verdict;
    }
    match paused.iter().find(|p| host.targets.contains(&p.target)) {
        Some(p) => Verdict::Skip(SkipReason::TargetPaused {
            target: p.target.clone(),
            failed_hosts: count_len(p.failures.len()),
            attempted_hosts: p.attempted_hosts,
        }),
        None => verdict,
    }
}

fn count(hosts: &[HostView], pred: impl Fn(&HostView) -> bool) -> u32 {
    count_len(hosts.iter().filter(|h| pred(h)).count())
}

fn count_len(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
