//! Property tests of the scheduler's gates (issue 31, item 1): random sites that evolve over
//! many passes (`site_gen`), with one invariant per property checked at every pass.
//!
//! Owns the proptest configuration shared by the properties and the driver that runs one
//! scenario ([`evolve`]): apply a step's events, move the clock, read the gate fence and the view
//! and run `gates::plan` ([`Site::read`]), check the invariant on the site as it was read, its
//! view and the plan ([`Invariant::check`]), then write what the pass decided the way the manager
//! pass does (wave marks, [`Invariant::marks_written`], then one fenced request per started host)
//! with the step's race landing among the writes, and check the invariant again on what was
//! written ([`Invariant::after`], with the [`Writes`]). A racing `Event::Pass` is checked like any pass when it read the site
//! itself (one that read it with the raced pass decided the same plan), and its writes are part of
//! the raced pass's [`Writes`]. Each invariant module owns its checks.
//!
//! Runs: [`CASES_PER_PROPERTY`] cases per property by default (eleven properties, so more than
//! 10,000 multi-pass evolutions in a plain `cargo test -p hostfw-model`). Environment:
//! - `HOSTFW_PROPTEST_CASES=N`: N cases per property (`scripts/chaos.sh` raises it);
//! - `HOSTFW_PROPTEST_SEED=N` (or `random`): the RNG seed; without it the runs are seeded with
//!   [`DEFAULT_SEED`], so a plain run is the same every time.
//!
//! A failure prints the minimal (shrunk) scenario, the pass, what was wrong and what that pass
//! saw and decided, and what its writes and its race did (`HOSTFW_PROPTEST_TRACE=1` prints it
//! for every pass), and proptest writes its seed to
//! `model/tests/proptest-regressions/properties/<file>.txt` (the file each property names with
//! [`regressions!`]; commit it: the seeds there run first, every time).

use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, RngSeed, TestCaseError};

use hostfw_model::gates::Target;
use hostfw_model::{PassInput, Plan};

pub mod site_gen;

mod brakes;
mod ceiling;
mod label_caps;
mod races;
mod reasons;
mod selection;
mod waves;
mod windows;

use site_gen::{Event, Fence, Outcome, Read, Scenario, Site, Writer};

/// Cases per property in a plain run (eleven properties: 11,000 evolutions).
pub const CASES_PER_PROPERTY: u32 = 1_000;

/// The seed of a plain run.
pub const DEFAULT_SEED: u64 = 0x5eed_0031;

