//! One Machine Update Manager pass over the fleet: derive fleet health and the ceiling, count the
//! work already in flight (S9), run each host through the gates, order the candidates
//! (unassigned first, S7) and start as many as the free slots and the failure-domain caps allow
//! (S11–S13, `gates::label_caps`). A host that would install a target whose error budget is
//! spent waits (`gates::budget`), and so does one whose target's open canary wave is full
//! (`gates::waves`; hosts labelled `canary=true` go first). A host inside its explicit window
//! whose update would likely overrun it waits too (`gates::window_fit`), and so does a host
//! whose tenant let the last request's approval deadline pass under `skip` (`gates::approval`).
//! The operator's brakes come first among the rollout gates (`gates::freeze`): a host a freeze
//! covers, or one that would install a target an operator paused, is not started.
//!
//! Owns the whole-fleet part of scheduling and the `Plan` it returns. It must not perform the
//! starts, read a store or a clock (`now_ms` comes in), nor restate any per-host gate (see
//! `gates::host_gates`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::approval::{hold_gate, overdue_approvals, ApprovalFacts, OverdueApproval};
use super::budget::{paused_targets, PausedTarget, Target, TargetRecord};
use super::ceiling::{ceiling, Ceiling, FleetHealth};
use super::freeze::{covering, Freeze, OperatorPause};
use super::host_gates::{check, Verdict};
use super::host_view::HostView;
use super::label_caps::LabelLoad;
use super::policy::SchedulingPolicy;
use super::reason::{SkipReason, Skipped};
use super::waves::{is_canary, wave_statuses, NextWave, WaveStatus};
use super::window_fit::{fit_gate, UpdateDurations};

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
    /// The durations of past update runs per vendor, model and component set (window fit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update_durations: Vec<UpdateDurations>,
    /// Unstarted requests of assigned hosts waiting for approval, and hosts held after their
    /// approval deadline passed under the `skip` policy.
    #[serde(default, skip_serializing_if = "ApprovalFacts::is_empty")]
    pub approvals: ApprovalFacts,
    /// The operator's freezes and manual target pauses in force.
    #[serde(default, skip_serializing_if = "Brakes::is_empty")]
    pub brakes: Brakes,
}

/// The operator's brakes as the site database records them (`hostfw freeze`,
/// `hostfw budget pause`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Brakes {
    /// Freezes in force, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub freezes: Vec<Freeze>,
    /// Targets paused by an operator, in target order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pauses: Vec<OperatorPause>,
}

impl Brakes {
    pub fn is_empty(&self) -> bool {
        self.freezes.is_empty() && self.pauses.is_empty()
    }
}

