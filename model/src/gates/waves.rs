//! Canary waves (issue "safe rollouts", piece 2): a rollout target (a catalog model's component
//! at its desired version, `gates::budget::Target`) is released to its hosts in waves
//! (`[machine_updater] canary_waves`, by default one host, then 10 %, 50 % and all), each wave
//! opening only once every host of the one before it has finished, no more of them failed than
//! the error budget's share allows, and `canary_soak` has passed since the last one finished.
//!
//! Owns the wave sizes and their syntax, the wave a target is in, computed in every pass from
//! the site database's record of the target (`TargetRecord`: who attempted it, who is still at
//! it, who failed, when the last one finished, and its `WaveRecord`: the host count frozen when
//! its first wave started and the wave reached) and the hosts in the site view, and what the pass
//! must write back into that record ([`wave_marks`]; the manager pass's activity stores it), so a
//! wave survives any restart. It must do no I/O and read no clock (`now_ms` comes in), and must
//! not pick hosts (that is `gates::pass`, which puts hosts labelled `canary=true` first).
//!
//! The rules:
//! - A target's hosts are those that still have to take it (drifted on its component) and those
//!   on record as having begun it since its last resume (`hostfw budget resume` clears the
//!   record: the waves start again from the first, with the hosts counted afresh).
//! - Their count is frozen in the record when the target's first wave starts (the pass that
//!   starts its first host, or the first pass that sees one started). Later passes size the
//!   waves from the larger of the frozen count and the hosts now: a host set that shrinks (BMCs
//!   failing exploration) never shrinks the waves, and hosts that join later (a new host, one
//!   drifting later) grow the count, which is frozen again; they are updated in the wave
//!   reached and the ones after it, like any other host of the target.
//! - Wave sizes are cumulative: "1" lets one host start in all, "10%" lets 10 % of the target's
//!   hosts (rounded up, at least one) start in all. A wave no larger than the one before is
//!   passed through at once.
//! - The wave reached is recorded as waves open; a pass starts from it and opens each later wave
//!   only through the checks below, never because more hosts have started than a wave holds. A
//!   target with no wave on record (it started before waves were recorded, or only by direct
//!   requests) starts from the first wave.
//! - A host has started when it is on record or updating (a request, or `HostReprovision`; not
//!   maintenance) while it would install the target; it has finished when its attempt ended (the host workflow
//!   restored it, or the attempt failed) or its retry budget is spent.
//! - The next wave opens when the open one is full (or no host that still has to take the
//!   target is left to start in it), none of its hosts is still running, the
//!   hosts whose latest attempt failed are within the budget's share
//!   (`ErrorBudget::share_exceeded`; a host that recovered on a retry is not one of them), and
//!   `canary_soak` has passed since the last host finished. A wave that ended with too many
//!   failures holds the target: it is paused like a spent error budget, with the same resume.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::budget::{ErrorBudget, Target, TargetRecord};
use super::host_view::HostView;
use super::pass::{PassInput, Plan};
use crate::duration::format_duration;
use crate::time_text::rfc3339_utc;

/// The label that puts a host first in its target's waves: `canary=true`.
pub const CANARY_LABEL: (&str, &str) = ("canary", "true");

/// One entry of `canary_waves`: how many hosts the wave lets start in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum WaveSize {
    /// `"3"`: this many hosts.
    Hosts(u32),
    /// `"10%"`: this share of the target's hosts, rounded up (at least one host).
    Percent(u32),
}

impl WaveSize {
    /// How many of `hosts` hosts this wave lets start in all.
    pub fn hosts_of(self, hosts: u32) -> u32 {
        match self {
            WaveSize::Hosts(n) => n,
            WaveSize::Percent(p) => {
                let n = (u64::from(p) * u64::from(hosts)).div_ceil(100);
                u32::try_from(n).unwrap_or(u32::MAX).max(1)
            }
        }
    }
}

impl fmt::Display for WaveSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaveSize::Hosts(n) => write!(f, "{n}"),
            WaveSize::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl FromStr for WaveSize {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let bad = |why: &str| format!("wave {text:?}: {why} (write a host count like \"1\" or a share like \"10%\")");
        if let Some(p) = t.strip_suffix('%') {
            let p: u32 = p.trim().parse().map_err(|_| bad("not a whole percentage"))?;
            if !(1..=100).contains(&p) {
                return Err(bad("a share must be 1% to 100%"));
            }
            Ok(WaveSize::Percent(p))
        } else {
            let n: u32 = t.parse().map_err(|_| bad("not a whole number of hosts"))?;
            if n == 0 {
                return Err(bad("a wave of 0 hosts would never open the next"));
            }
            Ok(WaveSize::Hosts(n))
        }
    }
}