/// The configuration of one property; `regressions` is its regression file (an absolute path
/// inside `model/tests/proptest-regressions/`, see [`regressions!`]).
pub fn config(regressions: &'static str) -> Config {
    let cases = std::env::var("HOSTFW_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(CASES_PER_PROPERTY);
    let rng_seed = match std::env::var("HOSTFW_PROPTEST_SEED").ok().as_deref().map(str::trim) {
        Some("random") => RngSeed::Random,
        Some(n) => RngSeed::Fixed(n.parse().unwrap_or_else(|_| panic!("HOSTFW_PROPTEST_SEED={n:?}: not a number"))),
        None => RngSeed::Fixed(DEFAULT_SEED),
    };
    Config {
        cases,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        // A shrunk evolution is printed within a minute; shrinking longer helps little.
        max_shrink_time: 60_000,
        max_shrink_iters: 100_000,
        ..Config::default()
    }
}

/// The regression file `$name`: `model/tests/proptest-regressions/properties/$name.txt`.
macro_rules! regressions {
    ($name:literal) => {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/proptest-regressions/properties/", $name, ".txt")
    };
}
pub(crate) use regressions;

/// One invariant, checked at every pass of an evolution. It may keep state across the passes of
/// one scenario (a fresh value per scenario).
pub trait Invariant {
    /// `site` is the site the pass read (before its starts), `input` its view, `plan` what it
    /// decided. `Err` says what is wrong, in a sentence.
    fn check(&mut self, site: &Site, input: &PassInput, plan: &Plan) -> Result<(), String>;

    /// The wave marks of the pass checked last (whose marks were not written yet) are written:
    /// what it records of the canary waves is in force from now on. A pass racing another is
    /// checked and writes its marks in between; `stale`, the marks are a racing pass's that read
    /// the site with the pass checked last (the same marks, which that pass writes again later).
    /// `written`: the gate fence let them through (else nothing was written). Nothing to do by
    /// default.
    fn marks_written(&mut self, _stale: bool, _written: bool) {}

    /// After the pass's writes, with what was written from its read to its last write (its race
    /// included). Nothing to check by default.
    fn after(&mut self, _writes: &Writes) -> Result<(), String> {
        Ok(())
    }
}

/// What one pass and its race wrote, from the pass's read to its last write.
#[derive(Debug)]
pub struct Writes {
    /// The passes that wrote: the pass first, then each pass of its race, in race order.
    pub passes: Vec<PassWrites>,
    /// Every request created meanwhile, in order, by whoever wrote it.
    pub created: Vec<Created>,
    /// Where the race landed: 0 before the pass's wave marks, `k + 1` after its first `k` starts.
    pub race_at: usize,
    /// The race's events other than passes, in order (as aimed), each with the site before and
    /// after it.
    pub race: Vec<Raced>,
    /// The site after the last write.
    pub after: Site,
}

/// One pass among [`Writes::passes`].
#[derive(Debug)]
pub struct PassWrites {
    pub by: Writer,
    /// What it read (a stale racing pass: what the raced pass read).
    pub read: Read,
    /// Its window in [`Writes::created`]: the requests created from its read (`from`) to its last
    /// request (`to`, exclusive; `from` when it made none).
    pub from: usize,
    pub to: usize,
    /// What became of each start of its plan, in plan order.
    pub outcomes: Vec<(String, Outcome)>,
}

/// One request among [`Writes::created`].
#[derive(Debug)]
pub struct Created {
    pub id: String,
    pub by: Writer,
    /// The pass that wrote it (an index into [`Writes::passes`]); none for a direct request.
    pub pass: Option<usize>,
    /// The site the store saw when it wrote the request (just before it).
    pub at: Site,
}

/// One event of a race.
#[derive(Debug)]
pub struct Raced {
    pub event: Event,
    pub before: Site,
    pub after: Site,
}

/// Runs `scenario`, checking `invariant` at every pass.
pub fn evolve(scenario: &Scenario, invariant: &mut impl Invariant) -> Result<(), TestCaseError> {
    let mut site = Site::new(&scenario.site);
    let mut passes = 0;
    for step in &scenario.steps {
        for event in &step.events {
            match event {
                Event::Pass { .. } => run_pass(&mut site, invariant, &[], 0, &mut passes)?,
                _ => site.apply(event),
            }
        }
        for _ in 0..step.ticks {
            site.apply(&Event::Tick);
        }
        site.advance(step.advance_min);
        run_pass(&mut site, invariant, &step.race, step.race_at, &mut passes)?;
    }
    Ok(())
}

/// One pass: read, check, write with `race` landing at `race_at`, check what was written.
fn run_pass(
    site: &mut Site,
    invariant: &mut impl Invariant,
    race: &[Event],
    race_at: u8,
    passes: &mut usize,
) -> Result<(), TestCaseError> {
    let n = *passes;
    *passes += 1;
    let read = site.read();
    checked(invariant.check(&read.site, &read.input, &read.plan), n, "", &read, None)?;
    let starts = read.plan.start.len();
    let race_at = usize::from(race_at) % (starts + 2);
    let mut writes = Writes { passes: Vec::new(), created: Vec::new(), race_at, race: Vec::new(), after: site.clone() };
    writes.passes.push(PassWrites { by: Writer::Pass, read, from: 0, to: 0, outcomes: Vec::new() });
    if race_at == 0 {
        run_race(site, invariant, race, &mut writes, n)?;
    }
    let read = &writes.passes[0].read;
    let marked = site.write_marks(read);
    invariant.marks_written(false, marked.is_some());
    let mut fence = Fence::new(read);
    fence.moved = marked.is_none();
    let dropped = marked.unwrap_or_default();
    for k in 0..starts {
        if race_at == k + 1 {
            run_race(site, invariant, race, &mut writes, n)?;
        }
        write_start(site, &mut writes, 0, &mut fence, &dropped, k);
    }
    if race_at == starts + 1 {
        run_race(site, invariant, race, &mut writes, n)?;
    }
    writes.after = site.clone();
    let verdict = invariant.after(&writes);
    let read = &writes.passes[0].read;
    checked(verdict, n, "after its writes: ", read, Some(&writes))?;
    site.log.clear();
    Ok(())
}

/// The `k`th start of `writes.passes[p]`'s plan, recorded in `writes`.
fn write_start(site: &mut Site, writes: &mut Writes, p: usize, fence: &mut Fence, dropped: &[Target], k: usize) {
    let before = site.clone();
    let pass = &writes.passes[p];
    let id = pass.read.plan.start[k].clone();
    let outcome = site.write_start(&pass.read, fence, dropped, &id, pass.by);
    if outcome == Outcome::Created {
        writes.created.push(Created { id: id.clone(), by: pass.by, pass: Some(p), at: before });
        writes.passes[p].to = writes.created.len();
    }
    writes.passes[p].outcomes.push((id, outcome));
}

/// The race's events, in order: a pass runs whole ([`racing_pass`]), any other event lands on
/// the site ([`raced`]).
fn run_race(
    site: &mut Site,
    invariant: &mut impl Invariant,
    race: &[Event],
    writes: &mut Writes,
    n: usize,
) -> Result<(), TestCaseError> {
    for event in race {
        match *event {
            Event::Pass { stale } => racing_pass(site, invariant, stale, writes, n)?,
            _ => raced(site, event, writes),
        }
    }
    Ok(())
}

/// A race's event other than a pass: aimed at the raced pass's planned hosts, applied, and
/// recorded with the request it created, if any.
fn raced(site: &mut Site, event: &Event, writes: &mut Writes) {
    let event = event.aimed(site, &writes.passes[0].read.plan.start);
    site.log.push(format!("race: {event:?}"));
    let before = site.clone();
    site.apply(&event);
    let made = site.hosts.iter().find(|h| {
        h.request.as_ref().is_some_and(|r| r.by != Writer::Before)
            && before.host(&h.id).is_some_and(|b| b.request.is_none())
    });
    if let Some(h) = made {
        let by = h.request.as_ref().map_or(Writer::Before, |r| r.by);
        writes.created.push(Created { id: h.id.clone(), by, pass: None, at: before.clone() });
    }
    writes.race.push(Raced { event, before, after: site.clone() });
}

/// A racing pass: it reads (`stale`: what the raced pass read; else the site now, and is
/// checked like any pass), then writes its marks and every start of its plan, fenced.
fn racing_pass(
    site: &mut Site,
    invariant: &mut impl Invariant,
    stale: bool,
    writes: &mut Writes,
    n: usize,
) -> Result<(), TestCaseError> {
    site.log.push(format!("race: {:?}", Event::Pass { stale }));
    let (read, from) = if stale {
        (writes.passes[0].read.clone(), writes.passes[0].from)
    } else {
        let read = site.read();
        checked(invariant.check(&read.site, &read.input, &read.plan), n, "its racing pass: ", &read, None)?;
        (read, writes.created.len())
    };
    let p = writes.passes.len();
    writes.passes.push(PassWrites { by: Writer::RacingPass, read, from, to: from, outcomes: Vec::new() });
    let read = &writes.passes[p].read;
    let marked = site.write_marks(read);
    invariant.marks_written(stale, marked.is_some());
    let mut fence = Fence::new(read);
    fence.moved = marked.is_none();
    let dropped = marked.unwrap_or_default();
    for k in 0..read.plan.start.len() {
        write_start(site, writes, p, &mut fence, &dropped, k);
    }
    Ok(())
}

/// `verdict` as the test's result: a failure names the pass and says what it saw and decided
/// (and what it wrote, after its writes); with `HOSTFW_PROPTEST_TRACE` set every pass says so.
fn checked(
    verdict: Result<(), String>,
    n: usize,
    what: &str,
    read: &Read,
    writes: Option<&Writes>,
) -> Result<(), TestCaseError> {
    // Traced once per pass, after its writes (a racing pass's writes are in them).
    let tracing = writes.is_some() && std::env::var_os("HOSTFW_PROPTEST_TRACE").is_some();
    if verdict.is_ok() && !tracing {
        return Ok(());
    }
    let mut text = trace(n, &read.site, &read.input, &read.plan);
    if let Some(w) = writes {
        text.push_str(&writes_trace(w));
    }
    match verdict {
        Ok(()) => {
            eprintln!("{text}");
            Ok(())
        }
        Err(why) => {
            Err(TestCaseError::fail(format!("pass {n} (at +{} min), {what}{why}\n{text}", read.site.minutes())))
        }
    }
}

/// What a pass saw and decided: in a failure's message, and on stderr for every pass with
/// `HOSTFW_PROPTEST_TRACE` set.
fn trace(n: usize, site: &Site, input: &PassInput, plan: &Plan) -> String {
    use std::fmt::Write;
    let mut out = format!("--- pass {n} at +{} min, fence {}, after {:?}\n", site.minutes(), site.epoch, site.log);
    for h in &site.hosts {
        let request = h.request.as_ref().map(|r| {
            format!(
                "request(by {:?}, approved {}, retries {}, exhausted {}, at {:?})",
                r.by, r.approved, r.retries, r.exhausted, r.current
            )
        });
        let targets: Vec<String> = site.targets(h).iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "  {} {} {:?} {:?} targets {targets:?} labels {:?} window {:?}",
            h.id,
            h.state,
            request.unwrap_or_default(),
            site.firmware(h),
            h.labels,
            h.window
        );
    }
    for r in &input.targets {
        let _ = writeln!(out, "  record {r:?}");
    }
    for w in &plan.waves {
        let _ = writeln!(out, "  wave {w:?}");
    }
    let _ = writeln!(out, "  ceiling {} ({}), in flight {}", plan.ceiling.limit, plan.ceiling.how, plan.in_flight);
    let _ = writeln!(out, "  started {:?}", plan.start);
    for s in &plan.skipped {
        let _ = writeln!(out, "  skipped {}: {:?}", s.machine_id, s.reason);
    }
    out
}

