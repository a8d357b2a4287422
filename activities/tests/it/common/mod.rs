//! Shared fixtures of the activities' integration tests that drive a simulated fleet: a site
//! config (built with `hostfw-fixtures`), a bmc-sim fleet with its machines registered in the site
//! database, and the activities' dependencies opened as the worker opens them. Must not hold a
//! test.
#![allow(dead_code)]

use hostfw_bmc_sim::{FleetSpec, RunningFleet};
use hostfw_fixtures::SiteToml;
use hostfw_model::SiteConfig;
use hostfw_store::{NewMachine, Store};

/// The tests' site: `worker-tests` ([`SiteToml::sim_site`]); add what a test needs, then
/// [`SiteToml::install`] it.
pub fn site_toml() -> SiteToml {
    SiteToml::sim_site("worker-tests")
}

/// `n` Dell BMCs `h00`, `h01`, … ([`hostfw_fixtures::fleets::bmc_fleet`]) with `defaults` added to
/// the fleet's `[defaults]`, started.
pub async fn fleet(n: usize, defaults: &str) -> RunningFleet {
    let spec = hostfw_fixtures::fleets::bmc_fleet(n, defaults);
    hostfw_bmc_sim::start(FleetSpec::from_toml_str(&spec).unwrap()).await.unwrap()
}

/// Register every BMC of the fleet as a Ready machine with its login.
pub async fn register(store: &Store, fleet: &RunningFleet) {
    for h in fleet.hosts() {
        store
            .machine_upsert(&NewMachine {
                id: h.id.clone(),
                bmc_address: h.base_url.parse().expect("sim base URL"),
                vendor: Some(h.vendor.clone()),
                model: Some(h.model.clone()),
                state: hostfw_model::HostState::Ready,
                instance_id: None,
                labels: None,
            })
            .await
            .unwrap();
        store.credentials_put(&h.id, &h.username, &h.password).await.unwrap();
    }
}

/// The activities' dependencies for `site`, opened the way the worker opens them (no Temporal
/// client: these tests call activity functions directly).
pub async fn deps(site: &SiteConfig) -> hostfw_activities::Deps {
    let store = Store::open_site(site).await.expect("site database");
    hostfw_activities::Deps::open(site, store, None).await.expect("deps")
}