impl TryFrom<String> for WaveSize {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<WaveSize> for String {
    fn from(w: WaveSize) -> String {
        w.to_string()
    }
}

/// The default waves: one host, then 10 %, 50 % and all.
pub fn default_waves() -> Vec<WaveSize> {
    vec![WaveSize::Hosts(1), WaveSize::Percent(10), WaveSize::Percent(50), WaveSize::Percent(100)]
}

/// `canary_waves` is well formed: empty (waves off), or ending with "100%", with shares that
/// grow. Returns the sentence saying what is wrong.
pub fn check_waves(waves: &[WaveSize]) -> Result<(), String> {
    match waves.last() {
        None | Some(WaveSize::Percent(100)) => {}
        Some(last) => {
            return Err(format!(
                "the last wave is {:?}, so some hosts would never be updated; end the list with \"100%\" \
                 (or make it empty to turn waves off)",
                last.to_string()
            ))
        }
    }
    let shares: Vec<u32> =
        waves.iter().filter_map(|w| if let WaveSize::Percent(p) = w { Some(*p) } else { None }).collect();
    if let Some(pair) = shares.windows(2).find(|p| p[1] <= p[0]) {
        return Err(format!("the shares must grow from wave to wave, but {}% follows {}%", pair[1], pair[0]));
    }
    Ok(())
}

/// `[machine_updater] canary_waves` and `canary_soak`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct WavePolicy {
    /// Cumulative wave sizes; empty: no waves (every host of a target may start at once).
    pub waves: Vec<WaveSize>,
    /// How long after a wave's last host finished the next one opens.
    pub soak_ms: i64,
}

impl WavePolicy {
    pub fn is_on(&self) -> bool {
        !self.waves.is_empty()
    }

    /// "1, 10%, 50%, 100%; soak 30m".
    pub fn describe(&self) -> String {
        if !self.is_on() {
            return "off (machine_updater.canary_waves = [])".to_string();
        }
        let sizes: Vec<String> = self.waves.iter().map(ToString::to_string).collect();
        let soak = std::time::Duration::from_millis(u64::try_from(self.soak_ms).unwrap_or(0));
        format!("{} (machine_updater.canary_waves); soak {} (canary_soak)", sizes.join(", "), format_duration(soak))
    }
}

/// When a target's next wave opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum NextWave {
    /// The open wave is the last: every host of the target may start.
    None,
    /// The open wave still has room: `gates::pass` starts more of its hosts.
    Filling,
    /// The open wave is full; `running` of its hosts have not finished. The next opens
    /// `soak_ms` after the last of them finishes, if they stay within the budget.
    AfterRunning { running: u32, soak_ms: i64 },
    /// Every host of the open wave finished within the budget: the next opens at `at_ms`.
    At { at_ms: i64 },
    /// The open wave ended with more failures than the budget's share: the target is paused.
    Held { failed: u32, attempted: u32, failed_percent: u32 },
}

impl fmt::Display for NextWave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NextWave::None => write!(f, "this is the last wave"),
            NextWave::Filling => write!(f, "this wave still has room"),
            NextWave::AfterRunning { running, soak_ms } => {
                let soak = std::time::Duration::from_millis(u64::try_from(*soak_ms).unwrap_or(0));
                write!(
                    f,
                    "the next wave opens {} after its {running} running host{} finish{}, if within the error budget",
                    format_duration(soak),
                    if *running == 1 { "" } else { "s" },
                    if *running == 1 { "es" } else { "" }
                )
            }
            NextWave::At { at_ms } => write!(f, "the next wave opens at {}", rfc3339_utc(*at_ms)),
            NextWave::Held { failed, attempted, failed_percent } => write!(
                f,
                "held: {failed} of {attempted} hosts failed, more than error_budget_failed_percent = {failed_percent} %"
            ),
        }
    }
}

/// Where one target's rollout is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WaveStatus {
    pub target: Target,
    /// The open wave, from 1.
    pub wave: u32,
    /// How many waves there are.
    pub waves: u32,
    /// The host count the wave sizes are shares of: the target's hosts now, or the count frozen
    /// when its first wave started if that is larger.
    pub hosts: u32,
    /// The target's hosts now: still to take it, or on record.
    pub hosts_now: u32,
    /// Hosts the open wave lets start in all.
    pub allowed: u32,
    /// Hosts started on it (on record or in flight), before this pass.
    pub started: u32,
    /// Of those, hosts still running.
    pub running: u32,
    pub next: NextWave,
}

impl WaveStatus {
    /// Hosts still allowed to start in the open wave.
    pub fn room(&self) -> u32 {
        if self.next == NextWave::None {
            u32::MAX
        } else {
            self.allowed.saturating_sub(self.started)
        }
    }

