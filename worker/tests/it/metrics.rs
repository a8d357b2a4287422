//! The `/metrics` endpoint against a real SQLite site database, without a Temporal server: exact
//! gauge values and compliance series (`hostfw_component_*`) for a hand-built fleet, counters advanced by the host activities (each step once,
//! even when an activity is retried), the same numbers from a second replica, a failed database
//! read as `hostfw_metrics_scrape_error 1`, the Temporal SDK page appended, every sample labelled
//! with the site's name, and no BMC address or credential anywhere on the page.

use std::net::SocketAddr;
use std::path::Path;

use hostfw_activities::{host_state, Deps};
use hostfw_fixtures::{Firmware, HostModel, SiteToml};
use hostfw_model::{InventoryMember, InventoryReport, SiteConfig};
use hostfw_store::{NewMachine, NewRequest, Store, FIRMWARE_UPDATES_TOTAL, HOST_REPROVISION_RETRIES_TOTAL};
use hostfw_worker::{serve_metrics, start_sdk_metrics};
use hostfw_workflows::{ProtectInput, RestoreInput, RetryRecord};
use tempfile::TempDir;

const MAX_RETRIES: u32 = 2;
const DEFAULT_PASSWORD: &str = "site-default-pw-7731";
const STORED_PASSWORD: &str = "stored-bmc-pw-4482";

fn write_site(dir: &Path) -> SiteConfig {
    let model = HostModel::new("x", "Dell", "PowerEdge R760").ordering(&["bmc"]).component(
        "bmc",
        "^Installed-.*__iDRAC\\.",
        [Firmware::known("7.10.30.00")],
    );
    let toml = SiteToml::minimal("metrics")
        .set("worker", "metrics_listen", "127.0.0.1:0")
        .set("credentials", "default_username", "admin")
        .set("credentials", "default_password", DEFAULT_PASSWORD)
        .max_retries(MAX_RETRIES.into())
        .firmware_global("scout_scripts_directory", "scout")
        .machine_updater("max_concurrent_machine_updates_absolute", 5);
    toml.model(&model).write(dir).expect("site config loads").1
}

fn bmc(n: u8) -> hostfw_model::BmcAddress {
    format!("https://10.99.0.{n}:8443").parse().unwrap()
}

/// Register a Dell R760 and store an exploration reporting `version` (`None`: never explored).
async fn host(store: &Store, n: u8, state: &str, instance: Option<&str>, version: Option<&str>) -> String {
    let id = format!("host-{n}");
    store
        .machine_upsert(&NewMachine {
            id: id.clone(),
            bmc_address: bmc(n),
            vendor: Some("Dell".into()),
            model: Some("PowerEdge R760".into()),
            state: state.parse().unwrap(),
            instance_id: instance.map(str::to_string),
            labels: None,
        })
        .await
        .unwrap();
    if let Some(version) = version {
        let report = InventoryReport {
            vendor: "Dell".into(),
            model: "PowerEdge R760".into(),
            serial: None,
            power_state: Some("On".into()),
            members: vec![InventoryMember {
                id: "Installed-25227__iDRAC.Embedded.1-1".into(),
                name: Some("Integrated Dell Remote Access Controller".into()),
                version: version.into(),
                version_raw: None,
                version_unknown: None,
                odata_id: "/redfish/v1/UpdateService/FirmwareInventory/Installed-25227__iDRAC.Embedded.1-1".into(),
                staged_version: None,
            }],
        };
        store.report_put(&bmc(n), Some(&id), &Ok(report)).await.unwrap();
    }
    id
}

async fn request(store: &Store, id: &str) {
    let new =
        NewRequest { machine_id: id.into(), initiator: "AdminCli".into(), update_message: None, workflow_id: None };
    store.request_create(&new).await.unwrap();
}

fn protect(id: &str) -> ProtectInput {
    ProtectInput { machine_id: id.into(), initiator: "AdminCli".into(), approval: None }
}

