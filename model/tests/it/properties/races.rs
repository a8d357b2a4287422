//! Races between a pass's read and its writes (`site_gen`'s races and gate fence: another pass,
//! direct requests with or without `--ignore-rollout-gates`, maintenance, brakes, failures,
//! host workflows and the explorer landing among the pass's requests), and components whose
//! version is not reported.
//!
//! Owns four properties, checked on what was written ([`Invariant::after`], [`Writes`]), not on
//! what the plan meant to write:
//! - the gates in force when each request is written: no host a pass (or a gated direct request)
//!   starts is, at that moment, in maintenance, frozen, of a paused target, in a full failure
//!   domain, or outside an update window it needs (or one it would likely overrun);
//! - the ceiling: two passes together never take the hosts in flight past it; only the
//!   operator's acts in the race may (direct requests, maintenance entries, resets);
//! - the canary waves: the requests on a target between a pass's read and its last request never
//!   exceed the room its open wave had in that pass's plan, and each request a pass writes finds
//!   room in a plan made when it is written (hosts an operator started with
//!   `--ignore-rollout-gates` before the read are in that room; one started during the writes
//!   stops them);
//! - versions not reported: a pass starts a host only for components it reports at another
//!   version than the catalog's, never for one whose version it does not report.
//!
//! Who wrote what comes from the driver's record ([`Writes::created`], [`Writer`]); the facts
//! (freezes, pauses, in flight, caps, versions) from the sites it recorded.

use hostfw_model::gates::{NextWave, Target};
use hostfw_model::{plan, ComponentType, HostState, PassInput, Plan};
use proptest::prelude::*;

use super::brakes::covers;
use super::ceiling::{expected_ceiling, expected_in_flight};
use super::site_gen::{
    count, scenario, Event, Explored, Focus, Host, HostSpec, ModelSpec, Outcome, PolicySpec, Scenario, Site, SiteSpec,
    Step, Writer,
};
use super::waves::WavesHold;
use super::windows::{explicit, likely_duration};
use super::{config, evolve, regressions, Created, Invariant, PassWrites, Raced, Writes};

/// Written by a writer that honours the rollout gates: a pass, or a direct request without
/// `--ignore-rollout-gates`.
fn gated(by: Writer) -> bool {
    matches!(by, Writer::Pass | Writer::RacingPass | Writer::Direct)
}

/// The components of `host`'s catalog model it reports at a version other than the default:
/// what a pass may start it for. None for a host not explored (or whose exploration failed) or
/// of a model the catalog does not know.
pub fn reported_drift(site: &Site, host: &Host) -> Vec<ComponentType> {
    let Some(m) = host.model.filter(|_| host.explored == Explored::Ok).map(|m| &site.catalog[m]) else {
        return Vec::new();
    };
    m.defaults
        .iter()
        .filter(|(c, v)| {
            host.missing != Some(**c) && !host.unreported.contains(*c) && host.versions.get(*c) != Some(*v)
        })
        .map(|(c, _)| *c)
        .collect()
}

/// The components of `host`'s catalog model whose (matched) inventory member reports no version,
/// in component order.
pub fn unreported(site: &Site, host: &Host) -> Vec<ComponentType> {
    let Some(m) = host.model.filter(|_| host.explored == Explored::Ok).map(|m| &site.catalog[m]) else {
        return Vec::new();
    };
    m.defaults.keys().filter(|c| host.missing != Some(**c) && host.unreported.contains(*c)).copied().collect()
}

/// `at` with each host's exploration (explored, versions reported) as `read` had it: the gate
/// fence does not cover the explorer's findings, so a host that gains a target meanwhile (its
/// exploration heals, a version is reported again) is not a change the writer had to see.
fn explored_as_read(at: &Site, read: &Site) -> Site {
    let mut site = at.clone();
    for h in &mut site.hosts {
        if let Some(r) = read.host(&h.id) {
            h.explored = r.explored;
            h.unreported = r.unreported.clone();
        }
    }
    site
}

