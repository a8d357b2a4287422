//! Shared fixtures of the worker's integration tests: a site config, a bmc-sim fleet, and its
//! machines registered in the site database.
#![allow(dead_code)]

use std::path::Path;

use hostfw_bmc_sim::{FleetSpec, RunningFleet};
use hostfw_model::SiteConfig;
use hostfw_store::{NewMachine, Store};

/// `site.toml` (SQLite site database, a generated site key `site.key`, one Dell model) with `extra` TOML sections, loaded.
pub fn write_site(dir: &Path, extra: &str) -> SiteConfig {
    let config = format!(
        r#"
[site]
name = "worker-tests"
database_url = "sqlite://site.db"
secret_key_file = "site.key"

{extra}
[redfish]
timeout = "2s"

[firmware_global]
firmware_directory = "firmware"

[host_models.x]
vendor = "Dell"
model = "PowerEdge R760"
ordering = ["bmc"]

[host_models.x.components.bmc]
current_version_reported_as = "^BMC$"
[[host_models.x.components.bmc.known_firmware]]
version = "2.0"
default = true
"#
    );
    std::fs::create_dir_all(dir.join("firmware")).unwrap();
    let path = dir.join("site.toml");
    std::fs::write(&path, config).unwrap();
    if !dir.join("site.key").exists() {
        hostfw_store::SiteKey::generate().unwrap().write_new_file(&dir.join("site.key")).unwrap();
    }
    SiteConfig::load(&path).expect("site config loads")
}

/// `n` Dell BMCs `h00`, `h01`, … with `defaults` added to the fleet's `[defaults]`.
pub async fn fleet(n: usize, defaults: &str) -> RunningFleet {
    let mut spec = format!("[defaults]\ntask_style = \"dell\"\n{defaults}\n");
    for i in 0..n {
        spec.push_str(&format!(
            "[[host]]\nid = \"h{i:02}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BMC\", version = \"1.0\" }} ]\n"
        ));
    }
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