    /// When the next wave opens, as a host held because the open wave is full sees it once
    /// `started_now` more hosts started in this pass (a wave that had room is then running).
    pub fn after_pass(&self, started_now: u32, soak_ms: i64) -> NextWave {
        match &self.next {
            NextWave::Filling => NextWave::AfterRunning { running: self.running + started_now, soak_ms },
            other => other.clone(),
        }
    }
}

/// What the site database keeps of a target's canary waves (`gates::waves`), written by the
/// scheduler's pass as the waves start and open, cleared by `hostfw budget resume`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WaveRecord {
    /// The target's host count when its first wave started, grown since if more hosts joined
    /// (never shrunk): the wave sizes are shares of it.
    pub hosts: u32,
    /// The wave reached, from 1: a later pass starts there and never jumps over a wave whose
    /// checks and soak were not passed.
    pub wave: u32,
}

/// A target's `WaveRecord` to write into the site database (`wave_marks`). The store writes it
/// only while the target still has at least `attempted_hosts` attempts on record (a resume since
/// the pass read its view cleared them), and only grows what is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaveMark {
    pub target: Target,
    pub record: WaveRecord,
    /// The attempts on record when the pass read its view.
    pub attempted_hosts: u32,
}

/// Each target's wave, for every target that some host still has to take or that has a host
/// running, in target order. Empty when waves are off.
pub fn wave_statuses(
    policy: &WavePolicy,
    budget: &ErrorBudget,
    hosts: &[HostView],
    records: &[TargetRecord],
    now_ms: i64,
) -> Vec<WaveStatus> {
    if !policy.is_on() {
        return Vec::new();
    }
    // Running: in flight and not stopped by a spent retry budget.
    let in_flight: HashMap<&str, bool> =
        hosts.iter().map(|h| (h.machine_id.as_str(), h.is_in_flight() && !h.exhausted)).collect();
    let mut needing: BTreeMap<&Target, Vec<&HostView>> = BTreeMap::new();
    for h in hosts {
        for t in &h.targets {
            needing.entry(t).or_default().push(h);
        }
    }
    let by_target: BTreeMap<&Target, &TargetRecord> = records.iter().map(|r| (&r.target, r)).collect();
    let targets: BTreeSet<&Target> = needing.keys().copied().chain(by_target.keys().copied()).collect();
    let empty = Vec::new();
    targets
        .into_iter()
        .filter_map(|target| {
            let still = needing.get(target).unwrap_or(&empty);
            let record = by_target.get(target).copied();
            status(policy, budget, target, still, record, &in_flight, now_ms)
        })
        .collect()
}

