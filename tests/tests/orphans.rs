//! End-to-end: a script orphaned by a SIGKILLed worker never overlaps its own rerun (issue 11,
//! finding 8). The real `hostfw-worker` binary runs a Core-local script that sleeps before it
//! flashes; the worker is killed with SIGKILL mid-script and restarted at once. The script lives
//! on in its own process group; the dead worker's attempt times out on its heartbeat, the host
//! retries, and the rerun finds the script's lock in the site database: it waits for the orphan to
//! end, does not start the script again, and the workflow judges the orphan by the inventory.
//!
//! Needs the worker binary: `cargo build -p hostfw-worker --bins` (or `HOSTFW_WORKER_BIN`).

mod common;

use std::time::Duration;

use common::{activity_records, history_contains, ChildWorker, Site, SiteSpec};
use hostfw_workflows::HostOutcome;

const ACT_RUN_SCRIPT: &str = "hostfw.firmware.run_script";

const CATALOG: &str = r#"
[host_models.sr630]
vendor = "Lenovo"
model = "SR630"
ordering = ["uefi"]
[host_models.sr630.components.uefi]
current_version_reported_as = "^BIOS$"
[[host_models.sr630.components.uefi.known_firmware]]
version = "3.0"
default = true
script = "scripts/slow-flash.sh"
"#;

const FLEET: &str = r#"
[defaults]
task_seconds = 1.0
upload_style = "multipart"
task_style = "spec"

[[host]]
id = "orphan"
vendor = "Lenovo"
model = "SR630"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" } ]
"#;

/// Records `start <pid> <ns>` and `end <pid> <ns> <exit>` in `<site>/runs.log`, sleeps 30 s (longer than the heartbeat timeout plus the retry interval), then
/// flashes the BIOS through the BMC's multipart push and follows the task. It writes only to files
/// (its stdout pipe dies with the worker).
const SLOW_FLASH: &str = r#"#!/bin/sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
site=$(dirname "$(dirname "$here")")
exec >>"$site/script.log" 2>&1
echo "start $$ $(date +%s%N)" >>"$site/runs.log"
finish() { echo "end $$ $(date +%s%N) $1" >>"$site/runs.log"; exit "$1"; }
sleep 30
auth() { printf 'user = "%s:%s"\n' "$BMC_USERNAME" "$BMC_PASSWORD"; }
image="$here/../lenovo/$COMPONENT_TYPE-$TARGET_VERSION.bin"
location=$(auth | curl -sS -K - -o /dev/null -D - \
    -F 'UpdateParameters={};type=application/json' \
    -F "UpdateFile=@$image;type=application/octet-stream" \
    "$BMC_URL/redfish/v1/UpdateService/upload" | tr -d '\r' | sed -n 's/^[Ll]ocation: *//p')
[ -n "$location" ] || finish 1
task=${location##*/}
i=0
while [ "$i" -lt 200 ]; do
    body=$(auth | curl -sS -K - "$BMC_URL/redfish/v1/TaskService/Tasks/$task")
    if printf '%s' "$body" | grep -Eq '"TaskState": *"Completed"'; then finish 0; fi
    i=$((i + 1))
    sleep 0.1
done
finish 3
"#;

/// Most runs of the script that were running at the same time, from `runs.log`; and how many
/// started.
fn overlap(log: &str) -> (usize, usize) {
    let (mut running, mut most, mut starts) = (0usize, 0usize, 0usize);
    for line in log.lines() {
        match line.split_whitespace().next() {
            Some("start") => {
                running += 1;
                starts += 1;
                most = most.max(running);
            }
            Some("end") => running = running.saturating_sub(1),
            _ => {}
        }
    }
    (most, starts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_script_the_rerun_waits_for_the_orphan_and_does_not_overlap_it() {
    let files = [("firmware/scripts/slow-flash.sh", SLOW_FLASH)];
    let site = Site::start(SiteSpec {
        fleet: FLEET,
        catalog: CATALOG,
        images: &[("lenovo/uefi-3.0.bin", "^BIOS$", "3.0")],
        host_reprovision: "heartbeat_timeout = \"5s\"\nmax_retries = 5",
        files: &files,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .expect("site starts");
    let mut worker = ChildWorker::start(&site).await;
    let runs = site.dir.path().join("runs.log");
    let read_runs = || std::fs::read_to_string(&runs).unwrap_or_default();

    site.cli(&["host", "reprovision", "set", "--id", "orphan"]).await.unwrap();
    site.wait_for("the script to start", Duration::from_secs(60), || async {
        read_runs().contains("start").then_some(())
    })
    .await;
    worker.kill_9();
    worker.restart().await;

    let outcome = site.host_result("orphan").await.expect("workflow completes");
    let log = read_runs();
    let script_log = std::fs::read_to_string(site.dir.path().join("script.log")).unwrap_or_default();
    eprintln!("runs.log:\n{log}");
    for h in site.store.history_list("orphan", 100).await.unwrap().iter().rev() {
        eprintln!("history: {h:?}");
    }
    let (most, starts) = overlap(&log);
    assert_eq!(most, 1, "two runs of the script overlapped:\n{log}\n{}", worker.log_tail(40));
    assert_eq!(starts, 1, "the rerun started the script again although the orphan had installed it:\n{log}");
    assert!(log.contains("end ") && log.trim_end().ends_with(" 0"), "the orphan finished its flash:\n{log}\n{script_log}");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.fleet.versions("orphan"), vec![("BIOS".to_string(), "3.0".to_string())]);
    assert_eq!(site.fleet.stats().per_host["orphan"].installs.get("BIOS"), Some(&1), "flashed once");

    // The rerun said why it did not run the script, and the worker's log says so too.
    let history = site.history_json("orphan").await;
    let records = activity_records(&history, ACT_RUN_SCRIPT);
    assert_eq!(records.len(), 2, "the interrupted run and the rerun that waited: {records:#?}");
    assert!(history_contains(&history, "EarlierScriptRun"), "the rerun's failure type is in the history");
    assert!(history_contains(&history, "an earlier run of scripts/slow-flash.sh"), "the rerun names the orphan");
    assert!(worker.log().contains("not running"), "{}", worker.log_tail(40));
    site.shutdown().await;
}
