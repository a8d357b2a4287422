//! Explicit-start windows and window fit over evolving sites (seed "Explicit start", "Open an
//! explicit-start window"; checklist S10, S18, S19; `gates::window_fit`).
//!
//! Owns one property: no pass starts a host of an `explicit_start_needed` model outside its
//! update window, nor one whose update would likely overrun it: with
//! `window_fit_min_samples` = n > 0 and at least n past runs of its vendor, model and component
//! set, the 90th percentile (nearest rank) of their durations must fit in what is left of the
//! window. Computed here from the site's facts while the clock moves windows open and shut.

use hostfw_model::{FirmwareStatus, PassInput, Plan};
use proptest::prelude::*;

use super::site_gen::{scenario, Focus, Host, Site};
use super::{config, evolve, regressions, started, Invariant};

/// The 90th percentile by nearest rank: the smallest value at or above 90 % of them.
pub fn p90(runs: &[i64]) -> Option<i64> {
    let mut sorted = runs.to_vec();
    sorted.sort_unstable();
    let rank = (sorted.len() * 9).div_ceil(10);
    rank.checked_sub(1).and_then(|r| sorted.get(r).copied())
}

/// The likely duration of `host`'s update when window fit applies to it (enough past runs).
pub fn likely_duration(site: &Site, host: &Host) -> Option<i64> {
    let min = site.policy.window_fit_min_samples;
    let model = &site.catalog[host.model?];
    let mut set: Vec<_> = site.targets(host).iter().map(|t| t.component).collect();
    if min == 0 || set.is_empty() {
        return None;
    }
    set.sort_by_key(|c| c.to_string());
    set.dedup();
    let runs = site.durations.get(&(model.vendor.clone(), model.model.clone(), set))?;
    if runs.len() < usize::try_from(min).unwrap_or(usize::MAX) {
        return None;
    }
    p90(runs)
}

/// The host's model needs an explicit start.
pub fn explicit(site: &Site, host: &Host) -> bool {
    matches!(site.firmware(host), FirmwareStatus::Drifted { explicit_start_needed: true, .. })
}

struct WindowsHold;

impl Invariant for WindowsHold {
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        let now = site.now_ms;
        for h in started(site, plan) {
            if !explicit(site, h) {
                continue;
            }
            let Some(w) = h.window.filter(|w| w.start_ms <= now && now < w.end_ms) else {
                return Err(format!("{} (explicit start) started outside its window {:?}", h.id, h.window));
            };
            if let Some(p90) = likely_duration(site, h) {
                if p90 > w.end_ms - now {
                    return Err(format!(
                        "{} started with {} min left in its window, its update's p90 is {} min",
                        h.id,
                        (w.end_ms - now) / 60_000,
                        p90 / 60_000
                    ));
                }
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("windows")))]

    /// Seed "Explicit start": "When the model has explicit_start_needed = true, the current time
    /// must be inside that machine's firmware update window" (S10; S19: other models need none);
    /// `gates::window_fit`: "a host whose model needs an explicit start is not started inside its
    /// update window when its update would likely overrun the window's end".
    #[test]
    fn an_explicit_start_host_starts_only_inside_a_window_it_fits(scenario in scenario(Focus::Windows)) {
        evolve(&scenario, &mut WindowsHold)?;
    }
}