fn status(
    policy: &WavePolicy,
    budget: &ErrorBudget,
    target: &Target,
    still: &[&HostView],
    record: Option<&TargetRecord>,
    in_flight: &HashMap<&str, bool>,
    now_ms: i64,
) -> Option<WaveStatus> {
    let attempted = record.map_or(0, |r| r.attempted_hosts);
    // A host that failed and then succeeded on a retry does not hold the next wave.
    let failed = record.map_or(0, |r| r.failed_last);
    let open: BTreeSet<&str> = record.map(|r| r.open.iter().map(String::as_str).collect()).unwrap_or_default();
    // Finished and never failed: attempted already, so counted once among the target's hosts and
    // its started ones, even when it has to take the target again.
    let finished: BTreeSet<&str> = record.map(|r| r.finished.iter().map(String::as_str).collect()).unwrap_or_default();
    let on_record: BTreeSet<&str> = open
        .iter()
        .copied()
        .chain(record.into_iter().flat_map(|r| r.failures.iter().map(|f| f.machine_id.as_str())))
        .collect();
    // Updating towards this target but not yet on record: the pass started them, the workflow
    // has not planned the install yet. A host in maintenance takes a slot of the ceiling but is
    // not updating: it has not started on the target.
    let starting: Vec<&&HostView> = still
        .iter()
        .filter(|h| h.has_request || h.state == crate::HostState::HostReprovision)
        .filter(|h| !on_record.contains(h.machine_id.as_str()))
        .collect();
    // An open attempt whose host is no longer in flight ended without a finish on record (its
    // request was removed): it counts as finished. So does a host whose retry budget is spent
    // (it failed elsewhere, or on this target and its failure is on record).
    // A host whose attempt failed but whose request still has retries left (in flight, not
    // exhausted) is between two tries: it runs on, so the wave waits for it instead of pausing
    // and un-pausing at every retry. Its failure holds the wave once its budget is spent.
    let retrying: BTreeSet<&str> = record
        .into_iter()
        .flat_map(|r| r.failures.iter().map(|f| f.machine_id.as_str()))
        .filter(|id| !open.contains(id) && in_flight.get(id).copied().unwrap_or(false))
        .collect();
    let running = count(open.iter().filter(|id| in_flight.get(*id).copied().unwrap_or(false)))
        + count(retrying.iter())
        + count(starting.iter().filter(|h| !h.exhausted));
    // A finished host updating again runs (above) but started in an earlier wave.
    let started =
        attempted.saturating_add(count(starting.iter().filter(|h| !finished.contains(h.machine_id.as_str()))));
    let still_ids: BTreeSet<&str> = still.iter().map(|h| h.machine_id.as_str()).collect();
    let named: BTreeSet<&str> = on_record.union(&finished).copied().collect();
    // Attempted hosts the record does not name (none, once every attempt is named).
    let finished_unnamed = attempted.saturating_sub(count(named.iter()));
    let hosts_now = count(still_ids.union(&named)).saturating_add(finished_unnamed);
    // A target no host still has to take and none is running is done: no wave to show.
    if still.is_empty() && running == 0 {
        return None;
    }
    // Sized from the count frozen when the first wave started, or more if hosts joined since.
    let recorded = record.and_then(|r| r.waves);
    let hosts = recorded.map_or(hosts_now, |r| r.hosts.max(hosts_now));
    // Hosts that still have to take it and have not started on it.
    let unstarted = count(still.iter().filter(|h| {
        !(named.contains(h.machine_id.as_str()) || h.has_request || h.state == crate::HostState::HostReprovision)
    }));
    // Cumulative sizes, never shrinking, at most every host.
    let mut caps = Vec::with_capacity(policy.waves.len());
    for w in &policy.waves {
        let previous = caps.last().copied().unwrap_or(0);
        caps.push(w.hosts_of(hosts).max(previous).min(hosts));
    }
    let last_done = record.and_then(|r| r.last_done_ms.or(r.last_attempt_ms));
    // From the wave reached: the ones before it were passed, with their checks.
    let reached = recorded.map_or(0, |r| usize::try_from(r.wave.saturating_sub(1)).unwrap_or(usize::MAX));
    let mut wave = reached.min(caps.len() - 1);
    let next = loop {
        if wave + 1 == caps.len() {
            break NextWave::None;
        }
        // Room left, and a host left to take it.
        if started < caps[wave] && unstarted > 0 {
            break NextWave::Filling;
        }
        // The next wave adds no host.
        if caps[wave + 1] == caps[wave] {
            wave += 1;
            continue;
        }
        if running > 0 {
            break NextWave::AfterRunning { running, soak_ms: policy.soak_ms };
        }
        if budget.share_exceeded(attempted, failed) {
            break NextWave::Held { failed, attempted, failed_percent: budget.failed_percent };
        }
        // No attempt on record ended (its hosts stopped elsewhere): nothing to soak after.
        let opens = last_done.map_or(now_ms, |done| done.saturating_add(policy.soak_ms));
        if now_ms < opens {
            break NextWave::At { at_ms: opens };
        }
        wave += 1;
    };
    Some(WaveStatus {
        target: target.clone(),
        wave: count_n(wave + 1),
        waves: count_n(caps.len()),
        hosts,
        hosts_now,
        allowed: caps[wave],
        started,
        running,
        next,
    })
}

/// The `WaveRecord`s `plan` decided that the site database does not hold yet: for each target
/// whose first wave has started (a host started before this pass, or this pass starts one), the
/// host count its waves are sized from and the wave it reached. The manager pass stores them
/// before it starts any host; `hostfw plan` writes nothing.
pub fn wave_marks(input: &PassInput, plan: &Plan) -> Vec<WaveMark> {
    let by_target: BTreeMap<&Target, &TargetRecord> = input.targets.iter().map(|r| (&r.target, r)).collect();
    let starting: Vec<&HostView> = input.hosts.iter().filter(|h| plan.start.contains(&h.machine_id)).collect();
    plan.waves
        .iter()
        .filter(|w| w.started > 0 || starting.iter().any(|h| h.targets.contains(&w.target)))
        .filter_map(|w| {
            let record = by_target.get(&w.target).copied();
            let wanted = WaveRecord { hosts: w.hosts, wave: w.wave };
            if record.and_then(|r| r.waves) == Some(wanted) {
                return None;
            }
            Some(WaveMark {
                target: w.target.clone(),
                record: wanted,
                attempted_hosts: record.map_or(0, |r| r.attempted_hosts),
            })
        })
        .collect()
}

/// Whether a host's labels put it first in its waves.
pub fn is_canary(host: &HostView) -> bool {
    host.labels.get(CANARY_LABEL.0).is_some_and(|v| v == CANARY_LABEL.1)
}

fn count<T>(items: impl Iterator<Item = T>) -> u32 {
    count_n(items.count())
}

fn count_n(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