/// What one pass decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Plan {
    /// `total` = all hosts, `unhealthy` = hosts marked unhealthy.
    pub fleet: FleetHealth,
    pub ceiling: Ceiling,
    /// Hosts with a request or updating / in maintenance, drifted or not (S9), except those in
    /// repair.
    pub in_flight: u32,
    /// Hosts in repair (`HostView::in_repair`), set apart from the ceiling, in input order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_repair: Vec<String>,
    /// `machine_updater.max_hosts_in_repair` (none: repair hosts count as in flight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_cap: Option<u32>,
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
    /// Targets whose error budget is spent, or whose canary wave ended with too many failures,
    /// with the failed hosts and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paused: Vec<PausedTarget>,
    /// Each rollout target's canary wave (empty when waves are off), before this pass's starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waves: Vec<WaveStatus>,
    /// The earliest time a target's next wave opens (soak over): when the manager should run
    /// again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_wave_open_ms: Option<i64>,
    /// Assigned hosts still waiting for approval after their deadline
    /// (`machine_updater.approval_deadline`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approval_overdue: Vec<OverdueApproval>,
    /// The freezes in force and the targets paused by an operator (who, why, scope).
    #[serde(default, skip_serializing_if = "Brakes::is_empty")]
    pub brakes: Brakes,
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

    /// The hosts held by a freeze (`SkipReason::Frozen`), in plan order.
    pub fn held_by_freeze(&self) -> impl Iterator<Item = &str> + '_ {
        self.skipped.iter().filter(|s| matches!(s.reason, SkipReason::Frozen { .. })).map(|s| s.machine_id.as_str())
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
    // Hosts in repair are set apart from the ceiling under their own cap; with no cap they hold
    // update slots like any in-flight work.
    let repair_cap = input.policy.max_hosts_in_repair;
    let in_repair: Vec<String> = match repair_cap {
        Some(_) => hosts.iter().filter(|h| h.in_repair()).map(|h| h.machine_id.clone()).collect(),
        None => Vec::new(),
    };
    // Cap 0: any host in repair stops new starts (none in repair stops nothing).
    let repair_full = repair_cap.filter(|&cap| !in_repair.is_empty() && count_len(in_repair.len()) >= cap);
    let in_flight = match repair_cap {
        Some(_) => count(hosts, HostView::holds_update_slot),
        None => count(hosts, HostView::is_in_flight),
    };
    let available = if repair_full.is_some() { 0 } else { ceiling.limit.saturating_sub(in_flight) };

    let budget = &input.policy.error_budget;
    let waves = wave_statuses(&input.policy.waves, budget, hosts, &input.targets, input.now_ms);
    let mut paused = paused_targets(budget, &input.targets);
    held_waves(&waves, &input.targets, &mut paused);
    let holds = input.approvals.holds_in_force(input.now_ms);
    let verdicts: Vec<Verdict> = hosts
        .iter()
        .map(|h| {
            let verdict = brakes_gate(check(h, &input.policy, input.now_ms), h, &input.brakes);
            let verdict = approval_gate(verdict, h, &holds);
            let verdict = budget_gate(verdict, h, &paused);
            window_fit_gate(verdict, h, input)
        })
        .collect();
    let mut candidates: Vec<usize> = (0..hosts.len()).filter(|&i| verdicts[i] == Verdict::Candidate).collect();
    // Stable: each group keeps input order; canaries first among the unassigned and among the
    // assigned hosts.
    candidates.sort_by_key(|&i| (hosts[i].is_assigned(), !is_canary(&hosts[i])));
    // In selection order: a host whose failure domain is full, or whose target's open wave is
    // full, waits (and leaves its slot to the next candidate); the others take the free slots.
    let mut load =
        LabelLoad::new(&input.policy.label_caps, hosts.iter().filter(|h| h.is_in_flight()).map(|h| &h.labels));
    let mut wave_load = WaveLoad::new(&waves, input.policy.waves.soak_ms);
    let mut chosen: Vec<usize> = Vec::new();
    let mut capped: Vec<(usize, SkipReason)> = Vec::new();
    for &i in &candidates {
        if let Some(reason) = load.full(&hosts[i].labels).or_else(|| wave_load.full(&hosts[i])) {
            capped.push((i, reason));
        } else if chosen.len() < available as usize {
            load.add(&hosts[i].labels);
            wave_load.add(&hosts[i]);
            chosen.push(i);
        }
    }
    let start: Vec<String> = chosen.iter().map(|&i| hosts[i].machine_id.clone()).collect();

    let over_capacity = if let Some(cap) = repair_full {
        SkipReason::RepairCapReached { in_repair: count_len(in_repair.len()), cap }
    } else if ceiling.limit == 0 {
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
        let opens = match &reason {
            SkipReason::WindowClosed { window: Some(w) } => Some(w.start_ms),
            SkipReason::ApprovalSkipped { until_ms } => Some(*until_ms),
            _ => None,
        };
        if let Some(at) = opens.filter(|&at| at > input.now_ms) {
            next_window_open_ms = Some(next_window_open_ms.map_or(at, |n| n.min(at)));
        }
        skipped.push(Skipped { machine_id: host.machine_id.clone(), reason });
    }

    Plan {
        fleet,
        compliant: count(hosts, |h| h.firmware.is_compliant()),
        ceiling,
        in_flight,
        in_repair,
        repair_cap,
        available,
        start,
        skipped,
        next_window_open_ms,
        paused,
        next_wave_open_ms: waves
            .iter()
            .filter_map(|w| if let NextWave::At { at_ms } = w.next { Some(at_ms) } else { None })
            .min(),
        waves,
        approval_overdue: overdue_approvals(&input.policy.approval_deadline, &input.approvals, input.now_ms),
        brakes: input.brakes.clone(),
    }
}

