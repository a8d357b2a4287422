//! End-to-end: a slow BMC with a big inventory (bmc-sim serving the captured Supermicro
//! SYS-821GE-TNHR tree, 111 FirmwareInventory members, every answer delayed) is updated to
//! compliance, and its inventory reads run as the site config says: they heartbeat while they
//! read (so a dead worker is noticed within `heartbeat_timeout` while a slow BMC gets long
//! enough), and their timeout is derived from `[redfish] timeout` and `inventory_concurrency`
//! instead of a fixed minute. Scaled down by config (a 0.1 s delay, not a minute-long crawl).
//! Skipped when `../shared` is absent.

use std::path::PathBuf;
use std::time::Duration;

use hostfw_tests::fixtures::smc_cpld_upload;
use hostfw_tests::{activity_records, history_events, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::HostOutcome;

const REFRESH: &str = "hostfw.host.refresh_inventory";

fn supermicro() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/redfish/vendor-mockups/supermicro");
    if dir.join("redfish/v1/index.json").is_file() {
        Some(dir.canonicalize().unwrap())
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

/// The Supermicro's motherboard CPLD F5.11.CB (`smc/image.bin`), uploaded to the matched
/// targets with the OemParameters part its BMC wants.
fn smc_cpld() -> HostModel {
    HostModel::new("smc", "Supermicro", "SYS-821GE-TNHR")
        .ordering(&["cpldmb"])
        .component("cpldmb", "^CPLD_Motherboard$", [Firmware::file("F5.11.CB", "smc/image.bin")])
        .component_set("cpldmb", "upload", smc_cpld_upload())
}

/// A duration in the history's JSON form (`"5.000000000s"`).
fn duration(v: &serde_json::Value) -> Option<Duration> {
    v.as_str()?.strip_suffix('s')?.parse::<f64>().ok().map(Duration::from_secs_f64)
}

/// The site with its one slow Supermicro host (no `$expand`), `inventory_concurrency = k`, a 5 s heartbeat
/// timeout; the host's reprovisioning is requested.
async fn start(tree: &std::path::Path, k: u32) -> Site {
    let fleet = format!(
        "[defaults]\ntask_seconds = 0.3\nreset_seconds = 0.3\nmanager_reset_seconds = 0.5\n\
         [defaults.faults]\nslow_response_secs = 0.1\n\
         [[host]]\nid = \"smc\"\nbmc_address = \"127.0.0.1:0\"\nprofile = {:?}\ntask_style = \"spec\"\n\
         firmware = [ {{ id = \"CPLD_Motherboard\", version = \"F5.10.CA\" }} ]\n\
         required_parts = [\"OemParameters\"]\ntargets_required = true\nexpand_query = false\n",
        tree.display().to_string()
    );
    let spec = SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().model(&smc_cpld()).redfish("inventory_concurrency", k).heartbeat_timeout("5s"),
        images: &[("smc/image.bin", "^CPLD_Motherboard$", "F5.11.CB")],
        ..SiteSpec::default()
    };
    let site = Site::start(spec).await.expect("site starts");
    site.cli(&["host", "reprovision", "set", "--id", "smc"]).await.unwrap();
    site
}

/// The host ends compliant after exactly one upload, by one upload attempt; returns the history.
async fn assert_updated_once(site: &Site) -> serde_json::Value {
    let outcome = site.host_result("smc").await.expect("workflow completes");
    let HostOutcome::Compliant { installed } = outcome else { panic!("{outcome:?}") };
    assert_eq!(installed.len(), 1, "installed by this run, not found installed by a retry: {installed:?}");
    let now = site.fleet.versions("smc").into_iter().find(|(m, _)| m == "CPLD_Motherboard").map(|(_, v)| v);
    assert_eq!(now.as_deref(), Some("F5.11.CB"));
    assert_eq!(site.fleet.stats().per_host["smc"].uploads, 1, "one upload");
    let history = site.history_json("smc").await;
    for record in activity_records(&history, "hostfw.firmware.upload") {
        assert!(
            record.attempt == 1 && record.timed_out.is_none(),
            "the upload ran once, without timing out: {record:?}"
        );
    }
    history
}

/// Prints how long each inventory read took (server clock, started to completed).
fn print_read_times(history: &serde_json::Value, k: u32) {
    let events = history["events"].as_array().expect("events");
    let time_of = |id: i64| {
        events
            .iter()
            .find(|e| e["event_id"].as_i64() == Some(id))
            .and_then(|e| e["event_time"].as_str())
            .map(str::to_string)
    };
    let reads: Vec<i64> = activity_records(history, REFRESH).iter().map(|r| r.scheduled_event_id).collect();
    for (id, key, attributes) in history_events(history) {
        if key == "ActivityTaskCompletedEventAttributes"
            && reads.contains(&attributes["scheduled_event_id"].as_i64().unwrap_or_default())
        {
            let started = attributes["started_event_id"].as_i64().unwrap_or_default();
            println!("measured (k = {k}): inventory read started {:?} completed {:?}", time_of(started), time_of(id));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_bmc_with_a_big_inventory_is_read_with_heartbeats_and_updated() {
    let Some(tree) = supermicro() else { return };
    let site = start(&tree, 4).await;

    // While the workflow runs, an inventory read is seen pending with a heartbeat on the server.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let heartbeat = loop {
        let pending = site.pending_activities("smc").await;
        if let Some(read) = pending.iter().find(|a| a.name == REFRESH && a.last_heartbeat.is_some()) {
            break read.clone();
        }
        assert!(site.workflow_running("smc").await, "the workflow ended without an inventory read that heartbeats");
        assert!(tokio::time::Instant::now() < deadline, "no heartbeating inventory read within 120 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(heartbeat.heartbeat.contains("reading the Redfish inventory"), "{heartbeat:?}");

    let history = assert_updated_once(&site).await;
    // Every inventory read was scheduled with the heartbeat timeout and the derived timeout
    // (5 s requests × (16 fixed + 256 members / 4) + 60 s), and none timed out.
    let mut reads = 0;
    for (_, key, attributes) in history_events(&history) {
        if key == "ActivityTaskScheduledEventAttributes" && attributes["activity_type"]["name"] == REFRESH {
            reads += 1;
            assert_eq!(duration(&attributes["heartbeat_timeout"]), Some(Duration::from_secs(5)), "{attributes}");
            assert_eq!(
                duration(&attributes["start_to_close_timeout"]),
                Some(Duration::from_secs(5 * 80 + 60)),
                "{attributes}"
            );
        }
    }
    assert!(reads >= 2, "inventory read before and after the update: {reads}");
    for record in activity_records(&history, REFRESH) {
        assert!(record.completed && record.timed_out.is_none(), "{record:?}");
    }
    print_read_times(&history, 4);
    site.shutdown().await;
}

/// Read one member at a time, the inventory takes ~11 s here, longer than the 5 s heartbeat
/// timeout: the upload's precheck (which reads it too) heartbeats meanwhile, so the upload is not
/// timed out while its attempt goes on (it used to be: the timed-out attempt uploaded anyway and
/// the retry found the version installed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inventory_read_longer_than_the_heartbeat_timeout_does_not_time_out_the_upload() {
    let Some(tree) = supermicro() else { return };
    let site = start(&tree, 1).await;
    let history = assert_updated_once(&site).await;
    print_read_times(&history, 1);
    site.shutdown().await;
}