/// What a pass and its race wrote: in a failure's message after the writes, and on stderr with
/// `HOSTFW_PROPTEST_TRACE` set.
fn writes_trace(writes: &Writes) -> String {
    use std::fmt::Write;
    let landed = match writes.race_at {
        0 => "before the pass's wave marks".to_string(),
        k => format!("after the pass's first {} starts", k - 1),
    };
    let mut out = format!("  writes (the race {landed}):\n");
    for (p, w) in writes.passes.iter().enumerate() {
        let _ = writeln!(
            out,
            "    pass {p} ({:?}, read fence {}, requests {}..{}): {:?}",
            w.by, w.read.epoch, w.from, w.to, w.outcomes
        );
    }
    // The race in order, passes among its events (as aimed), from the site's log.
    for line in writes.after.log.iter().filter(|l| l.starts_with("race: ")) {
        let _ = writeln!(out, "    {line}");
    }
    for (i, c) in writes.created.iter().enumerate() {
        let _ = writeln!(out, "    request {i}: {} by {:?}", c.id, c.by);
    }
    let _ = writeln!(out, "    fence after: {}", writes.after.epoch);
    out
}

/// The plan's starts that are `host`s, with the site's host.
pub fn started<'a>(site: &'a Site, plan: &'a Plan) -> impl Iterator<Item = &'a site_gen::Host> + 'a {
    plan.start.iter().filter_map(|id| site.host(id))
}
