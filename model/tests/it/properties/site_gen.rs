//! The random sites the gate properties run on, and how such a site evolves over many scheduler
//! passes.
//!
//! Owns the simulated site ([`Site`]: catalog, hosts, requests, the site database's error-budget
//! and canary-wave records, past update durations, approval holds, the operator's brakes and the
//! gate fence), the proptest strategies that build one ([`scenario`]) and the events applied to
//! it between passes and during a pass's writes ([`Event`]), and the pass's own steps
//! ([`Site::read`], [`Site::write_marks`], [`Site::write_start`]; `properties::evolve` drives
//! them and lands the races among them).
//!
//! The simulation follows the real code path, read-only, so the properties see what the
//! scheduler sees:
//! - the view is built like `activities/src/site/site_view.rs` (`assemble`): hosts in machine id
//!   order, a host unhealthy when its last exploration failed or someone else's health report is
//!   on it, targets only for a drifted report, approval waits for assigned hosts' unstarted
//!   requests; the target records like `Store::target_records` (`store/src/error_budget.rs`:
//!   attempts, failures oldest first, open attempts, last attempt / last end, the latest attempts
//!   that failed, the wave record);
//! - a component whose inventory member reports no version (`Host::unreported`) is left out of
//!   drift like `gates::firmware_status` leaves it out (`drift::check_component`): the host is
//!   `VersionNotReported` when nothing else differs or is unmatched, else `Drifted` with it in
//!   `not_reported`; it is never a target, so the host workflow never installs it
//!   (`Selection::VersionNotReported`);
//! - a pass is `activities/src/site/manager_pass.rs`: it reads the gate fence
//!   (`Store::gate_fence`, [`Site::epoch`]) before its view, runs `gates::plan`, writes the wave
//!   marks first (`Store::target_waves_mark`: only while the target has at least the attempts
//!   the pass read, and only growing what is recorded; a host of a target whose mark was dropped
//!   waits), then one request per started host in plan order (`site_link::claim`,
//!   `Store::request_create_guarded` with the pass's fence and freezes honoured): refused for a
//!   removed host, a host in maintenance, a host with a request, a host a freeze in force covers,
//!   a host whose failure domain is at its cap now; and refused when the fence moved since the
//!   pass read it (it expects the epoch it read plus one per request it made), after which the
//!   rest of the plan waits for the next pass;
//! - the gate fence (`store/src/gate_fence.rs`) moves by one with every write that can tighten a
//!   gate for a host not yet started, in that write's transaction: any request created, a host
//!   entering maintenance, a target failure recorded, an operator pause, a resume, a freeze, an
//!   update window set or cancelled, a catalog default change; nothing else moves it (requests
//!   ending, unfreeze, maintenance exit, exploration results, health reports, tenants,
//!   auto-update flags, config reloads, hosts joining or leaving, approval deadlines, attempts
//!   recorded);
//! - the host workflow's steps are events, writing the record as `activities/src/host` does:
//!   planning a component records an attempt (`install_plan.rs`, `Store::target_attempt`), a
//!   failed attempt its failure (`host_state.rs` `record_retry`, `Store::target_failure`), the
//!   restore ends every open attempt (`Store::target_finish`) and then deletes the request;
//!   While the host's exploration fails the workflow's inventory refresh fails too, so it waits;
//! - direct requests go through the store's guard (maintenance refused, a second request refused,
//!   failure-domain caps) and, without `--ignore-rollout-gates`, the rollout gates as
//!   `host reprovision set` checks them (`gates::rollout_holds` on a fresh view; read and written
//!   at once here); with it (`Event::DirectIgnoringGates`) no freeze, pause, wave, ceiling or
//!   window holds them. Every request ends the host's approval hold (`request_create_guarded`).
//!
//! Races: a step's `race` lands in the middle of its pass's writes (`Step::race_at`): events an
//! operator, a host workflow or the explorer write meanwhile, aimed at the hosts the pass writes
//! ([`Event::aimed`]), and whole other passes (`Event::Pass`: the same activity retried on
//! another worker while the first still runs), reading the site as it is then or as the raced
//! pass read it. Each request says who wrote it ([`Writer`]).
//!
//! Not simulated: a pass's workflow starts failing after its request was written (the request is
//! rolled back), the site-view cache (each pass reads every row), several inventory members per
//! component (one member each: a component is either reported or not), and races inside a racing
//! pass.
//!
//! It checks nothing itself: each invariant is a property module beside this one.

use std::collections::{BTreeMap, BTreeSet};

use hostfw_model::gates::{
    covering, hold_until, rollout_holds, ApprovalDeadline, ApprovalFacts, ApprovalHold, ApprovalWait, Brakes,
    DeadlinePolicy, ErrorBudget, Freeze, FreezeScope, OperatorPause, Target, TargetFailure, TargetRecord,
    UpdateDurations, WavePolicy, WaveRecord, WaveSize,
};
use hostfw_model::{
    plan, CeilingLimits, ComponentType, FirmwareStatus, HostState, HostView, Labels, NotReportedComponent, PassInput,
    Plan, SchedulingPolicy, TimeWindow, UnknownMember, UnknownVersion, UnmatchedComponent,
};
use proptest::prelude::*;

pub const MIN: i64 = 60_000;
/// The first pass's time: 2026-05-01T22:00:00Z.
pub const START_MS: i64 = 1_777_672_800_000;
/// The components a catalog model may have, in the order the host workflow installs them.
pub const COMPONENTS: [ComponentType; 3] = [ComponentType::Bmc, ComponentType::Uefi, ComponentType::Nic];
const VENDORS: [&str; 2] = ["Dell Inc.", "HPE"];
/// Retries of a failed component before the request's budget is spent (the real workflow has
/// five; fewer here so that exhausted hosts show up in short evolutions).
const RETRIES: u32 = 2;
/// Label keys and their values: `rack`, `power` (failure domains) and `canary`.
const RACKS: [&str; 4] = ["r0", "r1", "r2", "r3"];
const POWER: [&str; 2] = ["p0", "p1"];

// ---------------------------------------------------------------------------------------------
// What a scenario is made of (generated, shrinkable, printed on failure).

/// Which concept a property looks at: the generator makes that concept's features frequent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Ceiling,
    LabelCaps,
    Waves,
    Brakes,
    Windows,
    Selection,
    Reasons,
    /// Races between a pass's read and its writes (`races`).
    Races,
}

/// One catalog model.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    pub vendor: u8,
    pub explicit_start_needed: bool,
    /// Which of [`COMPONENTS`] it has (bit mask, at least one).
    pub components: u8,
    /// Each component's default version, "1" to "3".
    pub defaults: [u8; 3],
}

/// One host as it is when the scenario begins or when it joins the site.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// Index into the catalog's models (modulo their number).
    pub model: u8,
    /// It reports a model the catalog does not know instead.
    pub unknown: bool,
    /// 0: not explored yet, 1: its last exploration failed, else explored.
    pub explored: u8,
    /// Reported versions of [`COMPONENTS`], "1" to "3".
    pub versions: [u8; 3],
    /// A component whose matcher finds no inventory member (S54).
    pub missing: Option<u8>,
    /// A component whose inventory member reports no version (`VersionNotReported`).
    pub unreported: Option<u8>,
    pub assigned: bool,
    pub auto_update: Option<bool>,
    /// Window: start offset from now and length, minutes.
    pub window: Option<(i16, u16)>,
    pub rack: u8,
    pub power: u8,
    pub canary: bool,
    pub maintenance: bool,
    /// A request exists already: (approved, exhausted).
    pub request: Option<(bool, bool)>,
    pub health_report: bool,
}

/// A freeze an operator sets.
#[derive(Debug, Clone)]
pub struct FreezeSpec {
    /// 0: site, 1: model, 2: label.
    pub kind: u8,
    pub model: u8,
    pub with_vendor: bool,
    /// Names written in another case (scopes compare names like the catalog).
    pub other_case: bool,
    pub label: u8,
    pub drain: bool,
}

