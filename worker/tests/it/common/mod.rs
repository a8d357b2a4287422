//! Shared fixtures of the worker's integration tests: a site config (built with
//! `hostfw-fixtures`), the activities' dependencies the worker opens, and `/metrics` pages read
//! without their site label. Must not hold a test.
#![allow(dead_code)]

use hostfw_model::SiteConfig;
use hostfw_store::Store;

/// The name of the tests' site (`SiteToml::sim_site(SITE_NAME)`), as the `/metrics` labels show it.
pub const SITE_NAME: &str = "worker-tests";

/// The activities' dependencies for `site`, opened the way the worker opens them (no Temporal
/// client: these tests call activity functions directly).
pub async fn deps(site: &SiteConfig) -> hostfw_activities::Deps {
    let store = Store::open_site(site).await.expect("site database");
    hostfw_activities::Deps::open(site, store, None).await.expect("deps")
}

/// `page` (a `/metrics` page) after checking that every sample (hostfw's, the build info and the
/// SDK's) carries `site="<site>"` as its first label, with that label taken out, so a test reads
/// the samples as the series are named. Panics naming the first sample without it.
pub fn without_site(page: &str, site: &str) -> String {
    let label = format!("site=\"{site}\"");
    let mut out = String::new();
    for line in page.lines() {
        if line.starts_with('#') {
            out.push_str(line);
        } else {
            let (name, rest) = line.split_once('{').unwrap_or_else(|| panic!("no labels: {line}\n{page}"));
            let rest = rest.strip_prefix(&label).unwrap_or_else(|| panic!("no {label} label: {line}\n{page}"));
            match rest.strip_prefix(',') {
                Some(others) => out.push_str(&format!("{name}{{{others}")),
                None => out.push_str(&format!("{name}{}", rest.trim_start_matches('}'))),
            }
        }
        out.push('\n');
    }
    out
}