fn retry(id: &str, retry_count: u32, exhausted: bool) -> RetryRecord {
    let message = if exhausted { "retry budget spent".to_string() } else { format!("retry {retry_count}") };
    RetryRecord { machine_id: id.into(), retry_count, exhausted, message, component: None, target_version: None }
}

/// The fleet (ceiling 5, max_retries 2):
/// - host-1, host-2: Ready, drifted, no request → pending;
/// - host-3: Ready, compliant; host-6: never explored (neither is pending);
/// - host-4: drifted, protected (request started) → active, in flight;
/// - host-5: assigned, protected, two retries then exhausted → exhausted, in repair: set apart
///   from the ceiling (`machine_updater.max_hosts_in_repair`), so it consumes no slot (issue 27);
/// - host-7: Maintenance, compliant → in flight;
/// - host-8: protected and restored → counts started and completed, nothing else;
/// - host-9: drifted but its auto-update is off: no gate would select it → not pending (issue 11, 16);
/// - host-10: protected, two retries, its last retry pending → active, not exhausted (issue 11, 16).
///
/// Protect, record_retry and restore are each run twice where a retried activity could double
/// count.
async fn seed(deps: &Deps) {
    let store = &deps.store;
    host(store, 1, "Ready", None, Some("7.00.00.00")).await;
    host(store, 2, "Ready", None, Some("7.00.00.00")).await;
    host(store, 3, "Ready", None, Some("7.10.30.00")).await;
    let h4 = host(store, 4, "Ready", None, Some("7.00.00.00")).await;
    let h5 = host(store, 5, "Assigned", Some("instance-5"), Some("7.00.00.00")).await;
    host(store, 6, "Ready", None, None).await;
    host(store, 7, "Maintenance", None, Some("7.10.30.00")).await;
    let h8 = host(store, 8, "Ready", None, Some("7.10.30.00")).await;
    let h9 = host(store, 9, "Ready", None, Some("7.00.00.00")).await;
    store.machine_set_auto_update(&h9, Some(false)).await.unwrap();
    let h10 = host(store, 10, "Ready", None, Some("7.00.00.00")).await;
    store.credentials_put(&h4, "root", &STORED_PASSWORD.into()).await.unwrap();

    for id in [&h4, &h5, &h8, &h10] {
        request(store, id).await;
        host_state::protect(deps, protect(id)).await.unwrap();
        host_state::protect(deps, protect(id)).await.unwrap(); // a retried protect
    }
    for (retry_count, exhausted) in [(1, false), (2, false), (2, true)] {
        host_state::record_retry(deps, retry(&h5, retry_count, exhausted), "").await.unwrap();
        host_state::record_retry(deps, retry(&h5, retry_count, exhausted), "").await.unwrap();
        // a retried record
    }
    for retry_count in [1, 2] {
        host_state::record_retry(deps, retry(&h10, retry_count, false), "").await.unwrap();
    }
    // A reset record (count back to 0) is neither a retry nor a failure.
    host_state::record_retry(deps, retry(&h8, 0, false), "").await.unwrap();
    for _ in 0..2 {
        let input = RestoreInput {
            machine_id: h8.clone(),
            state: hostfw_model::HostState::Ready,
            message: "compliant".into(),
            records: Vec::new(),
            abort: None,
        };
        host_state::restore(deps, input).await.unwrap();
    }
}

async fn deps_for(site: &SiteConfig) -> Deps {
    crate::common::deps(site).await
}

async fn get(addr: SocketAddr) -> (reqwest::StatusCode, String, String) {
    let response = reqwest::get(format!("http://{addr}/metrics")).await.expect("GET /metrics");
    let status = response.status();
    let content_type = response.headers()[reqwest::header::CONTENT_TYPE].to_str().unwrap().to_string();
    (status, content_type, crate::common::without_site(&response.text().await.unwrap(), "metrics"))
}