/// The site's policy as configured.
#[derive(Debug, Clone)]
pub struct PolicySpec {
    pub autoupdate: bool,
    pub manual_tagging: bool,
    /// Hosts (by index) on the legacy `host_disable_autoupdate` list.
    pub legacy_disabled: Vec<u8>,
    pub absolute: Option<u8>,
    pub percent: Option<u8>,
    /// `max_concurrent_per_label` for `rack` and `power`.
    pub rack_cap: Option<u8>,
    pub power_cap: Option<u8>,
    pub budget: (u8, u8, u8),
    /// Index into [`WAVE_LISTS`] (0: waves off) and the soak, minutes.
    pub waves: u8,
    pub soak_min: u16,
    pub window_fit_min_samples: u8,
    /// Approval deadline, minutes (0: none), and whether its policy is `skip`.
    pub deadline_min: u16,
    pub deadline_skip: bool,
    pub max_hosts_in_repair: Option<u8>,
}

/// Canary wave lists the generator picks from (index 0: waves off).
pub const WAVE_LISTS: [&[&str]; 6] = [
    &[],
    &["1", "100%"],
    &["1", "10%", "50%", "100%"],
    &["2", "50%", "100%"],
    &["1", "3", "25%", "100%"],
    &["30%", "60%", "100%"],
];

/// The site when the scenario begins.
#[derive(Debug, Clone)]
pub struct SiteSpec {
    pub policy: PolicySpec,
    pub models: Vec<ModelSpec>,
    pub hosts: Vec<HostSpec>,
    /// Past run durations (minutes) per model and component set (bit mask index 1..=7).
    pub durations: Vec<[Vec<u16>; 7]>,
    pub freezes: Vec<FreezeSpec>,
}

/// Something that happens between two passes. Hosts are named by index (modulo the hosts in the
/// site), so a shrunk scenario stays meaningful.
#[derive(Debug, Clone)]
pub enum Event {
    /// A new host is registered.
    AddHost(HostSpec),
    /// `hostfw machine remove` (refused while it has a request, like the store does).
    RemoveHost(u8),
    /// The site explorer's next crawl of the host fails (`false`) or succeeds (`true`).
    Explore(u8, bool),
    /// The host workflow's next step: approval, protect, plan the next component (an attempt on
    /// record), install it, or restore (every open attempt ends, the request goes).
    Progress(u8),
    /// Every host workflow takes one step.
    Tick,
    /// The component being installed fails (`FailedFirmwareUpgrade`): a failure on record, a
    /// retry later, or the retry budget spent (`exhausted`).
    Fail(u8),
    /// `host reprovision abort`, to maintenance (repair) or back to its steady state.
    Abort(u8, bool),
    /// `managed-host reset-host-reprovisioning`.
    Reset(u8),
    /// `host reprovision clear` (only a request that has not started).
    Clear(u8),
    /// `machine maintenance --enter` / `--exit`.
    Maintenance(u8, bool),
    /// `managed-host start-updates` (start offset from now, length, minutes) or `--cancel`.
    Window(u8, Option<(i16, u16)>),
    /// A health report by someone else appears or goes.
    Health(u8, bool),
    /// A tenant instance is allocated on or released from the host.
    Assign(u8, bool),
    /// `machine auto-update --enable` / `--disable` / `--clear`.
    AutoUpdate(u8, Option<bool>),
    /// The catalog's default version of a model's component changes (S5): model, component,
    /// version.
    CatalogDefault(u8, u8, u8),
    /// `hostfw freeze`.
    Freeze(FreezeSpec),
    /// `hostfw unfreeze` of the freezes in force (by index).
    Unfreeze(u8),
    /// `hostfw budget pause` of a target some host would install (by index).
    Pause(u8),
    /// `hostfw budget resume` of a target on record or paused (by index).
    Resume(u8),
    /// `host reprovision set`, held like the CLI holds it (rollout gates, caps, maintenance).
    Direct(u8),
    /// `host reprovision set --ignore-rollout-gates`: only the store's guard holds it (maintenance,
    /// a request already there, failure-domain caps); freezes, pauses, canary waves, the ceiling
    /// and windows do not.
    DirectIgnoringGates(u8),
    /// A whole other pass (view, plan, writes), with no race of its own. Among a step's events it
    /// is one more pass; in a race it is the same activity retried on another worker while the
    /// raced pass still writes: `stale`, it read the fence and the view when the raced pass did
    /// (before either wrote); else it reads them when it runs.
    Pass { stale: bool },
    /// The explorer finds a host's component reporting no version (`false`: its member is
    /// absent, blank or a placeholder) or reporting one again (`true`): host, component.
    VersionReported(u8, u8, bool),
    /// The approval deadline of an assigned host's waiting request passes with policy `skip`:
    /// the request is given up and the host held until its next window.
    DeadlineSkip(u8),
    /// A config reload changes the ceiling's limits.
    Limits(Option<u8>, Option<u8>),
}

impl Event {
    /// The host index it names, if it names one.
    pub fn host_mut(&mut self) -> Option<&mut u8> {
        match self {
            Event::RemoveHost(i)
            | Event::Explore(i, _)
            | Event::Progress(i)
            | Event::Fail(i)
            | Event::Abort(i, _)
            | Event::Reset(i)
            | Event::Clear(i)
            | Event::Maintenance(i, _)
            | Event::Window(i, _)
            | Event::Health(i, _)
            | Event::Assign(i, _)
            | Event::AutoUpdate(i, _)
            | Event::Direct(i)
            | Event::DirectIgnoringGates(i)
            | Event::DeadlineSkip(i)
            | Event::VersionReported(i, _, _) => Some(i),
            Event::AddHost(_)
            | Event::Tick
            | Event::CatalogDefault(..)
            | Event::Freeze(_)
            | Event::Unfreeze(_)
            | Event::Pause(_)
            | Event::Resume(_)
            | Event::Limits(..)
            | Event::Pass { .. } => None,
        }
    }

    /// Whether it is a step of a host workflow or an operator's command on a request, and then
    /// which hosts it acts on: those with a request (for a failure: with an install under way).
    fn on_a_request(&self) -> Option<fn(&Host) -> bool> {
        match self {
            Event::Fail(_) => Some(|h| h.request.as_ref().is_some_and(|r| r.current.is_some())),
            Event::Progress(_) | Event::Abort(..) | Event::Reset(_) | Event::Clear(_) | Event::DeadlineSkip(_) => {
                Some(|h| h.request.is_some())
            }
            _ => None,
        }
    }

    /// The event as it lands in a race on `site` while a pass writes `planned`, aimed at what the
    /// race matters to: a host index below 128 names one of the planned hosts (for an event on a
    /// request: one of the hosts it acts on), a pause or resume index below 128 one of the
    /// planned hosts' targets, each modulo their number; 128 and above names any host or target,
    /// as between passes. A catalog change names the model of one of the planned hosts.
    pub fn aimed(&self, site: &Site, planned: &[String]) -> Event {
        let mut event = self.clone();
        match &mut event {
            Event::CatalogDefault(m, ..) => {
                let models: Vec<usize> = planned.iter().filter_map(|id| site.host(id)?.model).collect();
                aim(m, &models, false);
            }
            Event::Pause(i) | Event::Resume(i) => {
                let choices = if matches!(self, Event::Pause(_)) { site.pausable() } else { site.resumable() };
                let wanted: Vec<Target> =
                    planned.iter().filter_map(|id| site.host(id)).flat_map(|h| site.targets(h)).collect();
                let aims: Vec<usize> = (0..choices.len()).filter(|&c| wanted.contains(&choices[c])).collect();
                aim(i, &aims, true);
            }
            _ => {
                let aims: Vec<usize> = match self.on_a_request() {
                    Some(acts_on) => (0..site.hosts.len()).filter(|&i| acts_on(&site.hosts[i])).collect(),
                    None => planned.iter().filter_map(|id| site.hosts.iter().position(|h| &h.id == id)).collect(),
                };
                if let Some(i) = event.host_mut() {
                    aim(i, &aims, true);
                }
            }
        }
        event
    }
}

/// Points the index `i` at one of `aims` (modulo their number): with `below_128`, only an index
/// below 128 (the others keep naming anything). Nothing to aim at: `i` stays.
fn aim(i: &mut u8, aims: &[usize], below_128: bool) {
    if below_128 && *i >= 128 {
        return;
    }
    if let Some(at) = aims.get(usize::from(*i) % aims.len().max(1)).and_then(|at| u8::try_from(*at).ok()) {
        *i = at;
    }
}