/// A target whose open canary wave ended with too many failures is paused, with the same
/// evidence and resume as a spent budget (unless the budget itself already paused it).
fn held_waves(waves: &[WaveStatus], records: &[TargetRecord], paused: &mut Vec<PausedTarget>) {
    for w in waves {
        let NextWave::Held { failed, attempted, failed_percent } = w.next else { continue };
        if paused.iter().any(|p| p.target == w.target) {
            continue;
        }
        let failures = records.iter().find(|r| r.target == w.target).map(|r| r.failures.clone()).unwrap_or_default();
        paused.push(PausedTarget {
            target: w.target.clone(),
            attempted_hosts: attempted,
            rule: format!(
                "canary wave {} of {} ended with {failed} of {attempted} hosts failed, more than \
                 machine_updater.error_budget_failed_percent = {failed_percent} %, so the next wave does not open",
                w.wave, w.waves
            ),
            failures,
            by_wave: true,
        });
    }
}

/// The hosts each target's open wave still lets start in this pass.
struct WaveLoad<'a> {
    waves: HashMap<&'a Target, (&'a WaveStatus, u32)>,
    soak_ms: i64,
}

impl<'a> WaveLoad<'a> {
    fn new(waves: &'a [WaveStatus], soak_ms: i64) -> Self {
        WaveLoad { waves: waves.iter().map(|w| (&w.target, (w, 0))).collect(), soak_ms }
    }

    /// The first of `host`'s targets whose open wave has no room left.
    fn full(&self, host: &HostView) -> Option<SkipReason> {
        host.targets.iter().find_map(|t| {
            let (w, started_now) = self.waves.get(t)?;
            (*started_now >= w.room()).then(|| SkipReason::WaveFull {
                target: t.clone(),
                wave: w.wave,
                waves: w.waves,
                allowed: w.allowed,
                next: w.after_pass(*started_now, self.soak_ms),
            })
        })
    }

    fn add(&mut self, host: &HostView) {
        for t in &host.targets {
            if let Some((_, n)) = self.waves.get_mut(t) {
                *n += 1;
            }
        }
    }
}

/// A candidate a freeze covers waits (`SkipReason::Frozen`), and so does one that would install
/// a target an operator paused (`SkipReason::TargetPausedByOperator`). Only candidates: a host
/// whose request already runs is not started, so a freeze does not touch it here (the host
/// workflow holds it before its next component).
fn brakes_gate(verdict: Verdict, host: &HostView, brakes: &Brakes) -> Verdict {
    if verdict != Verdict::Candidate {
        return verdict;
    }
    if let Some(f) = frozen_by(host, &brakes.freezes) {
        return Verdict::Skip(SkipReason::Frozen {
            id: f.id,
            by: f.by.clone(),
            reason: f.reason.clone(),
            scope: f.scope.clone(),
        });
    }
    match brakes.pauses.iter().find(|p| host.targets.contains(&p.target)) {
        Some(p) => Verdict::Skip(SkipReason::TargetPausedByOperator(Box::new(p.clone()))),
        None => verdict,
    }
}

/// The first freeze covering `host`: its catalog vendor and model are its targets' (a host to
/// start has at least one), its labels its own.
pub fn frozen_by<'f>(host: &HostView, freezes: &'f [Freeze]) -> Option<&'f Freeze> {
    let named = host.targets.first();
    covering(freezes, named.map(|t| t.vendor.as_str()), named.map(|t| t.model.as_str()), &host.labels)
}

/// A candidate held after its approval deadline passed under `skip` waits
/// (`SkipReason::ApprovalSkipped`).
fn approval_gate(verdict: Verdict, host: &HostView, holds: &HashMap<&str, i64>) -> Verdict {
    if verdict != Verdict::Candidate {
        return verdict;
    }
    match hold_gate(host, holds) {
        Ok(()) => verdict,
        Err(reason) => Verdict::Skip(reason),
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

/// A candidate whose update would likely overrun its explicit window waits
/// (`SkipReason::WindowTooShort`).
fn window_fit_gate(verdict: Verdict, host: &HostView, input: &PassInput) -> Verdict {
    if verdict != Verdict::Candidate {
        return verdict;
    }
    match fit_gate(host, &input.update_durations, input.policy.window_fit_min_samples, input.now_ms) {
        Ok(()) => verdict,
        Err(reason) => Verdict::Skip(reason),
    }
}

fn count(hosts: &[HostView], pred: impl Fn(&HostView) -> bool) -> u32 {
    count_len(hosts.iter().filter(|h| pred(h)).count())
}

fn count_len(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
