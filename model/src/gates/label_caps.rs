//! Failure-domain caps (`[machine_updater] max_concurrent_per_label = { rack = 1 }`): at most
//! `limit` hosts sharing one value of a capped label key are in flight at once, beneath the site
//! ceiling.
//!
//! Owns the one rule, used by the scheduler's pass (`gates::pass`) and by the site database's
//! guard when a request is created (`hostfw_store`, so concurrent passes, workers and direct
//! requests cannot overshoot): count the in-flight hosts per capped (key, value), and say which
//! cap a host's labels would exceed. "In flight" is the same as for the ceiling (a request, or
//! updating / in maintenance, S9). It must not read a store or decide any other gate.

use std::collections::{BTreeMap, HashMap};

use super::reason::SkipReason;
use crate::labels::Labels;

/// In-flight hosts per capped (key, value).
#[derive(Debug, Clone)]
pub struct LabelLoad<'a> {
    caps: &'a BTreeMap<String, u32>,
    counts: HashMap<(&'a str, &'a str), u32>,
}

impl<'a> LabelLoad<'a> {
    /// The load under `caps` of the hosts in flight, given by their labels.
    pub fn new(caps: &'a BTreeMap<String, u32>, in_flight: impl IntoIterator<Item = &'a Labels>) -> Self {
        let mut load = LabelLoad { caps, counts: HashMap::new() };
        for labels in in_flight {
            load.add(labels);
        }
        load
    }

    /// The first cap (in key order) that one more host with `labels` would exceed.
    pub fn full(&self, labels: &Labels) -> Option<SkipReason> {
        self.capped(labels).find_map(|(key, value, limit)| {
            let in_flight = self.counts.get(&(key, value)).copied().unwrap_or(0);
            (in_flight >= limit).then(|| SkipReason::LabelCapReached {
                key: key.to_string(),
                value: value.to_string(),
                limit,
                in_flight,
            })
        })
    }

    /// Count one more host in flight with `labels`.
    pub fn add(&mut self, labels: &'a Labels) {
        let capped: Vec<(&'a str, &'a str)> = self.capped(labels).map(|(k, v, _)| (k, v)).collect();
        for key in capped {
            *self.counts.entry(key).or_default() += 1;
        }
    }

    /// `labels`' capped pairs with their limits, in key order.
    fn capped<'l>(&self, labels: &'l Labels) -> impl Iterator<Item = (&'l str, &'l str, u32)> + '_
    where
        'l: 'a,
    {
        labels.iter().filter_map(|(k, v)| self.caps.get(k).map(|limit| (k.as_str(), v.as_str(), *limit)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_cap_counts_hosts_per_value_and_ignores_uncapped_keys() {
        let caps: BTreeMap<String, u32> = [("rack".to_string(), 1), ("power_domain".to_string(), 2)].into();
        let a = labels(&[("rack", "r1"), ("power_domain", "p1"), ("row", "x")]);
        let b = labels(&[("rack", "r2"), ("power_domain", "p1")]);
        let c = labels(&[("rack", "r1")]);
        let d = labels(&[("rack", "r3"), ("power_domain", "p1")]);
        let free = labels(&[("row", "x")]);
        let mut load = LabelLoad::new(&caps, [&a]);
        assert_eq!(
            load.full(&c),
            Some(SkipReason::LabelCapReached { key: "rack".into(), value: "r1".into(), limit: 1, in_flight: 1 })
        );
        assert_eq!(load.full(&b), None, "another rack, and power domain p1 has 1 of 2");
        load.add(&b);
        assert_eq!(
            load.full(&d),
            Some(SkipReason::LabelCapReached {
                key: "power_domain".into(),
                value: "p1".into(),
                limit: 2,
                in_flight: 2
            }),
            "p1 now has 2 of 2"
        );
        assert_eq!(load.full(&free), None, "no capped key");
        assert_eq!(load.full(&Labels::new()), None, "no labels");
    }

    #[test]
    fn no_caps_never_block() {
        let caps = BTreeMap::new();
        let a = labels(&[("rack", "r1")]);
        let load = LabelLoad::new(&caps, [&a, &a, &a]);
        assert_eq!(load.full(&a), None);
    }
}