/// The events before one pass, how many steps every host workflow takes after them, how far
/// the clock moves before the pass runs, and what races its writes.
#[derive(Debug, Clone)]
pub struct Step {
    pub events: Vec<Event>,
    pub ticks: u8,
    pub advance_min: u16,
    /// Events that land between the pass's read and its last write (empty: none), aimed at the
    /// hosts it writes ([`Event::aimed`]).
    pub race: Vec<Event>,
    /// Where the race lands, modulo the pass's starts + 2: 0 between its read and its wave marks,
    /// `k + 1` after its marks and its first `k` starts.
    pub race_at: u8,
}

/// A random site and its evolution: a pass after each step.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub site: SiteSpec,
    pub steps: Vec<Step>,
}

// ---------------------------------------------------------------------------------------------
// Strategies.

fn model_spec(focus: Focus) -> impl Strategy<Value = ModelSpec> {
    let explicit = match focus {
        Focus::Windows => 0.7,
        Focus::Races => 0.4,
        _ => 0.2,
    };
    (0..2u8, prop::bool::weighted(explicit), 1..8u8, [1..4u8, 1..4u8, 1..4u8]).prop_map(
        |(vendor, explicit_start_needed, components, defaults)| ModelSpec {
            vendor,
            explicit_start_needed,
            components,
            defaults,
        },
    )
}

fn window_spec() -> impl Strategy<Value = (i16, u16)> {
    (-600i16..600, 20u16..600)
}

/// One host (of a model the catalog does not know with a small chance).
pub fn host_spec(focus: Focus) -> impl Strategy<Value = HostSpec> {
    let window = match focus {
        Focus::Windows => 0.8,
        Focus::Races => 0.5,
        _ => 0.3,
    };
    let assigned = if focus == Focus::Selection { 0.4 } else { 0.2 };
    let unreported = if matches!(focus, Focus::Races | Focus::Reasons) { 0.15 } else { 0.04 };
    (
        (any::<u8>(), prop::bool::weighted(0.04), prop_oneof![1 => Just(0u8), 1 => Just(1u8), 20 => Just(2u8)]),
        [1..4u8, 1..4u8, 1..4u8],
        (prop::option::weighted(0.05, 0..3u8), prop::option::weighted(unreported, 0..3u8)),
        (prop::bool::weighted(assigned), prop::option::weighted(0.1, any::<bool>())),
        prop::option::weighted(window, window_spec()),
        (0..4u8, 0..2u8, prop::bool::weighted(0.15)),
        prop::bool::weighted(0.05),
        prop::option::weighted(0.1, (prop::bool::weighted(0.5), prop::bool::weighted(0.2))),
        prop::bool::weighted(0.08),
    )
        .prop_map(
            |(
                (model, unknown, explored),
                versions,
                (missing, unreported),
                (assigned, auto_update),
                window,
                (rack, power, canary),
                maintenance,
                request,
                health_report,
            )| HostSpec {
                model,
                unknown,
                explored,
                versions,
                missing,
                unreported,
                assigned,
                auto_update,
                window,
                rack,
                power,
                canary,
                maintenance,
                request,
                health_report,
            },
        )
}

fn freeze_spec() -> impl Strategy<Value = FreezeSpec> {
    (0..3u8, 0..3u8, any::<bool>(), any::<bool>(), 0..6u8, any::<bool>()).prop_map(
        |(kind, model, with_vendor, other_case, label, drain)| FreezeSpec {
            kind,
            model,
            with_vendor,
            other_case,
            label,
            drain,
        },
    )
}

fn policy_spec(focus: Focus) -> impl Strategy<Value = PolicySpec> {
    let percent = if focus == Focus::Ceiling { 0.6 } else { 0.25 };
    let caps = if focus == Focus::LabelCaps { 0.9 } else { 0.3 };
    let waves = match focus {
        Focus::Waves => prop_oneof![1 => Just(0u8), 9 => 1..6u8].boxed(),
        _ => prop_oneof![1 => Just(0u8), 1 => 1..6u8].boxed(),
    };
    let fit = if focus == Focus::Windows { (1, 3) } else { (3, 1) };
    (
        (prop::bool::weighted(0.95), prop::bool::weighted(0.3), prop::collection::vec(any::<u8>(), 0..2)),
        (
            prop_oneof![1 => Just(None), 1 => Just(Some(0u8)), 18 => (1..9u8).prop_map(Some)],
            prop::option::weighted(percent, 1..101u8),
        ),
        (prop::option::weighted(caps, 1..4u8), prop::option::weighted(caps, 1..5u8)),
        (0..5u8, prop_oneof![Just(0u8), Just(20), Just(50)], 0..6u8),
        (waves, prop_oneof![Just(0u16), Just(10), Just(30), Just(120)]),
        prop_oneof![fit.0 => Just(0u8), fit.1 => 1..4u8],
        (prop_oneof![Just(0u16), Just(60), Just(240)], any::<bool>()),
        prop::option::weighted(0.3, 0..3u8),
    )
        .prop_map(
            |(
                (autoupdate, manual_tagging, legacy_disabled),
                (absolute, percent),
                (rack_cap, power_cap),
                budget,
                (waves, soak_min),
                window_fit_min_samples,
                (deadline_min, deadline_skip),
                max_hosts_in_repair,
            )| PolicySpec {
                autoupdate,
                manual_tagging,
                legacy_disabled,
                absolute,
                percent,
                rack_cap,
                power_cap,
                budget,
                waves,
                soak_min,
                window_fit_min_samples,
                deadline_min,
                deadline_skip,
                max_hosts_in_repair,
            },
        )
}

fn durations() -> impl Strategy<Value = [Vec<u16>; 7]> {
    let runs = || prop::collection::vec(10u16..400, 0..5);
    [runs(), runs(), runs(), runs(), runs(), runs(), runs()]
}

fn host_ix() -> impl Strategy<Value = u8> {
    any::<u8>()
}

/// One event, weighted so that evolutions make progress (host workflows step and finish) while
/// the site changes under them.
pub fn event(focus: Focus) -> impl Strategy<Value = Event> {
    let brakes = if focus == Focus::Brakes { 4 } else { 1 };
    let unreported = if matches!(focus, Focus::Races | Focus::Reasons) { 2 } else { 1 };
    prop_oneof![
        8 => host_ix().prop_map(Event::Progress),
        4 => Just(Event::Tick),
        3 => host_ix().prop_map(Event::Fail),
        2 => host_spec(focus).prop_map(Event::AddHost),
        2 => host_ix().prop_map(Event::RemoveHost),
        3 => (host_ix(), prop::bool::weighted(0.7)).prop_map(|(h, ok)| Event::Explore(h, ok)),
        1 => (host_ix(), any::<bool>()).prop_map(|(h, m)| Event::Abort(h, m)),
        1 => host_ix().prop_map(Event::Reset),
        1 => host_ix().prop_map(Event::Clear),
        2 => (host_ix(), any::<bool>()).prop_map(|(h, on)| Event::Maintenance(h, on)),
        2 => (host_ix(), prop::option::weighted(0.8, window_spec())).prop_map(|(h, w)| Event::Window(h, w)),
        1 => (host_ix(), any::<bool>()).prop_map(|(h, on)| Event::Health(h, on)),
        1 => (host_ix(), any::<bool>()).prop_map(|(h, on)| Event::Assign(h, on)),
        1 => (host_ix(), prop::option::of(any::<bool>())).prop_map(|(h, o)| Event::AutoUpdate(h, o)),
        2 => (0..3u8, 0..3u8, 1..4u8).prop_map(|(m, c, v)| Event::CatalogDefault(m, c, v)),
        brakes => freeze_spec().prop_map(Event::Freeze),
        brakes => any::<u8>().prop_map(Event::Unfreeze),
        brakes => any::<u8>().prop_map(Event::Pause),
        (brakes + 1) => any::<u8>().prop_map(Event::Resume),
        2 => host_ix().prop_map(Event::Direct),
        1 => host_ix().prop_map(Event::DirectIgnoringGates),
        1 => host_ix().prop_map(Event::DeadlineSkip),
        1 => (prop::option::weighted(0.9, 0..9u8), prop::option::weighted(0.3, 1..101u8))
            .prop_map(|(a, p)| Event::Limits(a, p)),
        unreported => (host_ix(), 0..3u8, any::<bool>()).prop_map(|(h, c, on)| Event::VersionReported(h, c, on)),
        // Rarely one more pass between two (the manager woken twice).
        1 => Just(Event::Pass { stale: false }),
    ]
}

