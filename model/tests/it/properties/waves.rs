//! Canary waves over evolving sites (`gates::waves`, issue "safe rollouts" piece 2).
//!
//! Owns one property and its oracle: an independent reading of the rules in `gates/waves.rs`'s
//! module doc, kept per target across the passes of a scenario from the site's own facts (its
//! hosts, its `target_hosts` rows), never from the plan. Per target and per pass:
//! - its hosts: those that still have to take it and those on record since its last resume, as
//!   a set; their count is frozen when its first wave starts and only grows after; what a pass
//!   records (that count, the wave reached) is in force once its wave marks are written, merged
//!   like the record (only growing), not before (a pass racing it in between does not see it);
//! - started: on record, or with a request / updating while it would install it; running: a
//!   started host whose run is live (a request whose retry budget is not spent) and that is at
//!   this target in that run (an attempt since the run began, or still to take it);
//! - cumulative wave sizes from the count; the open wave starts from the one reached and opens
//!   the next only when it is full (or nobody is left to start in it), none of its hosts runs,
//!   the hosts whose latest attempt failed are within the budget's share, and `canary_soak` has
//!   passed since the last attempt on record ended. A resume starts it all again.
//!
//! The property: a pass starts no more hosts of a target than its open wave has room for, and
//! the plan never reports a wave the oracle has not opened. So a wave never opens before the one
//! before it finished and soaked, whatever the host set does (hosts joining, failing
//! exploration, leaving the site, changing targets with the catalog).

use std::collections::{BTreeMap, BTreeSet};

use hostfw_model::gates::Target;
use hostfw_model::{HostState, PassInput, Plan};
use proptest::prelude::*;

use super::site_gen::{count, scenario, Focus, Site};
use super::{config, evolve, regressions, started, Invariant};

/// A target's wave facts at one pass, from the site.
#[derive(Debug, Clone)]
pub struct WaveFacts {
    /// Hosts that still have to take it.
    pub still: BTreeSet<String>,
    /// Hosts started on it since its last resume.
    pub started: BTreeSet<String>,
    /// Its hosts now: still to take it, or on record.
    pub hosts_now: u32,
    /// Still to take it and not started.
    pub unstarted: u32,
    pub running: u32,
    /// Hosts on record, and those whose latest attempt failed.
    pub attempted: u32,
    pub failed_last: u32,
    /// When the last attempt on record ended.
    pub last_end_ms: Option<i64>,
}

impl WaveFacts {
    /// The hosts started on it: each host once, finished ones that must take it again included
    /// (found by this property: `waves::a_host_that_finished_an_attempt_and_still_has_to_take_the_target_is_one_host`).
    pub fn started_count(&self) -> u32 {
        count(self.started.len())
    }
}

/// The facts of `target` in `site`.
pub fn wave_facts(site: &Site, target: &Target) -> WaveFacts {
    let still: BTreeSet<String> =
        site.hosts.iter().filter(|h| site.targets(h).contains(target)).map(|h| h.id.clone()).collect();
    let rows: Vec<_> = site.rows_of(target).collect();
    let on_record: BTreeSet<String> = rows.iter().map(|(m, _)| m.to_string()).collect();
    let updating =
        |id: &str| site.host(id).is_some_and(|h| h.request.is_some() || h.state == HostState::HostReprovision);
    let mut started = on_record.clone();
    started.extend(still.iter().filter(|id| updating(id)).cloned());
    let running = started
        .iter()
        .filter(|id| {
            let Some(h) = site.host(id) else { return false };
            let live = h.request.as_ref().is_some_and(|r| !r.exhausted);
            let since = site.run_started.get(id.as_str()).copied().unwrap_or(i64::MIN);
            let attempted_this_run = rows.iter().any(|(m, r)| *m == id.as_str() && r.attempted_at_ms >= since);
            live && (attempted_this_run || still.contains(*id))
        })
        .count();
    WaveFacts {
        hosts_now: count(still.union(&on_record).count()),
        unstarted: count(still.difference(&started).count()),
        still,
        started,
        running: count(running),
        attempted: count(rows.len()),
        failed_last: count(rows.iter().filter(|(_, r)| r.failed_last()).count()),
        last_end_ms: rows.iter().filter_map(|(_, r)| r.ended_ms()).max(),
    }
}

/// What the oracle keeps of one target between passes.
#[derive(Debug, Clone, Default)]
struct Kept {
    resumes: u32,
    /// The host count frozen when its first wave started (grown since).
    frozen: Option<u32>,
    /// The wave reached, from 0.
    wave: usize,
}

/// The oracle's verdict on one target at one pass.
#[derive(Debug, Clone)]
pub struct Open {
    /// The open wave, from 0.
    pub wave: usize,
    /// Hosts the open wave lets start in all (`None`: the last wave, no limit).
    pub allowed: Option<u32>,
    /// It ended over the budget's share: held.
    pub held: bool,
    pub hosts: u32,
}

/// The canary-wave oracle of one scenario.
#[derive(Debug, Default)]
pub struct WaveOracle {
    kept: BTreeMap<Target, Kept>,
}

