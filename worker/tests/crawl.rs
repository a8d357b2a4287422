//! The Site Explorer crawl (`hostfw.explorer.crawl`, called directly) against a real bmc-sim
//! fleet and a SQLite site database: every BMC explored and its report stored, an unreachable BMC
//! reported as failed with the others unaffected, and `site_explorer.concurrency` honoured, as
//! counted by bmc-sim (the most BMCs serving a request at the same moment).

use std::path::Path;

use hostfw_bmc_sim::{Fault, FleetSpec, RunningFleet};
use hostfw_model::SiteConfig;
use hostfw_store::{NewMachine, Store};
use hostfw_worker::{activity_settings, build_deps};
use hostfw_workflows::CrawlRequest;

const CONCURRENCY: u64 = 3;
const HOSTS: usize = 12;

fn write_site(dir: &Path) -> SiteConfig {
    let config = format!(
        r#"
[site]
name = "crawl"
database_url = "sqlite://site.db"

[site_explorer]
concurrency = {CONCURRENCY}

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
    SiteConfig::load(&path).expect("site config loads")
}

async fn fleet(n: usize) -> RunningFleet {
    let mut spec = String::from("[defaults]\ntask_style = \"dell\"\n");
    for i in 0..n {
        spec.push_str(&format!(
            "[[host]]\nid = \"h{i:02}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BMC\", version = \"1.0\" }} ]\n"
        ));
    }
    hostfw_bmc_sim::start(FleetSpec::from_toml_str(&spec).unwrap()).await.unwrap()
}

async fn register(store: &Store, fleet: &RunningFleet) {
    for h in fleet.hosts() {
        store
            .machine_upsert(&NewMachine {
                id: h.id.clone(),
                bmc_address: h.addr.to_string(),
                vendor: Some(h.vendor.clone()),
                model: Some(h.model.clone()),
                state: "Ready".into(),
                instance_id: None,
            })
            .await
            .unwrap();
        store.credentials_put(&h.id, &h.username, &h.password).await.unwrap();
    }
}

#[tokio::test]
async fn a_crawl_explores_every_bmc_within_the_concurrency_bound() {
    let dir = tempfile::tempdir().unwrap();
    let site = write_site(dir.path());
    let fleet = fleet(HOSTS).await;
    // Slow answers keep every exploration in progress long enough to overlap the others.
    for h in fleet.hosts() {
        fleet.set_fault(&h.id, Fault { slow_response_secs: 0.1, ..Fault::default() }).unwrap();
    }
    // One BMC does not answer at all for the whole crawl.
    fleet.set_fault("h05", Fault { unreachable_for_secs: 60.0, ..Fault::default() }).unwrap();
    let deps = build_deps(&site, activity_settings(&site), None).await.unwrap();
    register(&deps.store, &fleet).await;

    let summary = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await.unwrap();

    assert_eq!(summary.explored as usize, HOSTS - 1);
    assert_eq!(summary.failed.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["h05"]);
    let reports = deps.store.report_list().await.unwrap();
    let stored = reports.iter().filter(|r| r.report.is_some()).count();
    assert_eq!(stored, HOSTS - 1, "a report for every BMC that answered");
    let busy = fleet.stats().max_busy_bmcs;
    assert!(busy <= CONCURRENCY, "{busy} BMCs served at once, bound {CONCURRENCY}");
    assert_eq!(busy, CONCURRENCY, "slow BMCs: the crawl uses its whole bound");
    fleet.shutdown().await;
}