/// A change the gate fence does not see that takes a host out of a pass's candidates: its
/// exploration fails, its automatic updates are turned off, a tenant takes it, or its drifted
/// component stops reporting a version. A pass that read the site before it may still write the
/// host's request; one that reads after it picks another host.
fn unfenced_change() -> impl Strategy<Value = Event> {
    prop_oneof![
        host_ix().prop_map(|h| Event::Explore(h, false)),
        host_ix().prop_map(|h| Event::AutoUpdate(h, Some(false))),
        host_ix().prop_map(|h| Event::Assign(h, true)),
        (host_ix(), 0..3u8).prop_map(|(h, c)| Event::VersionReported(h, c, false)),
    ]
}

/// One event of a race: often another pass, and the acts that race a pass the most (direct
/// requests with or without the rollout gates, maintenance, changes the fence does not see)
/// more often than between passes.
pub fn race_event(focus: Focus) -> impl Strategy<Value = Event> {
    prop_oneof![
        5 => any::<bool>().prop_map(|stale| Event::Pass { stale }),
        2 => host_ix().prop_map(Event::Direct),
        2 => host_ix().prop_map(Event::DirectIgnoringGates),
        1 => (host_ix(), Just(true)).prop_map(|(h, on)| Event::Maintenance(h, on)),
        3 => unfenced_change(),
        // The host workflows go on meanwhile: attempts, installs, restores.
        2 => Just(Event::Tick),
        10 => event(focus),
    ]
}

/// A race: none in most steps (70 %; 30 % with `Focus::Races`), else one to three events.
fn race(focus: Focus) -> impl Strategy<Value = Vec<Event>> {
    let (calm, raced) = if focus == Focus::Races { (3, 7) } else { (7, 3) };
    prop_oneof![calm => Just(Vec::new()), raced => prop::collection::vec(race_event(focus), 1..4)]
}

fn step(focus: Focus) -> impl Strategy<Value = Step> {
    // Races need passes that start hosts: with `Focus::Races` the workflows step faster, so the
    // hosts they hold free their slots sooner.
    let ticks = match focus {
        Focus::Races => prop_oneof![1 => Just(1u8), 2 => Just(3u8), 2 => Just(5u8)].boxed(),
        _ => prop_oneof![2 => Just(0u8), 4 => Just(1u8), 3 => Just(2u8), 2 => Just(3u8)].boxed(),
    };
    (
        prop::collection::vec(event(focus), 0..6),
        ticks,
        prop_oneof![3 => Just(1u16), 3 => Just(5u16), 2 => Just(30u16), 2 => Just(120u16), 1 => Just(480u16)],
        race(focus),
        any::<u8>(),
    )
        .prop_map(|(events, ticks, advance_min, race, race_at)| Step { events, ticks, advance_min, race, race_at })
}

/// A random site and the steps it evolves through (a pass after each).
pub fn scenario(focus: Focus) -> impl Strategy<Value = Scenario> {
    let site = (
        policy_spec(focus),
        prop_oneof![3 => prop::collection::vec(model_spec(focus), 1..3), 1 => prop::collection::vec(model_spec(focus), 3..4)],
        prop::collection::vec(host_spec(focus), 1..22),
        prop::collection::vec(durations(), 3),
        prop::collection::vec(freeze_spec(), 0..if focus == Focus::Brakes { 3 } else { 1 }),
    )
        .prop_map(|(policy, models, hosts, durations, freezes)| SiteSpec { policy, models, hosts, durations, freezes });
    (site, prop::collection::vec(step(focus), 3..14)).prop_map(|(site, steps)| Scenario { site, steps })
}

// ---------------------------------------------------------------------------------------------
// The simulated site.

/// One catalog model as the catalog holds it now.
#[derive(Debug, Clone)]
pub struct CatalogModel {
    pub vendor: String,
    pub model: String,
    pub explicit_start_needed: bool,
    /// Default version of each of its components.
    pub defaults: BTreeMap<ComponentType, String>,
}

/// What the site explorer last found on a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explored {
    Not,
    Failed,
    Ok,
}

/// Who wrote a request: the invariants tell the pass's starts from the operator's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// On record when the scenario began.
    Before,
    /// A pass of the scheduler (the one checked, or one among a step's events).
    Pass,
    /// A pass that ran during another pass's writes (`Event::Pass` in a race).
    RacingPass,
    /// `host reprovision set`, the rollout gates honoured.
    Direct,
    /// `host reprovision set --ignore-rollout-gates`.
    DirectIgnoringGates,
}

/// A host's reprovisioning request (the `reprovision_requests` row and its workflow's state).
#[derive(Debug, Clone)]
pub struct Request {
    pub by: Writer,
    pub requested_at_ms: i64,
    /// An assigned host's request starts once its tenant approves; others at once.
    pub approved: bool,
    pub retries: u32,
    pub exhausted: bool,
    /// The component the workflow is installing (its attempt is on record).
    pub current: Option<Target>,
}

/// One machine of the site.
#[derive(Debug, Clone)]
pub struct Host {
    pub id: String,
    /// The catalog model it reports, if the catalog knows it.
    pub model: Option<usize>,
    pub vendor_name: String,
    pub model_name: String,
    pub explored: Explored,
    /// Reported version per component.
    pub versions: BTreeMap<ComponentType, String>,
    /// A component no inventory member matches.
    pub missing: Option<ComponentType>,
    /// Components whose inventory member reports no version.
    pub unreported: BTreeSet<ComponentType>,
    /// A tenant instance runs on it.
    pub instance: bool,
    pub state: HostState,
    pub auto_update: Option<bool>,
    pub window: Option<TimeWindow>,
    pub labels: Labels,
    pub request: Option<Request>,
    /// Someone else's health report is on it.
    pub health_report: bool,
    /// Marked for hands-on repair (an abort to maintenance) until it leaves maintenance.
    pub repair: bool,
}

/// One `target_hosts` row: a host's attempt of a target.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub attempted_at_ms: i64,
    pub failed_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
}

impl Row {
    /// Not failed nor finished since it was (last) attempted.
    pub fn open(&self) -> bool {
        self.failed_at_ms.is_none_or(|f| f < self.attempted_at_ms)
            && self.finished_at_ms.is_none_or(|f| f < self.attempted_at_ms)
    }

    /// Its latest attempt failed.
    pub fn failed_last(&self) -> bool {
        self.failed_at_ms.is_some_and(|f| f >= self.attempted_at_ms)
    }

    /// Its latest attempt finished and it never failed the target (`Store::target_records`'
    /// `finished`).
    pub fn finished_clean(&self) -> bool {
        self.failed_at_ms.is_none() && self.finished_at_ms.is_some_and(|f| f >= self.attempted_at_ms)
    }

    /// When its latest attempt ended, if it did.
    pub fn ended_ms(&self) -> Option<i64> {
        self.finished_at_ms.max(self.failed_at_ms)
    }
}

/// The whole simulated site between two passes.
#[derive(Debug, Clone)]
pub struct Site {
    pub now_ms: i64,
    pub policy: SchedulingPolicy,
    pub catalog: Vec<CatalogModel>,
    /// In machine id order.
    pub hosts: Vec<Host>,
    /// `target_hosts`: (target, machine id) → the attempt.
    pub rows: BTreeMap<(Target, String), Row>,
    /// `target_waves`.
    pub wave_records: BTreeMap<Target, WaveRecord>,
    /// Past runs per (vendor, model, component set), ms.
    pub durations: BTreeMap<(String, String, Vec<ComponentType>), Vec<i64>>,
    pub holds: Vec<ApprovalHold>,
    pub brakes: Brakes,
    /// How often each target was resumed (`hostfw budget resume` clears its record).
    pub resumes: BTreeMap<Target, u32>,
    /// When each host's current run began (its request's creation), for the durations.
    pub run_started: BTreeMap<String, i64>,
    /// The gate fence (`gate_fence.epoch`): moved by every write that can tighten a gate for a
    /// host not yet started.
    pub epoch: u64,
    next_host: u32,
    next_freeze: i64,
    /// What happened since the last pass, for failure messages.
    pub log: Vec<String>,
}

/// What a pass read: the gate fence first, then the site, its view and the plan made from it.
#[derive(Debug, Clone)]
pub struct Read {
    pub epoch: u64,
    pub site: Site,
    pub input: PassInput,
    pub plan: Plan,
}