/// The targets `c`'s host was started for: those its writer read (a direct request reads and
/// writes at once), and those it has when the request is written with the explorer's findings as
/// read (a catalog change since the read moves them; the fence covers it).
fn started_for(writes: &Writes, c: &Created) -> (Site, Vec<Target>) {
    let pass = c.pass.map(|p| &writes.passes[p]);
    let at = match pass {
        Some(p) => explored_as_read(&c.at, &p.read.site),
        None => c.at.clone(),
    };
    let mut targets: Vec<Target> = at.host(&c.id).map(|h| at.targets(h)).unwrap_or_default();
    let seen = pass.and_then(|p| p.read.input.hosts.iter().find(|h| h.machine_id == c.id));
    for t in seen.map(|h| h.targets.clone()).unwrap_or_default() {
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    (at, targets)
}

/// The hosts `pass` wrote a request for, in order.
fn created_by(pass: &PassWrites) -> impl Iterator<Item = &str> + '_ {
    pass.outcomes.iter().filter(|(_, o)| *o == Outcome::Created).map(|(id, _)| id.as_str())
}

// ---------------------------------------------------------------------------------------------
// The gates in force when a request is written.

/// Why `id` should not have been started on `at` (the site as the store saw it), if it should
/// not: in maintenance, covered by a freeze, of a target an operator paused or that a plan made
/// from `at` holds (error budget spent, or a canary wave that ended over the budget's share), in
/// a failure domain at its cap, or (explicit start, for a pass: a direct request bypasses
/// windows) outside its update window or in one its update would likely overrun (window fit, as
/// the windows property computes it). `targets` are the ones its writer started it for.
fn held_when_written(at: &Site, id: &str, by: Writer, targets: &[Target]) -> Option<String> {
    let Some(h) = at.host(id) else { return Some("is not a host of the site".into()) };
    if h.state == HostState::Maintenance {
        return Some("is in maintenance".into());
    }
    if let Some(f) = at.brakes.freezes.iter().find(|f| covers(at, f, h)) {
        return Some(format!("is frozen by freeze {} on {}", f.id, f.scope));
    }
    if let Some(p) = at.brakes.pauses.iter().find(|p| targets.contains(&p.target)) {
        return Some(format!("would install {}, paused by an operator", p.target));
    }
    let now = plan(&at.view());
    if let Some(p) = now.paused.iter().find(|p| targets.contains(&p.target)) {
        return Some(format!("would install {}, paused: {}", p.target, p.rule));
    }
    for (key, limit) in &at.policy.label_caps {
        let Some(value) = h.labels.get(key) else { continue };
        let held = count(at.hosts.iter().filter(|o| Site::in_flight(o) && o.labels.get(key) == Some(value)).count());
        if held >= *limit {
            return Some(format!("is labelled {key}={value}, a domain with {held} hosts in flight at its cap {limit}"));
        }
    }
    if by != Writer::Direct && explicit(at, h) {
        let now = at.now_ms;
        let Some(w) = h.window.filter(|w| w.contains(now)) else {
            return Some(format!("needs an explicit start and its window {:?} is not open", h.window));
        };
        if let Some(p90) = likely_duration(at, h).filter(|p90| *p90 > w.end_ms - now) {
            return Some(format!(
                "has {} min left in its window and its update's p90 is {} min",
                (w.end_ms - now) / 60_000,
                p90 / 60_000
            ));
        }
    }
    None
}

struct GatesWhenWritten;

impl Invariant for GatesWhenWritten {
    fn check(&mut self, _site: &Site, _input: &PassInput, _plan: &Plan) -> Result<(), String> {
        Ok(())
    }

