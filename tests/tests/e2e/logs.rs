//! End-to-end: the worker's log as an SRE's log shipper receives it. A worker binary whose output
//! goes to a file (not a terminal) writes one JSON object per line with no escape codes; a
//! rollout with one host whose updates always fail shows ERROR lines for the failed attempt and
//! the spent budget, a WARN for the retry, an INFO line per substate change, and a pass line
//! naming the hosts it started, each carrying machine id, component, target and workflow id; a
//! BMC that stops answering while its task runs gets a WARN naming the host.

use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_tests::fixtures::r760_bios;
use hostfw_tests::{Catalog, ChildWorker, Site, SiteSpec, SiteToml};
use serde_json::Value;

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];

const FLEET: &str = r#"
[defaults]
task_seconds = 0.3
reset_seconds = 0.2
upload_style = "multipart"
task_style = "dell"
apply_time = "Immediate"

[[host]]
id = "ok1"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
# Long enough for the test to see WaitingForFirmwareUpgrade (polled every 100 ms) and to make
# the BMC unreachable while the task still runs; at 0.3 s a loaded machine could miss it.
task_seconds = 5.0
firmware = [ { id = "BIOS", version = "1.0" } ]

[[host]]
id = "bad1"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" } ]
"#;

/// The lines of `log`, each parsed as JSON (a line that is not is a test failure).
fn json_lines(log: &str) -> Vec<Value> {
    log.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

fn lines_of<'a>(lines: &'a [Value], message: &str, machine: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["message"] == message && l["machine_id"] == machine).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_host_is_logged_as_json_errors_with_its_fields() {
    let config = SiteToml::default()
        .catalog(&Catalog::of([r760_bios()]))
        .max_retries(1)
        .manager(5, "1h")
        .explorer_interval("1h")
        .site_workflows(true);
    let site =
        Site::start(SiteSpec { fleet: FLEET, config, images: IMAGES, external_worker: true, ..SiteSpec::default() })
            .await
            .unwrap();
    site.fleet.set_fault("bad1", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    let worker = ChildWorker::start(&site).await;
    site.wait_substate("ok1", "WaitingForFirmwareUpgrade", Duration::from_secs(60)).await;
    // A transient fault on the healthy host while its update task runs.
    site.fleet.set_fault("ok1", Fault { unreachable_for_secs: 1.5, ..Fault::default() }).unwrap();
    site.wait_for("bad1's budget spent and ok1 done", Duration::from_secs(180), || async {
        let bad = site.store.request_get("bad1").await.ok()??;
        let ok_done = site.store.request_get("ok1").await.ok()?.is_none()
            && site.fleet.versions("ok1").iter().any(|(m, v)| m == "BIOS" && v == "3.0");
        (bad.exhausted && ok_done).then_some(())
    })
    .await;
    let log = worker.log();
    assert!(!log.contains('\x1b'), "escape codes in a log written to a file");
    let lines = json_lines(&log);

    let failed = lines_of(&lines, "firmware update attempt failed", "bad1");
    assert_eq!(failed.len(), 2, "the first attempt and its one retry:\n{}", worker.log_tail(60));
    for l in &failed {
        assert_eq!(l["level"], "ERROR", "{l}");
        assert_eq!(l["component"], "uefi", "{l}");
        assert_eq!(l["target_version"], "3.0", "{l}");
        assert_eq!(l["workflow_id"], "host-reprovision/bad1", "{l}");
        assert!(!l["reason"].as_str().unwrap_or_default().is_empty(), "{l}");
    }
    let retried = lines_of(&lines, "firmware update will be retried", "bad1");
    assert_eq!(retried.len(), 1, "{}", worker.log_tail(60));
    assert_eq!(retried[0]["level"], "WARN");
    assert_eq!(retried[0]["retry_count"], 1);
    let exhausted = lines_of(&lines, "retry budget exhausted", "bad1");
    assert_eq!(exhausted.len(), 1, "{}", worker.log_tail(60));
    assert_eq!(exhausted[0]["level"], "ERROR");
    assert_eq!(exhausted[0]["component"], "uefi");

    // The healthy host: one INFO line per substate change, in the order the history records them.
    let substates: Vec<&str> =
        lines_of(&lines, "host substate", "ok1").iter().map(|l| l["substate"].as_str().unwrap()).collect();
    let mut history: Vec<String> = site
        .store
        .history_list("ok1", 100)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|h| h.substate.map(|s| s.to_string()))
        .collect();
    history.reverse();
    // `protect` records Protecting itself, before any substate change of the workflow.
    history.retain(|s| s != "Protecting");
    assert_eq!(substates, history, "one line per substate change");

    // The BMC unreachable while its task ran: the Redfish client's WARN names the host.
    let poll = lines
        .iter()
        .find(|l| l["message"] == "task poll failed; will retry")
        .unwrap_or_else(|| panic!("no WARN for the unreachable BMC:\n{}", worker.log_tail(60)));
    assert_eq!(poll["level"], "WARN");
    assert_eq!(poll["machine_id"], "ok1", "{poll}");
    assert_eq!(poll["workflow_id"], "host-reprovision/ok1", "{poll}");

    let passes: Vec<&Value> = lines.iter().filter(|l| l["message"] == "machine update manager pass").collect();
    let mut started: Vec<&str> = Vec::new();
    for pass in &passes {
        let names: Vec<&str> = pass["started_hosts"].as_str().unwrap().split(',').filter(|h| !h.is_empty()).collect();
        assert_eq!(pass["started"].as_u64(), Some(names.len() as u64), "each pass names what it started: {pass}");
        started.extend(names);
    }
    started.sort_unstable();
    assert_eq!(started, ["bad1", "ok1"], "the passes name every host they started, once: {passes:?}");
    let mut lengths: Vec<usize> = log.lines().map(str::len).collect();
    lengths.sort_unstable();
    let median = lengths[lengths.len() / 2];
    // Before, the SDK's span fields made the median line 367 characters of text; a JSON line
    // carries its keys and the module path, and still stays well below that.
    assert!(median < 320, "median line of {median} characters");
    drop(worker);
    site.shutdown().await;
}