/// Where a pass's requests stand against the gate fence (`GateFence`).
#[derive(Debug, Clone, Copy)]
pub struct Fence {
    /// The epoch the pass's next request expects: the one it read, plus one per request it made.
    pub expected: u64,
    /// The fence refused a request: the rest of the plan waits for the next pass.
    pub moved: bool,
}

impl Fence {
    pub fn new(read: &Read) -> Fence {
        Fence { expected: read.epoch, moved: false }
    }
}

/// What became of one start of a pass's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The request was written (and the fence moved).
    Created,
    /// Another write moved the fence since the pass read it (or refused an earlier start).
    FenceMoved,
    /// A target it would install was resumed since the read: its wave mark was dropped.
    Resumed,
    /// The host left the site.
    Removed,
    Maintenance,
    /// It has a request already.
    Requested,
    /// A freeze in force covers it (its id).
    Frozen(i64),
    /// Its failure domain is at its cap (key, value).
    LabelCap(String, String),
}

fn component(i: u8) -> ComponentType {
    COMPONENTS[usize::from(i) % COMPONENTS.len()]
}

fn window_at(now_ms: i64, (offset, len): (i16, u16)) -> TimeWindow {
    let start_ms = now_ms + i64::from(offset) * MIN;
    TimeWindow { start_ms, end_ms: start_ms + i64::from(len.max(1)) * MIN }
}

fn wave_policy(index: u8, soak_min: u16) -> WavePolicy {
    let list = WAVE_LISTS[usize::from(index) % WAVE_LISTS.len()];
    WavePolicy {
        waves: list.iter().map(|s| s.parse::<WaveSize>().expect("a valid wave")).collect(),
        soak_ms: i64::from(soak_min) * MIN,
    }
}

fn limits(absolute: Option<u8>, percent: Option<u8>) -> CeilingLimits {
    CeilingLimits { absolute: absolute.map(u32::from), percent: percent.map(|p| u32::from(p.clamp(1, 100))) }
}

