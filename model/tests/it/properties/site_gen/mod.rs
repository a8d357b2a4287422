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
//!
//! By concept: `scenario` (specs, events, steps), `strategies` (how proptest builds them), `site`
//! (the simulated site and its facts), `pass` (the scheduler's read and fenced writes) and
//! `events` (what happens between passes).

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

mod events;
mod pass;
mod scenario;
mod site;
mod strategies;

pub use scenario::*;
pub use site::*;
pub use strategies::*;

pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