    /// Checked on the site when the request is written with the explorer's findings as the writer
    /// read them, for the targets it started the host for ([`started_for`]): exploration results
    /// do not move the fence (a host whose version stops being reported may change its window
    /// fit, one reported again may add a target), and pauses stop new starts, not the components
    /// a started host installs.
    fn after(&mut self, writes: &Writes) -> Result<(), String> {
        for (i, c) in writes.created.iter().enumerate().filter(|(_, c)| gated(c.by)) {
            let (at, targets) = started_for(writes, c);
            if let Some(why) = held_when_written(&at, &c.id, c.by, &targets) {
                return Err(format!("request {i} ({} by {:?}) was written while the host {why}", c.id, c.by));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The ceiling.

/// The hosts that came to hold a slot of the ceiling through the race's events other than
/// passes: the operator's acts that bypass the ceiling (a direct request with or without the
/// rollout gates, a host entering maintenance or registered in it, a reset that puts a host in
/// repair back to work while repair is set apart). Each event counts what it added.
fn operator_slots(writes: &Writes) -> Vec<(&Event, u32)> {
    let added = |r: &Raced| expected_in_flight(&r.after).saturating_sub(expected_in_flight(&r.before));
    writes.race.iter().map(|r| (&r.event, added(r))).filter(|(_, n)| *n > 0).collect()
}

struct CeilingWhenWritten;

impl Invariant for CeilingWhenWritten {
    fn check(&mut self, _site: &Site, _input: &PassInput, _plan: &Plan) -> Result<(), String> {
        Ok(())
    }

    fn after(&mut self, writes: &Writes) -> Result<(), String> {
        let read = &writes.passes[0].read.site;
        // A racing pass that read the site later may have read a larger ceiling (a config reload,
        // hosts joining or healing meanwhile): the largest any writing pass read.
        let ceiling = writes.passes.iter().map(|p| expected_ceiling(&p.read.site)).max().unwrap_or(0);
        let in_flight = expected_in_flight(read);
        let acts = operator_slots(writes);
        let added: u32 = acts.iter().map(|(_, n)| n).sum();
        let after = expected_in_flight(&writes.after);
        if after > ceiling.max(in_flight) + added {
            return Err(format!(
                "{after} hosts in flight after the writes: the pass read {in_flight} under a ceiling of {ceiling} \
                 (the largest its passes read), and the operator's acts in its race added {added}: {acts:?}"
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The canary waves.

struct WavesWhenWritten;

impl WavesWhenWritten {
    /// Per pass and target: the requests written on it between the pass's read and its last
    /// request, counted as that pass saw their hosts' targets, fit the room of its open wave
    /// (`WaveStatus::room`, which the waves property checks against the rules). An operator's
    /// request before the read is in that room; one during the writes stops them (the fence), so
    /// it counts here too, `--ignore-rollout-gates` or not.
    fn rooms_read(writes: &Writes) -> Result<(), String> {
        for (p, pass) in writes.passes.iter().enumerate() {
            let window = &writes.created[pass.from..pass.to];
            for w in pass.read.plan.waves.iter().filter(|w| w.next != NextWave::None) {
                let on_target: Vec<&str> = window
                    .iter()
                    .filter(|c| {
                        let seen = pass.read.input.hosts.iter().find(|h| h.machine_id == c.id);
                        match seen {
                            Some(h) => h.targets.contains(&w.target),
                            None => c.at.host(&c.id).is_some_and(|h| c.at.targets(h).contains(&w.target)),
                        }
                    })
                    .map(|c| c.id.as_str())
                    .collect();
                if count(on_target.len()) > w.room() {
                    return Err(format!(
                        "pass {p} ({:?}) read wave {} of {} of {} with room for {} more (allowed {}, started {}), \
                         but {} requests on it were written before its last: {on_target:?}",
                        pass.by,
                        w.wave,
                        w.waves,
                        w.target,
                        w.room(),
                        w.allowed,
                        w.started,
                        on_target.len()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Each request a pass writes finds room, in a plan made when it is written, in the open
    /// wave of every target the pass started the host for ([`started_for`]: a resume since the
    /// read starts the waves again from the first, another writer may have filled the room), the
    /// explorer's findings taken as the pass read them ([`explored_as_read`]).
    fn rooms_when_written(writes: &Writes) -> Result<(), String> {
        for (i, c) in writes.created.iter().enumerate().filter(|(_, c)| c.pass.is_some()) {
            let (at, targets) = started_for(writes, c);
            let now = plan(&at.view());
            if let Some(w) = now.waves.iter().find(|w| targets.contains(&w.target) && w.room() == 0) {
                return Err(format!(
                    "request {i} ({} by {:?}) was written into wave {} of {} of {}, full when written \
                     (allowed {}, started {}, {})",
                    c.id, c.by, w.wave, w.waves, w.target, w.allowed, w.started, w.next
                ));
            }
        }
        Ok(())
    }
}

impl Invariant for WavesWhenWritten {
    fn check(&mut self, _site: &Site, _input: &PassInput, _plan: &Plan) -> Result<(), String> {
        Ok(())
    }

    fn after(&mut self, writes: &Writes) -> Result<(), String> {
        WavesWhenWritten::rooms_read(writes)?;
        WavesWhenWritten::rooms_when_written(writes)
    }
}

// ---------------------------------------------------------------------------------------------
// Versions not reported.

struct OnlyReportedDrift;

impl Invariant for OnlyReportedDrift {
    fn check(&mut self, _site: &Site, _input: &PassInput, _plan: &Plan) -> Result<(), String> {
        Ok(())
    }

    /// Every host a pass wrote a request for has, as that pass read it, a component it reports
    /// at another version than the default, and every target the pass saw it take is such a
    /// component (none it does not report).
    fn after(&mut self, writes: &Writes) -> Result<(), String> {
        for pass in &writes.passes {
            let site = &pass.read.site;
            for id in created_by(pass) {
                let Some(h) = site.host(id) else { return Err(format!("{id} started but was not a host as read")) };
                let drift = reported_drift(site, h);
                let unknown = unreported(site, h);
                if drift.is_empty() {
                    return Err(format!(
                        "{id} started by {:?} with no reported version differing (not reported: {unknown:?})",
                        pass.by
                    ));
                }
                let seen = pass.read.input.hosts.iter().find(|v| v.machine_id == id);
                let targets: Vec<ComponentType> =
                    seen.map(|v| v.targets.iter().map(|t| t.component).collect()).unwrap_or_default();
                if let Some(c) = targets.iter().find(|c| !drift.contains(c)) {
                    return Err(format!(
                        "{id} started by {:?} to install {c}, which it does not report at another version \
                         (differing {drift:?}, not reported {unknown:?})",
                        pass.by
                    ));
                }
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("races_gates")))]

    /// The gate fence (`store/src/gate_fence.rs`: "no host starts from a view made stale
    /// meanwhile") and the store's guard (`request_create_guarded`: maintenance, freezes, caps in
    /// the request's own transaction): whatever lands between a pass's read and its requests,
    /// every host a pass or a gated direct request starts is, when its request is written, out of
    /// maintenance, unfrozen, of no target an operator or the error budget paused, in failure
    /// domains under their caps, and (explicit start) inside an update window it fits.
    #[test]
    fn every_host_a_pass_starts_is_clear_of_the_gates_in_force_when_its_request_is_written(
        scenario in scenario(Focus::Races)
    ) {
        evolve(&scenario, &mut GatesWhenWritten)?;
    }
}

proptest! {
    #![proptest_config(config(regressions!("races_ceiling")))]

    /// Seed "Site capacity" under races: the hosts in flight after a pass's writes are at most the
    /// ceiling (or the hosts in flight the pass read, if more) plus what the operator's acts in
    /// its race added (direct requests, maintenance entries: they bypass the ceiling). A racing
    /// pass is no operator: two passes together never take the site past the ceiling, even when
    /// the second read the site as the first did.
    #[test]
    fn two_passes_together_never_take_the_hosts_in_flight_past_the_ceiling(scenario in scenario(Focus::Races)) {
        evolve(&scenario, &mut CeilingWhenWritten)?;
    }
}

proptest! {
    #![proptest_config(config(regressions!("races_waves")))]

    /// `gates::waves` under races: a wave's room is what the plan that read it may fill, and no
    /// other pass or gated direct request fills it meanwhile (the gate fence refuses the later
    /// writer). Only `--ignore-rollout-gates` puts hosts past a wave's room, and those are the
    /// operator's.
    #[test]
    fn no_pass_fills_a_canary_wave_past_the_room_it_read(scenario in scenario(Focus::Races)) {
        evolve(&scenario, &mut WavesWhenWritten)?;
    }
}

proptest! {
    #![proptest_config(config(regressions!("races_unreported")))]

    /// `gates::firmware` (`VersionNotReported`: "neither drifted nor compliant, never started")
    /// and `host_gates::firmware_gate` ("version-not-reported-only hosts are reported, not
    /// started"): a pass starts a host only for components it reports at another version, while
    /// components stop and start reporting their versions.
    #[test]
    fn no_pass_starts_a_host_for_a_component_whose_version_is_not_reported(scenario in scenario(Focus::Races)) {
        evolve(&scenario, &mut OnlyReportedDrift)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Races the first gate fence did not cover, found by these properties and kept as regression
// cases: the store now holds the fence for wave marks and moves it on a host's first attempt of a
// target and on a run's end.

/// A host of catalog model 0 (bmc at "2", the default "1"), explored, unassigned.
fn drifted(auto_update: Option<bool>) -> HostSpec {
    HostSpec {
        model: 0,
        unknown: false,
        explored: 2,
        versions: [2, 1, 1],
        missing: None,
        unreported: None,
        assigned: false,
        auto_update,
        window: None,
        rack: 0,
        power: 0,
        canary: false,
        maintenance: false,
        request: None,
        health_report: false,
    }
}

/// Automatic updates on, no ceiling (`absolute` 0), no caps, no waves, no budget.
fn quiet_policy() -> PolicySpec {
    PolicySpec {
        autoupdate: true,
        manual_tagging: false,
        legacy_disabled: Vec::new(),
        absolute: Some(0),
        percent: None,
        rack_cap: None,
        power_cap: None,
        budget: (0, 0, 0),
        waves: 0,
        soak_min: 0,
        window_fit_min_samples: 0,
        deadline_min: 0,
        deadline_skip: false,
        max_hosts_in_repair: None,
    }
}

/// One model with only a bmc component (default "1").
fn bmc_model(explicit_start_needed: bool) -> ModelSpec {
    ModelSpec { vendor: 0, explicit_start_needed, components: 1, defaults: [1, 1, 1] }
}

/// A `hostfw budget resume` lands between a pass's read and its wave marks. The pass read the
/// target with hosts started (a direct request) but no attempt on record, so its mark (the wave
/// reached: 2 of `["1", "100%"]`) passes the store's only guard (at least the attempts read: 0)
/// and was written after the resume cleared the record: the waves did not start again from the
/// first, the next pass started from the last. Found by the waves property on a random seed; the
/// racing pass only puts a wave record on file for the resume to clear. Fixed: the marks are
/// written only under the fence the pass read (`Store::target_waves_mark`), which the resume moved.
#[test]
fn a_resume_between_a_pass_read_and_its_wave_marks_starts_the_waves_again() {
    use Event::*;
    let site = SiteSpec {
        policy: PolicySpec { waves: 1, ..quiet_policy() },
        models: vec![bmc_model(false)],
        hosts: vec![drifted(None)],
        durations: vec![Default::default()],
        freezes: Vec::new(),
    };
    let steps = vec![
        // The race lands before the pass's marks (race_at 0).
        Step {
            events: vec![Direct(0)],
            ticks: 0,
            advance_min: 1,
            race: vec![Pass { stale: false }, Resume(0)],
            race_at: 0,
        },
        Step { events: vec![Explore(0, false)], ticks: 0, advance_min: 1, race: Vec::new(), race_at: 0 },
        Step {
            events: vec![Explore(0, true), Abort(0, false)],
            ticks: 0,
            advance_min: 1,
            race: Vec::new(),
            race_at: 0,
        },
    ];
    evolve(&Scenario { site, steps }, &mut WavesHold::default()).map_err(|e| e.to_string()).unwrap();
}

/// With `error_budget_failed_percent` = 20 and `error_budget_min_hosts` = 3, the bmc target has
/// 2 attempts and 1 failure when the pass reads (not paused: fewer than 3 attempted), and a host
/// already updating records the third attempt while the pass writes: 1 of 3 failed, the budget
/// is spent. `Store::target_attempt` did not move the gate fence, so the pass's request for the
/// fourth host was written: a host started on a paused target. Fixed: a host's first attempt of a
/// target moves the fence.
#[test]
fn an_attempt_that_spends_an_error_budget_stops_a_pass_that_read_before_it() {
    use Event::*;
    let site = SiteSpec {
        policy: PolicySpec { budget: (0, 20, 3), ..quiet_policy() },
        models: vec![bmc_model(false)],
        // h000..h002 are updated by direct requests (automatic updates off), h003 by the pass.
        hosts: vec![drifted(Some(false)), drifted(Some(false)), drifted(Some(false)), drifted(None)],
        durations: vec![Default::default()],
        freezes: Vec::new(),
    };
    let setup = vec![
        // h000 attempts the bmc and fails; its request is aborted.
        Direct(0),
        Progress(0),
        Progress(0),
        Fail(0),
        Abort(0, false),
        // h001 attempts it and finishes.
        Direct(1),
        Progress(1),
        Progress(1),
        Progress(1),
        Progress(1),
        // h002 is protected, its attempt next.
        Direct(2),
        Progress(2),
        Limits(Some(2), None),
    ];
    // The race lands before the pass's writes: every workflow steps (h002 records its attempt).
    let steps = vec![Step { events: setup, ticks: 0, advance_min: 1, race: vec![Tick], race_at: 0 }];
    evolve(&Scenario { site, steps }, &mut GatesWhenWritten).map_err(|e| e.to_string()).unwrap();
}

/// An explicit-start host's window has 49 minutes left and the one past run of its model's bmc
/// took 10: the pass starts it. While the pass writes, another host's run of the same
/// component set ends after 121 minutes: the p90 is now 121 minutes, the update would likely
/// overrun the window. `Store::target_finish` recorded the run without moving the gate fence, so
/// the request was written anyway. Fixed: a run's end moves the fence.
#[test]
fn a_run_that_ends_and_spoils_window_fit_stops_a_pass_that_read_before_it() {
    use Event::*;
    let mut durations: [Vec<u16>; 7] = Default::default();
    durations[0] = vec![10];
    let updating = HostSpec { request: Some((true, false)), ..drifted(None) };
    let site = SiteSpec {
        policy: PolicySpec { absolute: Some(2), window_fit_min_samples: 1, ..quiet_policy() },
        models: vec![bmc_model(true)],
        hosts: vec![updating, drifted(None)],
        durations: vec![durations],
        freezes: Vec::new(),
    };
    let steps = vec![
        // Two hours pass while h000 updates (h001 has no window yet).
        Step { events: Vec::new(), ticks: 0, advance_min: 120, race: Vec::new(), race_at: 0 },
        // h000 plans and installs its bmc; h001's window opens, 49 minutes left at the pass.
        Step {
            events: vec![Progress(0), Progress(0), Window(1, Some((-10, 60)))],
            ticks: 0,
            advance_min: 1,
            // h000 restores while the pass writes (128: any host, not aimed at the plan's).
            race: vec![Progress(128)],
            race_at: 0,
        },
    ];
    evolve(&Scenario { site, steps }, &mut GatesWhenWritten).map_err(|e| e.to_string()).unwrap();
}