impl WaveOracle {
    /// The open wave of `target` in this pass (before its starts), and what it lets start;
    /// `None` when waves are off or the target is done (nobody to take it, nobody running).
    pub fn open(&mut self, site: &Site, target: &Target, facts: &WaveFacts) -> Option<Open> {
        let policy = &site.policy.waves;
        if policy.waves.is_empty() || (facts.still.is_empty() && facts.running == 0) {
            return None;
        }
        let resumes = site.resumes.get(target).copied().unwrap_or(0);
        let kept = self.kept.entry(target.clone()).or_default();
        if kept.resumes != resumes {
            *kept = Kept { resumes, ..Kept::default() };
        }
        let hosts = kept.frozen.unwrap_or(0).max(facts.hosts_now);
        let mut caps: Vec<u32> = Vec::new();
        for w in &policy.waves {
            let previous = caps.last().copied().unwrap_or(0);
            caps.push(w.hosts_of(hosts).max(previous).min(hosts));
        }
        let s = facts.started_count();
        let unstarted = facts.unstarted;
        let budget = site.policy.error_budget;
        let exceeded = facts.failed_last > 0
            && (budget.failed_percent == 0
                || u64::from(facts.failed_last) * 100 > u64::from(budget.failed_percent) * u64::from(facts.attempted));
        let mut wave = kept.wave.min(caps.len() - 1);
        let mut held = false;
        let allowed = loop {
            if wave + 1 == caps.len() {
                break None;
            }
            if s < caps[wave] && unstarted > 0 {
                break Some(caps[wave]);
            }
            if caps[wave + 1] == caps[wave] {
                wave += 1;
                continue;
            }
            if facts.running > 0 {
                break Some(caps[wave]);
            }
            if exceeded {
                held = true;
                break Some(caps[wave]);
            }
            if facts.last_end_ms.is_some_and(|end| site.now_ms < end.saturating_add(policy.soak_ms)) {
                break Some(caps[wave]);
            }
            wave += 1;
        };
        Some(Open { wave, allowed: if held { Some(0) } else { allowed }, held, hosts })
    }

    /// The pass started `starts` hosts of `target`: its first wave has started once any host has,
    /// and the pass records the host count and the wave reached ([`WaveOracle::marked`] once its
    /// marks are written).
    pub fn passed(&self, target: &Target, facts: &WaveFacts, open: &Open, starts: u32) -> Option<Mark> {
        if facts.started.is_empty() && starts == 0 {
            return None;
        }
        let resumes = self.kept.get(target)?.resumes;
        Some(Mark { target: target.clone(), resumes, hosts: open.hosts, wave: open.wave })
    }

    /// A pass's marks are written: they take effect then, not when it read the site (a pass
    /// racing it in between sees none of them), and like the record they only grow (two passes'
    /// marks merge). A mark of a target resumed since its pass read the site is not the rules':
    /// a resume starts the waves again.
    pub fn marked(&mut self, marks: Vec<Mark>) {
        for m in marks {
            let Some(kept) = self.kept.get_mut(&m.target).filter(|k| k.resumes == m.resumes) else { continue };
            kept.frozen = Some(kept.frozen.unwrap_or(0).max(m.hosts));
            kept.wave = kept.wave.max(m.wave);
        }
    }
}

/// What a pass records of one target's waves (its wave mark, as the oracle sees it).
#[derive(Debug, Clone)]
pub struct Mark {
    target: Target,
    /// The target's resumes when the pass read the site.
    resumes: u32,
    hosts: u32,
    wave: usize,
}

/// How many of the pass's starts would install `target`.
pub fn starts_on(site: &Site, plan: &Plan, target: &Target) -> u32 {
    count(started(site, plan).filter(|h| site.targets(h).contains(target)).count())
}

#[derive(Default)]
pub(super) struct WavesHold {
    oracle: WaveOracle,
    /// The marks of the passes checked whose marks are not written yet, the latest last (a pass
    /// racing another is checked and writes its marks in between).
    pending: Vec<Vec<Mark>>,
}

impl Invariant for WavesHold {
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        let mut marks = Vec::new();
        for target in site.known_targets() {
            let facts = wave_facts(site, &target);
            let Some(open) = self.oracle.open(site, &target, &facts) else { continue };
            let starts = starts_on(site, plan, &target);
            let s = facts.started_count();
            if let Some(allowed) = open.allowed {
                // Hosts an operator started past the wave (`--ignore-rollout-gates`) are not the
                // pass's: with more started than allowed it may start none, never more.
                if s + starts > allowed.max(s) {
                    return Err(format!(
                        "{starts} hosts started on {target} with {s} started before, but its open wave {} of {:?} \
                         lets {allowed} start in all ({} hosts{}); facts: {facts:?}",
                        open.wave + 1,
                        site.policy.waves.waves,
                        open.hosts,
                        if open.held { ", held over the budget's share" } else { "" },
                    ));
                }
            }
            if let Some(w) = plan.waves.iter().find(|w| w.target == target) {
                if usize::try_from(w.wave).unwrap_or(usize::MAX) > open.wave + 1 {
                    return Err(format!(
                        "the plan opened wave {} of {target}, the rules only wave {}; facts: {facts:?}",
                        w.wave,
                        open.wave + 1
                    ));
                }
            }
            marks.extend(self.oracle.passed(&target, &facts, &open, starts));
        }
        self.pending.push(marks);
        Ok(())
    }

    fn marks_written(&mut self, stale: bool, written: bool) {
        // A stale racing pass writes the marks of the pass it read with, which writes them again.
        let marks = if stale { self.pending.last().cloned() } else { self.pending.pop() };
        // Marks refused by the gate fence are not on record.
        if let Some(marks) = marks.filter(|_| written) {
            self.oracle.marked(marks);
        }
    }
}

proptest! {
    #![proptest_config(config(regressions!("waves")))]

    /// `gates::waves`: each wave opens "only once every host of the one before it has finished,
    /// no more of them failed than the error budget's share allows, and `canary_soak` has passed
    /// since the last one finished", and "a host set that shrinks (BMCs failing exploration) never
    /// shrinks the waves": no pass starts more hosts of a target than its open wave allows.
    #[test]
    fn a_wave_never_opens_before_the_one_before_it_finished_and_soaked(scenario in scenario(Focus::Waves)) {
        evolve(&scenario, &mut WavesHold::default())?;
    }
}