/// The value of the one sample of `series` (name plus labels, exactly as printed).
fn sample(page: &str, series: &str) -> Option<String> {
    let found: Vec<&str> = page
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').filter(|(s, _)| *s == series).map(|(_, v)| v))
        .collect();
    assert!(found.len() <= 1, "{series} appears {} times", found.len());
    found.first().map(|v| v.to_string())
}

fn assert_samples(page: &str, expected: &[(&str, &str)]) {
    for (series, value) in expected {
        assert_eq!(sample(page, series).as_deref(), Some(*value), "{series} in\n{page}");
    }
}

const GAUGES: &[(&str, &str)] = &[
    ("carbide_pending_host_firmware_update_count", "2"),
    ("carbide_active_host_firmware_update_count", "2"),
    ("carbide_exhausted_reprovision_retry_count", "1"),
    ("carbide_machines_in_maintenance_count", "3"),
    ("carbide_concurrent_machine_updates_available", "5"),
    ("hostfw_machine_update_slots_free", "2"),
    ("hostfw_metrics_scrape_error", "0"),
];

/// The compliance series of the same fleet (`hostfw compliance`'s numbers): host-6 has no
/// inventory; six hosts run 7.00.00.00, of which host-1 and host-2 are pending, host-4 and
/// host-10 active (host-10 also failed: it waits for its retry), host-5 exhausted, host-9 none
/// of these (auto-update off).
const COMPLIANCE: &[(&str, &str)] = &[
    (
        r#"hostfw_component_desired_version_info{vendor="Dell",model="PowerEdge R760",component="bmc",version="7.10.30.00"}"#,
        "1",
    ),
    (
        r#"hostfw_component_version_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",version="7.00.00.00"}"#,
        "6",
    ),
    (
        r#"hostfw_component_version_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",version="7.10.30.00"}"#,
        "3",
    ),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="compliant"}"#, "3"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="drifted"}"#, "6"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="pending"}"#, "2"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="active"}"#, "2"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="failed"}"#, "1"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="exhausted"}"#, "1"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="not_reported"}"#, "0"),
    (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="unmatched"}"#, "0"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gauges_and_counters_are_exact_and_shared_by_replicas() {
    let dir = TempDir::new().unwrap();
    let site = write_site(dir.path());
    let deps = deps_for(&site).await;
    seed(&deps).await;

    let (addr, server) = serve_metrics(&site.worker.metrics_listen, deps.clone(), None).await.unwrap();
    let (status, content_type, page) = get(addr).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    assert_samples(&page, GAUGES);
    assert_samples(&page, COMPLIANCE);
    let versions = page.lines().filter(|l| l.starts_with("hostfw_component_version_hosts{")).count();
    assert_eq!(versions, 2, "one series per running version:\n{page}");
    let counters = [
        (r#"carbide_firmware_updates_total{target="host",phase="started"}"#, "4"),
        (r#"carbide_firmware_updates_total{target="host",phase="completed"}"#, "1"),
        (r#"carbide_firmware_updates_total{target="host",phase="failed"}"#, "5"),
        ("carbide_host_reprovision_retries_total", "4"),
    ];
    assert_samples(&page, &counters);
    for n in 1..=8 {
        assert!(!page.contains(&format!("10.99.0.{n}")), "a BMC address on the page:\n{page}");
    }
    for secret in [DEFAULT_PASSWORD, STORED_PASSWORD, "admin", "root", "instance-5"] {
        assert!(!page.contains(secret), "{secret:?} on the page:\n{page}");
    }

    // A second replica (its own pool on the same database) reports the same truth, and an
    // increment made through it shows on both.
    let replica = deps_for(&site).await;
    let (replica_addr, replica_server) = serve_metrics("127.0.0.1:0", replica.clone(), None).await.unwrap();
    assert_eq!(get(replica_addr).await.2, page, "both replicas render the same page");
    replica.store.counter_add(HOST_REPROVISION_RETRIES_TOTAL, "", 1).await.unwrap();
    replica.store.counter_add(FIRMWARE_UPDATES_TOTAL, "failed", 1).await.unwrap();
    for a in [addr, replica_addr] {
        let page = get(a).await.2;
        assert_samples(&page, &[("carbide_host_reprovision_retries_total", "5")]);
        assert_samples(&page, &[(r#"carbide_firmware_updates_total{target="host",phase="failed"}"#, "6")]);
    }
    server.abort();
    replica_server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_site_prints_every_counter_phase_at_zero() {
    let dir = TempDir::new().unwrap();
    let site = write_site(dir.path());
    let (addr, server) = serve_metrics("127.0.0.1:0", deps_for(&site).await, None).await.unwrap();
    let page = get(addr).await.2;
    assert_samples(
        &page,
        &[
            (r#"carbide_firmware_updates_total{target="host",phase="started"}"#, "0"),
            (r#"carbide_firmware_updates_total{target="host",phase="completed"}"#, "0"),
            (r#"carbide_firmware_updates_total{target="host",phase="failed"}"#, "0"),
            ("carbide_host_reprovision_retries_total", "0"),
            ("carbide_pending_host_firmware_update_count", "0"),
            ("carbide_concurrent_machine_updates_available", "5"),
            ("hostfw_machine_update_slots_free", "5"),
            ("hostfw_metrics_scrape_error", "0"),
            (r#"hostfw_component_hosts{vendor="Dell",model="PowerEdge R760",component="bmc",status="drifted"}"#, "0"),
        ],
    );
    assert!(!page.contains("hostfw_component_version_hosts{"), "no host runs any version:\n{page}");
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_database_read_is_a_scrape_error_not_a_500() {
    let dir = TempDir::new().unwrap();
    let site = write_site(dir.path());
    let deps = deps_for(&site).await;
    let (addr, server) = serve_metrics("127.0.0.1:0", deps.clone(), None).await.unwrap();
    deps.store.close().await; // every clone of the pool stops working
    let (status, _, page) = get(addr).await;
    assert_eq!(status, 200);
    assert_samples(&page, &[("hostfw_metrics_scrape_error", "1")]);
    assert!(sample(&page, "carbide_pending_host_firmware_update_count").is_none(), "no made-up gauge:\n{page}");
    assert!(sample(&page, "carbide_host_reprovision_retries_total").is_none(), "no made-up counter:\n{page}");
    assert!(!page.contains("hostfw_component_hosts"), "no made-up compliance series:\n{page}");
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_temporal_sdk_page_follows_hostfws_series() {
    use temporalio_common::telemetry::metrics::{MetricParameters, NewAttributes};

    let dir = TempDir::new().unwrap();
    let site = write_site(dir.path());
    let sdk = start_sdk_metrics().unwrap();
    // What a worker would record through the Runtime's telemetry.
    let meter = sdk.telemetry.metrics.clone().expect("the exporter's meter");
    let counter = meter.counter(MetricParameters::from("temporal_probe_metric"));
    counter.add(7, &meter.new_attributes(NewAttributes::from(Vec::new())));

    let (addr, server) = serve_metrics("127.0.0.1:0", deps_for(&site).await, Some(sdk.addr)).await.unwrap();
    let page = get(addr).await.2;
    let ours = page.find("hostfw_metrics_scrape_error 0").expect("hostfw's series");
    let theirs = page.find("temporal_probe_metric").expect("the SDK's series");
    assert!(ours < theirs, "hostfw's series come first:\n{page}");

    // An SDK exporter that is gone costs its series only.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (addr2, server2) = serve_metrics("127.0.0.1:0", deps_for(&site).await, Some(gone)).await.unwrap();
    let (status, _, page) = get(addr2).await;
    assert_eq!(status, 200);
    assert_samples(&page, &[("hostfw_metrics_scrape_error", "0")]);
    server.abort();
    server2.abort();
}