impl Site {
    /// The site a scenario begins with.
    pub fn new(spec: &SiteSpec) -> Site {
        let p = &spec.policy;
        let mut label_caps = BTreeMap::new();
        if let Some(n) = p.rack_cap {
            label_caps.insert("rack".to_string(), u32::from(n));
        }
        if let Some(n) = p.power_cap {
            label_caps.insert("power".to_string(), u32::from(n));
        }
        let policy = SchedulingPolicy {
            autoupdate: p.autoupdate,
            instance_updates_manual_tagging: p.manual_tagging,
            host_disable_autoupdate: Vec::new(),
            limits: limits(p.absolute, p.percent),
            label_caps,
            error_budget: ErrorBudget {
                failed_hosts: u32::from(p.budget.0),
                failed_percent: u32::from(p.budget.1),
                min_hosts: u32::from(p.budget.2),
            },
            waves: wave_policy(p.waves, p.soak_min),
            window_fit_min_samples: u32::from(p.window_fit_min_samples),
            approval_deadline: hostfw_model::gates::ApprovalDeadline {
                after_ms: i64::from(p.deadline_min) * MIN,
                policy: if p.deadline_skip { DeadlinePolicy::Skip } else { DeadlinePolicy::Escalate },
            },
            max_hosts_in_repair: p.max_hosts_in_repair.map(u32::from),
        };
        let catalog: Vec<CatalogModel> = spec
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| CatalogModel {
                vendor: VENDORS[usize::from(m.vendor) % VENDORS.len()].to_string(),
                model: format!("M{i}"),
                explicit_start_needed: m.explicit_start_needed,
                defaults: (0..3u8)
                    .filter(|c| m.components & (1 << c) != 0)
                    .map(|c| (component(c), m.defaults[usize::from(c)].to_string()))
                    .collect(),
            })
            .collect();
        let mut durations = BTreeMap::new();
        for (m, per_set) in catalog.iter().zip(&spec.durations) {
            for (mask, runs) in per_set.iter().enumerate() {
                let set: Vec<ComponentType> = (0..3u8).filter(|c| (mask + 1) & (1 << c) != 0).map(component).collect();
                let mut set = set;
                set.sort_by_key(|c| c.to_string());
                if !runs.is_empty() {
                    durations.insert(
                        (m.vendor.clone(), m.model.clone(), set),
                        runs.iter().map(|r| i64::from(*r) * MIN).collect(),
                    );
                }
            }
        }
        let mut site = Site {
            now_ms: START_MS,
            policy,
            catalog,
            hosts: Vec::new(),
            rows: BTreeMap::new(),
            wave_records: BTreeMap::new(),
            durations,
            holds: Vec::new(),
            brakes: Brakes::default(),
            resumes: BTreeMap::new(),
            run_started: BTreeMap::new(),
            epoch: 0,
            next_host: 0,
            next_freeze: 1,
            log: Vec::new(),
        };
        for h in &spec.hosts {
            site.add_host(h);
        }
        let n = site.hosts.len();
        site.policy.host_disable_autoupdate = match n {
            0 => Vec::new(),
            _ => p.legacy_disabled.iter().map(|i| site.hosts[usize::from(*i) % n].id.clone()).collect(),
        };
        for f in &spec.freezes {
            site.freeze(f);
        }
        site.log.clear();
        site
    }

    fn add_host(&mut self, spec: &HostSpec) {
        let id = format!("h{:03}", self.next_host);
        self.next_host += 1;
        let model = usize::from(spec.model) % self.catalog.len();
        let (model, vendor_name, model_name) = match self.catalog.get(model).filter(|_| !spec.unknown) {
            Some(m) => (Some(model), m.vendor.clone(), m.model.clone()),
            None => (None, VENDORS[0].to_string(), "X9".to_string()),
        };
        let mut labels = Labels::new();
        labels.insert("rack".into(), RACKS[usize::from(spec.rack) % RACKS.len()].into());
        labels.insert("power".into(), POWER[usize::from(spec.power) % POWER.len()].into());
        if spec.canary {
            labels.insert("canary".into(), "true".into());
        }
        let steady = if spec.assigned { HostState::Assigned } else { HostState::Ready };
        let request = spec.request.map(|(approved, exhausted)| Request {
            by: Writer::Before,
            requested_at_ms: self.now_ms,
            approved: approved || !spec.assigned,
            retries: if exhausted { RETRIES } else { 0 },
            exhausted,
            current: None,
        });
        let state = match (&request, spec.maintenance) {
            (Some(r), _) if r.approved => HostState::HostReprovision,
            (Some(_), _) => steady,
            (None, true) => HostState::Maintenance,
            (None, false) => steady,
        };
        if request.is_some() {
            self.run_started.insert(id.clone(), self.now_ms);
        }
        let host = Host {
            id: id.clone(),
            model,
            vendor_name,
            model_name,
            explored: match spec.explored {
                0 => Explored::Not,
                1 => Explored::Failed,
                _ => Explored::Ok,
            },
            versions: (0..3u8).map(|c| (component(c), spec.versions[usize::from(c)].to_string())).collect(),
            missing: spec.missing.map(component),
            unreported: spec.unreported.map(component).into_iter().collect(),
            instance: spec.assigned,
            state,
            auto_update: spec.auto_update,
            window: spec.window.map(|w| window_at(self.now_ms, w)),
            labels,
            request,
            health_report: spec.health_report,
            repair: false,
        };
        self.log.push(format!("add {id}"));
        self.hosts.push(host);
    }

    // -----------------------------------------------------------------------------------------
    // Facts (what the site database and the explorer say).

    pub fn host(&self, id: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.id == id)
    }

    /// The host's firmware status, as `gates::firmware_status` gives it for its report.
    pub fn firmware(&self, h: &Host) -> FirmwareStatus {
        match h.explored {
            Explored::Not => return FirmwareStatus::NotExplored,
            Explored::Failed => return FirmwareStatus::ExploreFailed { error: "BMC unreachable".into() },
            Explored::Ok => {}
        }
        let Some(m) = h.model.map(|m| &self.catalog[m]) else {
            return FirmwareStatus::NoCatalogEntry { vendor: h.vendor_name.clone(), model: h.model_name.clone() };
        };
        // One inventory member per component: unmatched, its version unknown, or compared.
        let matched = |c: &ComponentType| h.missing != Some(*c);
        let reported = |c: &ComponentType| !h.unreported.contains(c);
        let differing: Vec<ComponentType> = m
            .defaults
            .iter()
            .filter(|(c, v)| matched(c) && reported(c) && h.versions.get(*c) != Some(*v))
            .map(|(c, _)| *c)
            .collect();
        let unmatched: Vec<UnmatchedComponent> = h
            .missing
            .filter(|c| m.defaults.contains_key(c))
            .map(|c| UnmatchedComponent { component: c, matcher: format!("^{c}") })
            .into_iter()
            .collect();
        let not_reported: Vec<NotReportedComponent> = m
            .defaults
            .iter()
            .filter(|(c, _)| matched(c) && !reported(c))
            .map(|(c, v)| NotReportedComponent {
                component: *c,
                desired: v.clone(),
                members: vec![UnknownMember {
                    id: format!("{c}_0").to_uppercase(),
                    raw_version: String::new(),
                    reason: UnknownVersion::Missing,
                }],
            })
            .collect();
        match (differing.is_empty() && unmatched.is_empty(), not_reported.is_empty()) {
            (true, true) => FirmwareStatus::Compliant,
            (true, false) => FirmwareStatus::VersionNotReported { not_reported },
            (false, _) => FirmwareStatus::Drifted {
                explicit_start_needed: m.explicit_start_needed,
                differing,
                unmatched,
                not_reported,
            },
        }
    }

    /// The rollout targets the host would install (its differing components at their defaults).
    pub fn targets(&self, h: &Host) -> Vec<Target> {
        let (FirmwareStatus::Drifted { differing, .. }, Some(m)) =
            (self.firmware(h), h.model.map(|m| &self.catalog[m]))
        else {
            return Vec::new();
        };
        differing
            .iter()
            .map(|c| Target {
                vendor: m.vendor.clone(),
                model: m.model.clone(),
                component: *c,
                version: m.defaults[c].clone(),
            })
            .collect()
    }

    pub fn is_assigned(h: &Host) -> bool {
        h.state.is_assigned(h.instance)
    }

    pub fn unhealthy(h: &Host) -> bool {
        h.explored == Explored::Failed || h.health_report
    }

    /// Out of service for the fleet (S9): a request, or updating / in maintenance.
    pub fn in_flight(h: &Host) -> bool {
        h.request.is_some() || matches!(h.state, HostState::HostReprovision | HostState::Maintenance)
    }

    /// Needs hands-on repair: its retry budget is spent, or it was aborted to maintenance.
    pub fn in_repair(h: &Host) -> bool {
        h.request.as_ref().is_some_and(|r| r.exhausted) || h.repair
    }

    /// The attempts on record of `target`, by machine id.
    pub fn rows_of<'a>(&'a self, target: &'a Target) -> impl Iterator<Item = (&'a str, &'a Row)> + 'a {
        self.rows.iter().filter(move |((t, _), _)| t == target).map(|((_, m), r)| (m.as_str(), r))
    }

    /// Every target some host would install, on record, or paused, in target order.
    pub fn known_targets(&self) -> Vec<Target> {
        let mut all: BTreeSet<Target> = self.hosts.iter().flat_map(|h| self.targets(h)).collect();
        all.extend(self.rows.keys().map(|(t, _)| t.clone()));
        all.extend(self.wave_records.keys().cloned());
        all.extend(self.brakes.pauses.iter().map(|p| p.target.clone()));
        all.into_iter().collect()
    }

    // -----------------------------------------------------------------------------------------
    // The pass.

    /// The scheduler's view of the site (`site_view::assemble` and `Store::target_records`).
    pub fn view(&self) -> PassInput {
        let mut waits = Vec::new();
        let hosts = self
            .hosts
            .iter()
            .map(|h| {
                if let Some(r) = h.request.as_ref().filter(|r| !r.approved && Site::is_assigned(h)) {
                    waits.push(ApprovalWait { machine_id: h.id.clone(), since_ms: r.requested_at_ms });
                }
                HostView {
                    machine_id: h.id.clone(),
                    state: h.state,
                    assigned: Site::is_assigned(h),
                    auto_update: h.auto_update,
                    window: h.window,
                    has_request: h.request.is_some(),
                    exhausted: h.request.as_ref().is_some_and(|r| r.exhausted),
                    repair: h.repair,
                    unhealthy: Site::unhealthy(h),
                    firmware: self.firmware(h),
                    labels: h.labels.clone(),
                    targets: self.targets(h),
                }
            })
            .collect();
        PassInput {
            now_ms: self.now_ms,
            policy: self.policy.clone(),
            hosts,
            targets: self.records(),
            update_durations: self
                .durations
                .iter()
                .map(|((vendor, model, components), runs)| UpdateDurations {
                    vendor: vendor.clone(),
                    model: model.clone(),
                    components: components.clone(),
                    durations_ms: runs.clone(),
                })
                .collect(),
            approvals: ApprovalFacts { waits, holds: self.holds.clone() },
            brakes: self.brakes.clone(),
        }
    }

    /// `Store::target_records`: one record per target with attempts or a wave record, in the
    /// store's key order (vendor, model, component name, version).
    pub fn records(&self) -> Vec<TargetRecord> {
        let mut targets: Vec<&Target> = self.rows.keys().map(|(t, _)| t).chain(self.wave_records.keys()).collect();
        targets.sort_by(|a, b| {
            (&a.vendor, &a.model, a.component.to_string(), &a.version).cmp(&(
                &b.vendor,
                &b.model,
                b.component.to_string(),
                &b.version,
            ))
        });
        targets.dedup();
        targets
            .into_iter()
            .map(|t| {
                let rows: Vec<(&str, &Row)> = self.rows_of(t).collect();
                let mut failures: Vec<TargetFailure> = rows
                    .iter()
                    .filter_map(|(m, r)| {
                        r.failed_at_ms.map(|at_ms| TargetFailure {
                            machine_id: m.to_string(),
                            reason: "task Exception".into(),
                            at_ms,
                        })
                    })
                    .collect();
                failures.sort_by(|a, b| (a.at_ms, &a.machine_id).cmp(&(b.at_ms, &b.machine_id)));
                TargetRecord {
                    target: t.clone(),
                    attempted_hosts: count(rows.len()),
                    failures,
                    open: rows.iter().filter(|(_, r)| r.open()).map(|(m, _)| m.to_string()).collect(),
                    finished: rows.iter().filter(|(_, r)| r.finished_clean()).map(|(m, _)| m.to_string()).collect(),
                    last_done_ms: rows.iter().filter_map(|(_, r)| r.ended_ms()).max(),
                    last_attempt_ms: rows.iter().map(|(_, r)| r.attempted_at_ms).max(),
                    failed_last: count(rows.iter().filter(|(_, r)| r.failed_last()).count()),
                    waves: self.wave_records.get(t).copied(),
                }
            })
            .collect()
    }

    /// A pass's read (`manager_pass.rs`): the gate fence, then the view, then `gates::plan`.
    pub fn read(&self) -> Read {
        let input = self.view();
        let plan = plan(&input);
        Read { epoch: self.epoch, site: self.clone(), input, plan }
    }

    /// The pass's first write: its wave marks (`Store::target_waves_mark`), each only while the
    /// target has at least the attempts the pass read, and only growing what is recorded; all of
    /// them only while the gate fence is where the pass read it (`None`: it moved, nothing is
    /// written and the pass starts no host). Returns the targets whose mark was dropped (resumed
    /// since the read).
    pub fn write_marks(&mut self, read: &Read) -> Option<Vec<Target>> {
        if self.epoch != read.epoch {
            return None;
        }
        let mut dropped = Vec::new();
        for m in hostfw_model::gates::wave_marks(&read.input, &read.plan) {
            let attempts = count(self.rows_of(&m.target).count());
            if attempts < m.attempted_hosts {
                dropped.push(m.target);
                continue;
            }
            let r = self.wave_records.entry(m.target.clone()).or_insert(m.record);
            r.hosts = r.hosts.max(m.record.hosts);
            r.wave = r.wave.max(m.record.wave);
        }
        Some(dropped)
    }

    /// One start of a pass's plan: the request `Store::request_create_guarded` writes with the
    /// pass's `fence` and freezes honoured, checked in the order the store checks (the machine,
    /// maintenance, a request already there, freezes, failure-domain caps, the fence). After the
    /// fence refused once, the pass makes no more requests (`manager_pass.rs` stops there).
    pub fn write_start(&mut self, read: &Read, fence: &mut Fence, dropped: &[Target], id: &str, by: Writer) -> Outcome {
        if fence.moved {
            return Outcome::FenceMoved;
        }
        let resumed =
            read.input.hosts.iter().any(|h| h.machine_id == id && h.targets.iter().any(|t| dropped.contains(t)));
        if resumed {
            return Outcome::Resumed;
        }
        let Some(h) = self.host(id) else { return Outcome::Removed };
        if let Some(refused) = self.guard(h, true) {
            return refused;
        }
        if self.epoch != fence.expected {
            fence.moved = true;
            return Outcome::FenceMoved;
        }
        self.create_request(id, by);
        fence.expected += 1;
        Outcome::Created
    }

    /// A whole pass with nothing racing it: read, then every write.
    pub fn pass(&mut self, by: Writer) {
        let read = self.read();
        let marked = self.write_marks(&read);
        let mut fence = Fence::new(&read);
        fence.moved = marked.is_none();
        let dropped = marked.unwrap_or_default();
        for id in &read.plan.start {
            self.write_start(&read, &mut fence, &dropped, id, by);
        }
    }

    /// A new request (whoever writes it: the guards are the caller's). It ends the host's
    /// approval hold and moves the gate fence, like `request_create_guarded`.
    fn create_request(&mut self, id: &str, by: Writer) {
        let now = self.now_ms;
        let Some(h) = self.hosts.iter_mut().find(|h| h.id == id) else { return };
        let assigned = Site::is_assigned(h);
        h.request = Some(Request {
            by,
            requested_at_ms: now,
            approved: !assigned,
            retries: 0,
            exhausted: false,
            current: None,
        });
        self.run_started.insert(id.to_string(), now);
        self.holds.retain(|x| x.machine_id != id);
        self.epoch += 1;
    }

    /// What `Store::request_create_guarded` refuses before it writes, the fence aside: a host in
    /// maintenance, one with a request, one a freeze in force covers (with `honour_freezes`: the
    /// machine's own vendor and model, whatever its targets), one in a failure domain at its cap.
    fn guard(&self, h: &Host, honour_freezes: bool) -> Option<Outcome> {
        if h.state == HostState::Maintenance {
            return Some(Outcome::Maintenance);
        }
        if h.request.is_some() {
            return Some(Outcome::Requested);
        }
        let frozen = covering(&self.brakes.freezes, Some(&h.vendor_name), Some(&h.model_name), &h.labels);
        if let Some(f) = frozen.filter(|_| honour_freezes) {
            return Some(Outcome::Frozen(f.id));
        }
        let (key, value) = self.cap_full(h)?;
        Some(Outcome::LabelCap(key, value))
    }

    /// The failure domain of `h` that is at its cap now (`labels::cap_check_in`: the in-flight
    /// hosts sharing the value of a capped key), if any.
    pub fn cap_full(&self, h: &Host) -> Option<(String, String)> {
        self.policy.label_caps.iter().find_map(|(key, limit)| {
            let value = h.labels.get(key)?;
            let held = self.hosts.iter().filter(|o| Site::in_flight(o) && o.labels.get(key) == Some(value)).count();
            (count(held) >= *limit).then(|| (key.clone(), value.clone()))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Events.

    fn pick(&self, i: u8) -> Option<usize> {
        (!self.hosts.is_empty()).then(|| usize::from(i) % self.hosts.len())
    }

    /// Applies one event (refused ones change nothing, as the real commands refuse them). Those
    /// that can tighten a gate for a host not yet started move the gate fence when they change
    /// something. `Event::Pass` runs a whole pass here (`properties::evolve` runs it itself, to
    /// check it).
    pub fn apply(&mut self, event: &Event) {
        self.log.push(format!("{event:?}"));
        match event {
            Event::AddHost(spec) => {
                let spec = HostSpec { request: None, ..spec.clone() };
                self.add_host(&spec);
            }
            Event::RemoveHost(i) => {
                if let Some(i) = self.pick(*i).filter(|&i| self.hosts[i].request.is_none()) {
                    let id = self.hosts.remove(i).id;
                    self.holds.retain(|h| h.machine_id != id);
                }
            }
            Event::Explore(i, ok) => {
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].explored = if *ok { Explored::Ok } else { Explored::Failed };
                }
            }
            Event::Progress(i) => {
                if let Some(i) = self.pick(*i) {
                    self.progress(i);
                }
            }
            Event::Tick => {
                for i in 0..self.hosts.len() {
                    self.progress(i);
                }
            }
            Event::Fail(i) => {
                if let Some(i) = self.pick(*i) {
                    self.fail(i);
                }
            }
            Event::Abort(i, to_maintenance) => {
                if let Some(i) = self.pick(*i).filter(|&i| self.hosts[i].request.is_some()) {
                    self.end_run(i, *to_maintenance);
                }
            }
            Event::Reset(i) => {
                if let Some(r) = self.pick(*i).and_then(|i| self.hosts[i].request.as_mut()) {
                    r.retries = 0;
                    r.exhausted = false;
                    r.current = None;
                }
            }
            Event::Clear(i) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    if h.request.as_ref().is_some_and(|r| !r.approved) {
                        h.request = None;
                        self.run_started.remove(&h.id);
                    }
                }
            }
            Event::Maintenance(i, enter) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    match (enter, h.state) {
                        (true, HostState::Ready | HostState::Assigned) if h.request.is_none() => {
                            h.state = HostState::Maintenance;
                            self.epoch += 1;
                        }
                        (false, HostState::Maintenance) => {
                            h.state = if h.instance { HostState::Assigned } else { HostState::Ready };
                            h.repair = false;
                        }
                        _ => {}
                    }
                }
            }
            Event::Window(i, w) => {
                let now = self.now_ms;
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].window = w.map(|w| window_at(now, w));
                    self.epoch += 1;
                }
            }
            Event::Health(i, on) => {
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].health_report = *on;
                }
            }
            Event::Assign(i, on) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    if h.request.is_none() && matches!(h.state, HostState::Ready | HostState::Assigned) {
                        h.instance = *on;
                        h.state = if *on { HostState::Assigned } else { HostState::Ready };
                    }
                }
            }
            Event::AutoUpdate(i, o) => {
                if let Some(i) = self.pick(*i) {
                    self.hosts[i].auto_update = *o;
                }
            }
            Event::CatalogDefault(m, c, v) => {
                if let Some(m) = self.catalog.get_mut(usize::from(*m)) {
                    if let Some(d) = m.defaults.get_mut(&component(*c)) {
                        // A new catalog version (`firmware_config`), whatever it changed.
                        *d = v.to_string();
                        self.epoch += 1;
                    }
                }
            }
            Event::Freeze(f) => self.freeze(f),
            Event::Unfreeze(i) => {
                if !self.brakes.freezes.is_empty() {
                    let i = usize::from(*i) % self.brakes.freezes.len();
                    self.brakes.freezes.remove(i);
                }
            }
            Event::Pause(i) => {
                let targets = self.pausable();
                if let Some(t) = targets.get(usize::from(*i) % targets.len().max(1)) {
                    if !self.brakes.pauses.iter().any(|p| &p.target == t) {
                        self.brakes.pauses.push(OperatorPause {
                            target: t.clone(),
                            by: "olga".into(),
                            reason: "watching".into(),
                            at_ms: self.now_ms,
                        });
                        self.brakes.pauses.sort_by(|a, b| a.target.cmp(&b.target));
                        self.epoch += 1;
                    }
                }
            }
            Event::Resume(i) => {
                let targets = self.resumable();
                if let Some(t) = targets.get(usize::from(*i) % targets.len().max(1)).cloned() {
                    self.rows.retain(|(rt, _), _| rt != &t);
                    self.wave_records.remove(&t);
                    self.brakes.pauses.retain(|p| p.target != t);
                    *self.resumes.entry(t).or_default() += 1;
                    self.epoch += 1;
                }
            }
            Event::Direct(i) => {
                if let Some(i) = self.pick(*i) {
                    self.direct(i);
                }
            }
            Event::DirectIgnoringGates(i) => {
                if let Some(i) = self.pick(*i) {
                    self.direct_ignoring_gates(i);
                }
            }
            Event::Pass { .. } => self.pass(Writer::Pass),
            Event::VersionReported(i, c, reported) => {
                if let Some(i) = self.pick(*i) {
                    let h = &mut self.hosts[i];
                    if *reported {
                        h.unreported.remove(&component(*c));
                    } else {
                        h.unreported.insert(component(*c));
                    }
                }
            }
            Event::DeadlineSkip(i) => {
                if let Some(i) = self.pick(*i) {
                    self.deadline_skip(i);
                }
            }
            Event::Limits(a, p) => self.policy.limits = limits(*a, *p),
        }
    }

    /// The targets `Event::Pause` picks from: those some host would install, in target order.
    pub fn pausable(&self) -> Vec<Target> {
        let targets: BTreeSet<Target> = self.hosts.iter().flat_map(|h| self.targets(h)).collect();
        targets.into_iter().collect()
    }

    /// The targets `Event::Resume` picks from: on record or paused, in target order.
    pub fn resumable(&self) -> Vec<Target> {
        let mut targets: BTreeSet<Target> = self.rows.keys().map(|(t, _)| t.clone()).collect();
        targets.extend(self.wave_records.keys().cloned());
        targets.extend(self.brakes.pauses.iter().map(|p| p.target.clone()));
        targets.into_iter().collect()
    }

    /// Minutes since the scenario began.
    pub fn minutes(&self) -> i64 {
        (self.now_ms - START_MS) / MIN
    }

    /// Moves the clock.
    pub fn advance(&mut self, minutes: u16) {
        self.now_ms += i64::from(minutes) * MIN;
    }

    fn freeze(&mut self, f: &FreezeSpec) {
        let case = |s: &str| if f.other_case { s.to_uppercase() } else { s.to_string() };
        let scope = match f.kind % 3 {
            0 => FreezeScope::Site,
            1 => {
                let Some(m) = self.catalog.get(usize::from(f.model) % self.catalog.len().max(1)) else { return };
                FreezeScope::Model { vendor: f.with_vendor.then(|| case(&m.vendor)), model: case(&m.model) }
            }
            _ => {
                let l = usize::from(f.label);
                let (key, value) = if l < RACKS.len() {
                    ("rack", RACKS[l])
                } else if l < RACKS.len() + POWER.len() {
                    ("power", POWER[l - RACKS.len()])
                } else {
                    ("canary", "true")
                };
                FreezeScope::Label { key: key.into(), value: value.into() }
            }
        };
        self.brakes.freezes.push(Freeze {
            id: self.next_freeze,
            scope,
            reason: "change freeze".into(),
            drain: f.drain,
            by: "alice".into(),
            at_ms: self.now_ms,
        });
        self.next_freeze += 1;
        self.epoch += 1;
    }

    /// The host workflow's next step.
    fn progress(&mut self, i: usize) {
        let now = self.now_ms;
        let next = self.targets(&self.hosts[i]).into_iter().next();
        let h = &mut self.hosts[i];
        let Some(r) = h.request.as_mut() else { return };
        if r.exhausted {
            return;
        }
        match h.explored {
            // The workflow's inventory refresh fails: it waits and tries again.
            Explored::Failed => return,
            // Its first inventory read explores the host.
            Explored::Not => {
                h.explored = Explored::Ok;
                return;
            }
            Explored::Ok => {}
        }
        if !r.approved {
            // The tenant approves (or the autoreboot period begins).
            r.approved = true;
            h.state = HostState::HostReprovision;
            return;
        }
        if h.state != HostState::HostReprovision {
            // Protect: the health marker and the update state.
            h.state = HostState::HostReprovision;
            return;
        }
        match (r.current.take(), next) {
            // Installed and verified.
            (Some(t), _) => {
                h.versions.insert(t.component, t.version.clone());
            }
            // Plan the next component: its attempt goes on record.
            (None, Some(t)) => {
                r.current = Some(t.clone());
                let key = (t, h.id.clone());
                if !self.rows.contains_key(&key) {
                    // One more attempted host: it may spend the target's error budget.
                    self.epoch += 1;
                }
                let row = self.rows.entry(key).or_insert(Row {
                    attempted_at_ms: now,
                    failed_at_ms: None,
                    finished_at_ms: None,
                });
                // After the restore that ended the last attempt (an abort, then a new request in
                // the same step): the database's clock has moved on since, so the row reads open.
                row.attempted_at_ms = if row.finished_at_ms == Some(now) { now + 1 } else { now };
            }
            // Nothing left to install: restore.
            (None, None) => self.end_run(i, false),
        }
    }

    fn fail(&mut self, i: usize) {
        let now = self.now_ms;
        let h = &mut self.hosts[i];
        let Some(r) = h.request.as_mut() else { return };
        let Some(t) = r.current.take().filter(|_| !r.exhausted) else { return };
        if let Some(row) = self.rows.get_mut(&(t, h.id.clone())) {
            if row.failed_at_ms.is_none_or(|f| f < row.attempted_at_ms) {
                // A failure on record may spend the target's budget or hold its wave.
                row.failed_at_ms = Some(now);
                self.epoch += 1;
            }
        }
        r.retries += 1;
        r.exhausted = r.retries >= RETRIES;
    }

    /// The run ends: restore (or an abort, to maintenance for repair). Every open attempt ends
    /// first, then the request goes; a run that ended well is a duration for window fit.
    fn end_run(&mut self, i: usize, to_maintenance: bool) {
        let now = self.now_ms;
        let id = self.hosts[i].id.clone();
        // `Store::target_finish` moves the gate fence: a run that ended moves window fit's past
        // durations.
        self.epoch += 1;
        let mut components = Vec::new();
        let started = self.run_started.remove(&id);
        for ((t, m), row) in self.rows.iter_mut() {
            if *m == id && row.finished_at_ms.is_none_or(|f| f < row.attempted_at_ms) {
                row.finished_at_ms = Some(now);
                if started.is_some_and(|s| row.attempted_at_ms >= s) && !row.failed_last() {
                    components.push(t.component);
                }
            }
        }
        let h = &mut self.hosts[i];
        let steady = if h.instance { HostState::Assigned } else { HostState::Ready };
        if to_maintenance {
            h.state = HostState::Maintenance;
            h.repair = true;
        } else {
            h.state = steady;
        }
        h.request = None;
        if let (Some(start), false, Some(m)) = (started, to_maintenance || components.is_empty(), h.model) {
            components.sort_by_key(|c| c.to_string());
            components.dedup();
            let m = &self.catalog[m];
            let runs = self.durations.entry((m.vendor.clone(), m.model.clone(), components)).or_default();
            runs.push(now - start);
            if runs.len() > 100 {
                runs.remove(0);
            }
        }
    }

    /// `host reprovision set`, refused the way the CLI (the rollout gates from a fresh plan) and
    /// the store (its guard, freezes honoured) refuse it. Its check and its write are one step
    /// here: it never races itself.
    fn direct(&mut self, i: usize) {
        let h = &self.hosts[i];
        if self.guard(h, true).is_some() {
            return;
        }
        // The rollout gates (freezes, pauses, full waves) from a fresh plan.
        let input = self.view();
        let p = plan(&input);
        if !rollout_holds(&p, &input.hosts[i]).is_empty() {
            return;
        }
        let id = h.id.clone();
        self.create_request(&id, Writer::Direct);
    }

    /// `host reprovision set --ignore-rollout-gates`: the store's guard only (maintenance, a
    /// request already there, failure-domain caps; freezes not honoured).
    fn direct_ignoring_gates(&mut self, i: usize) {
        let h = &self.hosts[i];
        if self.guard(h, false).is_some() {
            return;
        }
        let id = h.id.clone();
        self.create_request(&id, Writer::DirectIgnoringGates);
    }

    /// The approval deadline of a waiting request passed under `skip`: given up, and the host is
    /// held until its next window (`gates::hold_until`).
    fn deadline_skip(&mut self, i: usize) {
        let deadline: ApprovalDeadline = self.policy.approval_deadline;
        let now = self.now_ms;
        let h = &mut self.hosts[i];
        let Some(r) = h.request.as_ref() else { return };
        let due = deadline.deadline_ms(r.requested_at_ms).is_some_and(|d| d <= now);
        if r.approved || deadline.policy != DeadlinePolicy::Skip || !due {
            return;
        }
        h.request = None;
        self.run_started.remove(&h.id);
        let until_ms = hold_until(now, h.window, None, deadline.after_ms);
        self.holds.retain(|x| x.machine_id != h.id);
        self.holds.push(ApprovalHold { machine_id: h.id.clone(), skipped_at_ms: now, until_ms });
    }
}

pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
