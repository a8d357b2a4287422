//! Property tests of the scheduler's gates (issue 31, item 1): random sites that evolve over
//! many passes (`site_gen`), with one invariant per module checked after every pass.
//!
//! Owns the proptest configuration shared by the properties and the driver that runs one
//! scenario ([`evolve`]): apply a step's events, move the clock, read the view, run
//! `gates::plan`, check the invariant on the site as it was before the pass and the plan, then
//! feed the plan back the way the manager pass does. Each invariant module owns its checks.
//!
//! Runs: [`CASES_PER_PROPERTY`] cases per property by default (seven properties, so more than
//! 10,000 multi-pass evolutions in a plain `cargo test -p hostfw-model`). Environment:
//! - `HOSTFW_PROPTEST_CASES=N`: N cases per property (`scripts/chaos.sh` raises it);
//! - `HOSTFW_PROPTEST_SEED=N` (or `random`): the RNG seed; without it the runs are seeded with
//!   [`DEFAULT_SEED`], so a plain run is the same every time.
//!
//! A failure prints the minimal (shrunk) scenario, the pass, what was wrong and what that pass
//! saw and decided (`HOSTFW_PROPTEST_TRACE=1` prints it for every pass), and proptest
//! writes its seed to `model/tests/proptest-regressions/properties/<module>.txt` (commit it: the
//! seeds there run first, every time).

use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, RngSeed, TestCaseError};

use hostfw_model::{plan, PassInput, Plan};

pub mod site_gen;

mod brakes;
mod ceiling;
mod label_caps;
mod reasons;
mod selection;
mod waves;
mod windows;

use site_gen::{Scenario, Site};

/// Cases per property in a plain run (seven properties: 10,500 evolutions).
pub const CASES_PER_PROPERTY: u32 = 1_500;

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

/// The regression file of the property module `$name`:
/// `model/tests/proptest-regressions/properties/$name.txt`.
macro_rules! regressions {
    ($name:literal) => {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/proptest-regressions/properties/", $name, ".txt")
    };
}
pub(crate) use regressions;

/// One invariant, checked after every pass of an evolution. It may keep state across the
/// passes of one scenario (a fresh value per scenario).
pub trait Invariant {
    /// `site` is the site the pass read (before its starts), `input` its view, `plan` what it
    /// decided. `Err` says what is wrong, in a sentence.
    fn check(&mut self, site: &Site, input: &PassInput, plan: &Plan) -> Result<(), String>;
}

/// Runs `scenario`, checking `invariant` after every pass.
pub fn evolve(scenario: &Scenario, invariant: &mut impl Invariant) -> Result<(), TestCaseError> {
    let mut site = Site::new(&scenario.site);
    for (n, step) in scenario.steps.iter().enumerate() {
        for event in &step.events {
            site.apply(event);
        }
        for _ in 0..step.ticks {
            site.apply(&site_gen::Event::Tick);
        }
        site.advance(step.advance_min);
        let input = site.view();
        let plan = plan(&input);
        let verdict = invariant.check(&site, &input, &plan);
        if std::env::var_os("HOSTFW_PROPTEST_TRACE").is_some() {
            eprintln!("{}", trace(n, &site, &input, &plan));
        }
        if let Err(why) = verdict {
            let trace = trace(n, &site, &input, &plan);
            return Err(TestCaseError::fail(format!("pass {n} (at +{} min): {why}\n{trace}", site.minutes())));
        }
        site.feed_back(&input, &plan);
    }
    Ok(())
}

/// What a pass saw and decided: in a failure's message, and on stderr for every pass with
/// `HOSTFW_PROPTEST_TRACE` set.
fn trace(n: usize, site: &Site, input: &PassInput, plan: &Plan) -> String {
    use std::fmt::Write;
    let mut out = format!("--- pass {n} at +{} min, after {:?}\n", site.minutes(), site.log);
    for h in &site.hosts {
        let request = h.request.as_ref().map(|r| {
            format!(
                "request(approved {}, retries {}, exhausted {}, at {:?})",
                r.approved, r.retries, r.exhausted, r.current
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

/// The plan's starts that are `host`s, with the site's host.
pub fn started<'a>(site: &'a Site, plan: &'a Plan) -> impl Iterator<Item = &'a site_gen::Host> + 'a {
    plan.start.iter().filter_map(|id| site.host(id))
}
