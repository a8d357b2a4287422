//! Failure-domain caps over evolving sites (`machine_updater.max_concurrent_per_label`,
//! `gates::label_caps`).
//!
//! Owns one property: after a pass, no capped label value has more hosts in flight than its cap
//! because of that pass. "In flight" is the ceiling's (a request, updating or in maintenance,
//! S9), counted here from the site's facts.

use std::collections::BTreeMap;

use hostfw_model::{PassInput, Plan};
use proptest::prelude::*;

use super::site_gen::{scenario, Focus, Site};
use super::{config, evolve, regressions, started, Invariant};

/// In flight before the pass and started by it, per capped (key, value).
pub fn label_load(site: &Site, plan: &Plan) -> BTreeMap<(String, String), (u32, u32)> {
    let mut load: BTreeMap<(String, String), (u32, u32)> = BTreeMap::new();
    for key in site.policy.label_caps.keys() {
        for h in &site.hosts {
            if let Some(value) = h.labels.get(key) {
                let entry = load.entry((key.clone(), value.clone())).or_default();
                if Site::in_flight(h) {
                    entry.0 += 1;
                }
            }
        }
        for h in started(site, plan) {
            if let Some(value) = h.labels.get(key) {
                load.entry((key.clone(), value.clone())).or_default().1 += 1;
            }
        }
    }
    load
}

struct CapsHold;

impl Invariant for CapsHold {
    fn check(&mut self, site: &Site, _input: &PassInput, plan: &Plan) -> Result<(), String> {
        for ((key, value), (before, starts)) in label_load(site, plan) {
            let limit = site.policy.label_caps[&key];
            if starts > 0 && before + starts > limit {
                return Err(format!(
                    "{starts} hosts labelled {key}={value} started with {before} in flight, cap {limit}"
                ));
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(config(regressions!("label_caps")))]

    /// `gates::label_caps`: "at most `limit` hosts sharing one value of a capped label key are in
    /// flight at once, beneath the site ceiling", in flight as for the ceiling (S9): no pass
    /// starts a host into a failure domain that is full, or fills one past its cap.
    #[test]
    fn a_pass_never_fills_a_failure_domain_past_its_cap(scenario in scenario(Focus::LabelCaps)) {
        evolve(&scenario, &mut CapsHold)?;
    }
}
