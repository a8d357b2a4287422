//! End-to-end durability: the real `hostfw-worker` binary runs as a child process against a real
//! Temporal dev server and bmc-sim; it is killed with SIGKILL in the middle of an upload, a task
//! poll, an activation wait and a Core-local script, and started again. Each time the host must end
//! compliant, with no component installed twice (bmc-sim counts every version it applies or
//! stages, per inventory member) and without an extra upload.
//!
//! Every scenario lets the BMC side of the interrupted step finish while no worker runs, and checks
//! that the workflow did not move on meanwhile; then the restarted worker must resume from where
//! the history says it was (after the dead worker's activity times out on its heartbeat), not
//! redo the step.
//!
//! Needs the worker binary: `cargo build --workspace --bins` (or `HOSTFW_WORKER_BIN`).

use std::collections::BTreeMap;
use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_tests::fixtures::r760;
use hostfw_tests::{
    activity_records, history_contains, ActivityRecord, Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec,
    SiteToml,
};
use hostfw_workflows::names::{ACT_ACTIVATE, ACT_UPLOAD, ACT_WAIT_TASK};
use hostfw_workflows::HostOutcome;

/// The Core-local script activity (no constant in `names`).
const ACT_RUN_SCRIPT: &str = "hostfw.firmware.run_script";

/// The BMC password of every simulated host: must never reach a history or a log line.
const PASSWORD: &str = "Dur4bility-Secret-x93";

/// The site: a dead worker's activity times out after 5 s (kept short so a test takes seconds),
/// 5 retries; two site-wide upload slots: the upload test holds both to stop the upload right
/// before its POST. (Two, not one: the slot the killed worker held stays leased for a minute, and
/// the next component's upload must not wait for that.) The catalog: the R760 (BMC and BIOS by
/// Redfish upload), a Supermicro BMC, a Lenovo BIOS by Core-local script.
fn config() -> SiteToml {
    let smc = HostModel::new("smc", "Supermicro", "SYS-821GE-TNHR").ordering(&["bmc"]).component(
        "bmc",
        "^BMC$",
        [Firmware::file("2.0", "smc/bmc.bin")],
    );
    let sr650 = HostModel::new("sr650", "Lenovo", "SR650").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [Firmware::script("3.0", "scripts/flash.sh")],
    );
    SiteToml::default().heartbeat_timeout("5s").max_retries(5).max_uploads(2).catalog(&Catalog::of([
        r760(),
        smc,
        sr650,
    ]))
}

const IMAGES: &[(&str, &str, &str)] = &[
    ("dell/bmc.bin", "^BMC$", "2.0"),
    ("dell/bios.bin", "^BIOS$", "3.0"),
    // What the flash script pushes: firmware/lenovo/<component>-<target>.bin.
    ("lenovo/uefi-3.0.bin", "^BIOS$", "3.0"),
];

/// Each test drives one host of this fleet and leaves the others alone.
/// - `upload`: two components, quick tasks (the kill lands on the bmc upload POST);
/// - `upload-staged`: the same on a BMC that stages images until a reset;
/// - `poll`: only the BIOS differs; its task runs 6 s (the kill lands on the task poll);
/// - `activation`: only the BMC differs; its image is staged until a Manager.Reset, and the BMC
///   stays away 6 s after one (the kill lands on the wait for it to come back);
/// - `scripted`: only the BIOS differs, installed by a Core-local script whose flash runs 3 s;
/// - `restart`: only the BIOS differs; the system restart that activates it keeps the host off
///   30 s, longer than three attempts that lose their worker take (the kills land on the
///   activation's wait for power On, once per attempt).
fn fleet() -> String {
    format!(
        r#"
[defaults]
username = "root"
password = "{PASSWORD}"
task_seconds = 1.0
reset_seconds = 0.3
manager_reset_seconds = 0.5
upload_style = "multipart"
task_style = "dell"
apply_time = "Immediate"

[[host]]
id = "upload"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ {{ id = "BMC", version = "1.0" }}, {{ id = "BIOS", version = "1.0" }} ]

[[host]]
id = "upload-staged"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
apply_time = "OnReset"
firmware = [ {{ id = "BMC", version = "1.0" }}, {{ id = "BIOS", version = "1.0" }} ]

[[host]]
id = "poll"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
task_seconds = 6.0
firmware = [ {{ id = "BMC", version = "2.0" }}, {{ id = "BIOS", version = "1.0" }} ]

[[host]]
id = "activation"
vendor = "Supermicro"
model = "SYS-821GE-TNHR"
bmc_address = "127.0.0.1:0"
manager_reset_seconds = 6.0
firmware = [ {{ id = "BMC", version = "1.0" }} ]

[[host]]
id = "restart"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
reset_seconds = 30.0
firmware = [ {{ id = "BMC", version = "2.0" }}, {{ id = "BIOS", version = "1.0" }} ]

[[host]]
id = "scripted"
vendor = "Lenovo"
model = "SR650"
bmc_address = "127.0.0.1:0"
task_seconds = 3.0
firmware = [ {{ id = "BIOS", version = "1.0" }} ]
"#
    )
}

/// The Core-local script: flashes `$COMPONENT_TYPE` `$TARGET_VERSION` through the BMC's multipart
/// push with curl and follows the task until it completes. It runs in its own process group, so
/// it outlives a killed worker; it therefore writes only to its own log (the read end of its
/// stdout and stderr dies with the worker), and it records how it ended in `script.done`. The
/// credentials reach curl on its standard input, never on a command line.
const FLASH_SCRIPT: &str = r#"#!/bin/sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
site=$(dirname "$(dirname "$here")")
exec >>"$site/script.log" 2>&1
finish() { echo "exit $1" >"$site/script.done"; echo "finished: exit $1"; exit "$1"; }
echo "started pid $$: $COMPONENT_TYPE $TARGET_VERSION on $BMC_ADDRESS"
: >"$site/script.started"
image="$here/../lenovo/$COMPONENT_TYPE-$TARGET_VERSION.bin"
[ -f "$image" ] || { echo "no image $image"; finish 4; }
auth() { printf 'user = "%s:%s"\n' "$BMC_USERNAME" "$BMC_PASSWORD"; }
location=$(auth | curl -sS -K - -o /dev/null -D - \
    -F 'UpdateParameters={};type=application/json' \
    -F "UpdateFile=@$image;type=application/octet-stream" \
    "$BMC_URL/redfish/v1/UpdateService/upload" | tr -d '\r' | sed -n 's/^[Ll]ocation: *//p')
[ -n "$location" ] || { echo "the BMC returned no task"; finish 1; }
task=${location##*/}
echo "following task $task ($location)"
i=0
while [ "$i" -lt 240 ]; do
    body=$(auth | curl -sS -K - "$BMC_URL/redfish/v1/TaskService/Tasks/$task")
    if printf '%s' "$body" | grep -Eq '"TaskState": *"Completed"'; then finish 0; fi
    if printf '%s' "$body" | grep -Eq '"TaskState": *"(Exception|Killed|Cancelled)"'; then
        echo "task failed: $body"
        finish 2
    fi
    i=$((i + 1))
    sleep 0.25
done
echo "the task never completed"
finish 3
"#;

/// The Supermicro BMC image: staged by its task, running only once the BMC came back from a
/// Manager.Reset.
fn smc_bmc_image() -> String {
    format!("HOSTFW-SIM-IMAGE applies_to=^BMC$ version=2.0 activation=manager_reset\n{}", "x".repeat(2048))
}

/// A site with no in-process worker, and the worker binary started on it.
async fn start() -> (Site, ChildWorker) {
    let fleet = fleet();
    let smc_image = smc_bmc_image();
    let files = [("firmware/scripts/flash.sh", FLASH_SCRIPT), ("firmware/smc/bmc.bin", smc_image.as_str())];
    let spec = SiteSpec {
        fleet: &fleet,
        config: config(),
        images: IMAGES,
        files: &files,
        external_worker: true,
        ..SiteSpec::default()
    };
    let site = Site::start(spec).await.expect("site starts");
    let worker = ChildWorker::start(&site).await;
    (site, worker)
}

fn installs(site: &Site, host: &str) -> BTreeMap<String, u64> {
    site.fleet.stats().per_host[host].installs.clone()
}

fn uploads(site: &Site, host: &str) -> u64 {
    site.fleet.stats().per_host[host].uploads
}

fn expected(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn versions(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// With the worker dead, the workflow has not moved: still running, substate unchanged.
async fn assert_stalled_in(site: &Site, host: &str, substate: &str, when: &str) {
    assert_eq!(site.substate(host).await.as_deref(), Some(substate), "{host}: substate {when}");
    assert!(site.workflow_running(host).await, "{host}: the workflow ended {when}");
}

/// The host ended compliant, installing exactly `components`, never through a failed attempt.
async fn assert_compliant(site: &Site, host: &str, components: &[&str]) {
    let outcome = site.host_result(host).await.expect("workflow completes");
    let HostOutcome::Compliant { installed } = outcome else { panic!("{host}: not compliant: {outcome:?}") };
    let installed: Vec<String> = installed.iter().map(|c| c.component.to_string()).collect();
    assert_eq!(installed, components, "{host}: installed components");
    let history = site.store.history_list(host, 200).await.unwrap();
    assert!(
        !history.iter().any(|h| h.substate == Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade)),
        "{host}: the restart went through a failed attempt: {history:?}"
    );
    let machine = site.store.machine_get(host).await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::Ready, "{host}: back to Ready");
    assert!(site.store.request_get(host).await.unwrap().is_none(), "{host}: request cleared");
}

/// The one execution of activity `name` that the kill interrupted: the dead worker's attempt
/// ended on its heartbeat timeout (the execution timed out, or its next attempt says why).
fn interrupted(records: &[ActivityRecord], name: &str) -> ActivityRecord {
    let hit: Vec<&ActivityRecord> = records
        .iter()
        .filter(|r| {
            let text = r.timed_out.clone().or_else(|| r.last_failure.clone()).unwrap_or_default();
            text.to_ascii_lowercase().contains("heartbeat")
        })
        .collect();
    assert_eq!(hit.len(), 1, "{name}: exactly one execution hit by the kill's heartbeat timeout: {records:#?}");
    hit[0].clone()
}

/// Kill the worker while `host`'s bmc upload POST is in flight (the BMC took the image, the worker
/// never saw the answer), let the BMC finish, restart: both components end installed once each.
async fn upload_scenario(host: &str) {
    let (site, mut worker) = start().await;
    // Hold every upload slot of the site: the upload activity waits for a slot, then reads the
    // inventory for its "already at target?" precheck right before its POST.
    let mut held = Vec::new();
    for holder in ["durability-test-1", "durability-test-2"] {
        held.push((site.store.upload_slot_acquire(holder, 2, 120_000).await.unwrap().expect("a free slot"), holder));
    }

    site.cli(&["host", "reprovision", "set", "--id", host]).await.unwrap();
    site.wait_substate(host, "WaitingForUpload", Duration::from_secs(60)).await;
    // Keep it waiting longer than the heartbeat timeout: a live worker's wait must not time out
    // (it heartbeats while it waits), so the kill below is the only interruption.
    site.wait_for("the upload to wait for a slot past the heartbeat timeout", Duration::from_secs(40), || async {
        let waiting = site
            .pending_activities(host)
            .await
            .into_iter()
            .find(|a| a.name == ACT_UPLOAD && a.heartbeat.contains("upload slots"))?;
        assert_eq!(waiting.attempt, 1, "the upload of a live worker timed out while waiting for a slot: {waiting:?}");
        (waiting.heartbeating_for()? >= Duration::from_secs(8)).then_some(())
    })
    .await;
    // Now make the BMC slow to answer (it still acts at once), and let the upload go.
    site.fleet.set_fault(host, Fault { slow_response_secs: 4.0, ..Fault::default() }).unwrap();
    for (slot, holder) in held {
        site.store.upload_slot_release(slot, holder).await.unwrap();
    }
    // The precheck runs once the slot is held (issue 11), so its inventory reads are slow too.
    site.wait_for("the BMC to accept the upload POST", Duration::from_secs(120), || async {
        (uploads(&site, host) >= 1).then_some(())
    })
    .await;
    // The answer (with the task's address) is still held back for ~4 s: the worker dies with the
    // POST in flight, never learning that the BMC took the image.
    worker.kill_9();
    site.fleet.set_fault(host, Fault::default()).unwrap();
    assert_stalled_in(&site, host, "WaitingForUpload", "right after the kill").await;

    // The BMC flashes the image while no worker runs.
    site.wait_for("the BMC to apply the uploaded image", Duration::from_secs(30), || async {
        // Applied, or staged until its reset: counted either way.
        (installs(&site, host) == expected(&[("BMC", 1)]) && site.fleet.uploads_in_flight() == 0).then_some(())
    })
    .await;
    assert_stalled_in(&site, host, "WaitingForUpload", "after the BMC finished, with no worker").await;

    worker.restart().await;
    assert_compliant(&site, host, &["bmc", "uefi"]).await;
    assert_eq!(site.fleet.versions(host), versions(&[("BMC", "2.0"), ("BIOS", "3.0")]));
    assert_eq!(installs(&site, host), expected(&[("BMC", 1), ("BIOS", 1)]), "each component installed once");
    assert_eq!(uploads(&site, host), 2, "one upload per component: the retried bmc upload found it at target");

    // The retried upload is the dead worker's activity, retried after its heartbeat timeout.
    let history = site.history_json(host).await;
    let records = activity_records(&history, ACT_UPLOAD);
    assert_eq!(records.len(), 2, "one upload activity per component: {records:#?}");
    let hit = interrupted(&records, ACT_UPLOAD);
    assert!(hit.attempt == 2 && hit.completed, "the interrupted upload was retried once and completed: {hit:?}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_an_upload_post_neither_reuploads_nor_reinstalls() {
    upload_scenario("upload").await;
}

/// The same on a BMC that stages images until a reset (apply time OnReset, as Supermicro does):
/// the retried upload's precheck finds the image staged (the inventory's `Staged` entry for the
/// member) and goes straight to its activation instead of flashing it a second time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_an_upload_post_to_a_staging_bmc_neither_reuploads_nor_reinstalls() {
    upload_scenario("upload-staged").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_task_poll_resumes_polling_the_same_task() {
    let (site, mut worker) = start().await;
    site.cli(&["host", "reprovision", "set", "--id", "poll"]).await.unwrap();
    site.wait_substate("poll", "WaitingForFirmwareUpgrade", Duration::from_secs(60)).await;
    site.wait_for("the task poll to report progress", Duration::from_secs(30), || async {
        site.pending_activities("poll")
            .await
            .into_iter()
            .any(|a| a.name == ACT_WAIT_TASK && !a.heartbeat.is_empty())
            .then_some(())
    })
    .await;
    assert!(site.fleet.uploads_in_flight() > 0, "killed while the BMC's task runs");
    worker.kill_9();
    assert_stalled_in(&site, "poll", "WaitingForFirmwareUpgrade", "right after the kill").await;

    site.wait_for("the BMC's task to finish", Duration::from_secs(30), || async {
        (installs(&site, "poll") == expected(&[("BIOS", 1)]) && site.fleet.uploads_in_flight() == 0).then_some(())
    })
    .await;
    assert_stalled_in(&site, "poll", "WaitingForFirmwareUpgrade", "after the BMC finished, with no worker").await;

    worker.restart().await;
    assert_compliant(&site, "poll", &["uefi"]).await;
    assert_eq!(site.fleet.versions("poll"), versions(&[("BMC", "2.0"), ("BIOS", "3.0")]));
    assert_eq!(installs(&site, "poll"), expected(&[("BIOS", 1)]), "installed once");
    assert_eq!(uploads(&site, "poll"), 1, "no second upload: the same task was polled again");
    assert!(site.fleet.stats().per_host["poll"].system_resets >= 1, "activated by a system restart");

    let history = site.history_json("poll").await;
    let hit = interrupted(&activity_records(&history, ACT_WAIT_TASK), ACT_WAIT_TASK);
    assert!(hit.attempt == 2 && hit.completed, "the task poll was retried once and completed: {hit:?}");
    assert_eq!(activity_records(&history, ACT_UPLOAD).len(), 1, "one upload activity");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_an_activation_wait_keeps_a_single_install() {
    let (site, mut worker) = start().await;
    site.cli(&["host", "reprovision", "set", "--id", "activation"]).await.unwrap();
    site.wait_substate("activation", "ResetForNewFirmware", Duration::from_secs(60)).await;
    // The activation activity reset the BMC and now waits for it to come back (6 s).
    site.wait_for("the BMC reset to be accepted", Duration::from_secs(30), || async {
        (site.fleet.stats().per_host["activation"].manager_resets >= 1).then_some(())
    })
    .await;
    assert_eq!(site.fleet.staged_versions("activation"), versions(&[("BMC", "2.0")]), "staged until the reset");
    worker.kill_9();
    assert_stalled_in(&site, "activation", "ResetForNewFirmware", "right after the kill").await;

    // The BMC comes back running the new version while no worker runs.
    site.wait_for("the BMC to come back on the new version", Duration::from_secs(30), || async {
        (site.fleet.versions("activation") == versions(&[("BMC", "2.0")])).then_some(())
    })
    .await;
    assert_stalled_in(&site, "activation", "ResetForNewFirmware", "after the BMC came back, with no worker").await;

    worker.restart().await;
    assert_compliant(&site, "activation", &["bmc"]).await;
    assert_eq!(site.fleet.versions("activation"), versions(&[("BMC", "2.0")]));
    assert!(site.fleet.staged_versions("activation").is_empty());
    assert_eq!(installs(&site, "activation"), expected(&[("BMC", 1)]), "installed once");
    assert_eq!(uploads(&site, "activation"), 1, "uploaded once");
    // The retried activation knows nothing of the first attempt and resets the BMC once more
    // (it installs nothing); more than that would be a reset loop.
    let manager_resets = site.fleet.stats().per_host["activation"].manager_resets;
    eprintln!("activation: {manager_resets} manager resets");
    assert!((1..=2).contains(&manager_resets), "{manager_resets} manager resets");

    let history = site.history_json("activation").await;
    let hit = interrupted(&activity_records(&history, ACT_ACTIVATE), ACT_ACTIVATE);
    assert!(hit.attempt == 2 && hit.completed, "the activation was retried once and completed: {hit:?}");
    site.shutdown().await;
}

/// Issue 26 item 8: a worker lost on every attempt of an activation (three SIGKILLs, each while
/// that attempt's system restart waits for the host to come back) is the infrastructure's fault,
/// not the host's. The activity's own retries run out on heartbeat timeouts; the workflow then
/// waits and runs the step again where the host is, and the host ends compliant with no failed
/// attempt and no retry spent (before, the attempt failed with "activation: activity Heartbeat
/// timeout" and counted against the host's retries and its target's error budget).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_lost_on_every_attempt_of_an_activation_spends_no_retry() {
    let (site, mut worker) = start().await;
    site.cli(&["host", "reprovision", "set", "--id", "restart"]).await.unwrap();
    site.wait_substate("restart", "ResetForNewFirmware", Duration::from_secs(60)).await;
    for attempt in 1..=3usize {
        // An attempt restarts the host, or (a retry that finds its activation mark) only waits
        // for it and logs so: either way it runs on a live worker. (A kill that lands between
        // the restart and its mark makes the next attempt restart again.)
        site.wait_for(&format!("activation attempt {attempt} to run"), Duration::from_secs(60), || async {
            let restarts = site.fleet.stats().per_host["restart"].system_resets as usize;
            let waits = worker.log().matches("already issued it").count();
            (restarts + waits >= attempt).then_some(())
        })
        .await;
        worker.kill_9();
        assert_stalled_in(&site, "restart", "ResetForNewFirmware", &format!("after kill {attempt}")).await;
        worker.restart().await;
    }
    assert_compliant(&site, "restart", &["uefi"]).await;
    assert_eq!(installs(&site, "restart"), expected(&[("BIOS", 1)]), "installed once");
    // The three lost attempts restarted the host at least once (a retry that found the mark only
    // waited); the step run again is a new activity, which restarts it once more.
    let restarts = site.fleet.stats().per_host["restart"].system_resets;
    assert!((2..=4).contains(&restarts), "{restarts} restarts: at most one per attempt");

    let history = site.history_json("restart").await;
    let records = activity_records(&history, ACT_ACTIVATE);
    assert_eq!(records.len(), 2, "the activation ran once more after its own retries ran out: {records:#?}");
    let lost = &records[0];
    assert!(
        lost.attempt == 3 && lost.timed_out.as_deref().is_some_and(|t| t.to_ascii_lowercase().contains("heartbeat")),
        "its three attempts lost their worker: {lost:?}"
    );
    assert!(records[1].completed, "run again, it completed: {:?}", records[1]);
    assert!(history_contains(&history, "not the host's failure"), "the wait says why");
    site.record_history("restart", "activation-worker-lost-every-attempt").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_script_judges_it_by_the_inventory() {
    let (site, mut worker) = start().await;
    let started = site.dir.path().join("script.started");
    let done = site.dir.path().join("script.done");
    site.cli(&["host", "reprovision", "set", "--id", "scripted"]).await.unwrap();
    site.wait_substate("scripted", "WaitingForScript", Duration::from_secs(60)).await;
    // The script is flashing: it has pushed the image and follows the BMC's 3 s task.
    site.wait_for("the script to push its image", Duration::from_secs(30), || async {
        (started.exists() && uploads(&site, "scripted") >= 1).then_some(())
    })
    .await;
    assert!(!done.exists(), "killed while the script runs");
    worker.kill_9();
    assert_stalled_in(&site, "scripted", "WaitingForScript", "right after the kill").await;

    // The script outlives the worker and finishes its flash.
    let ending = site
        .wait_for("the orphaned script to finish", Duration::from_secs(30), || async {
            std::fs::read_to_string(&done).ok().filter(|s| !s.is_empty())
        })
        .await;
    let script_log = std::fs::read_to_string(site.dir.path().join("script.log")).unwrap_or_default();
    assert_eq!(ending.trim(), "exit 0", "the script flashed successfully:\n{script_log}");
    assert_eq!(installs(&site, "scripted"), expected(&[("BIOS", 1)]));
    assert_stalled_in(&site, "scripted", "WaitingForScript", "after the script finished, with no worker").await;

    worker.restart().await;
    assert_compliant(&site, "scripted", &["uefi"]).await;
    assert_eq!(site.fleet.versions("scripted"), versions(&[("BIOS", "3.0")]));
    assert_eq!(installs(&site, "scripted"), expected(&[("BIOS", 1)]), "flashed once: the script was not run again");
    assert_eq!(uploads(&site, "scripted"), 1);

    let history = site.history_json("scripted").await;
    let records = activity_records(&history, ACT_RUN_SCRIPT);
    assert_eq!(records.len(), 1, "the script activity ran once: {records:#?}");
    let hit = interrupted(&records, ACT_RUN_SCRIPT);
    assert!(hit.timed_out.is_some() && !hit.completed, "ended by its heartbeat timeout: {hit:?}");

    // The password reached the script (the BMC accepted its Basic credentials) and nothing else:
    // not the history (payloads decoded), not the worker's log.
    assert!(history_contains(&history, "scripts/flash.sh"), "the search sees decoded payloads");
    assert!(!history_contains(&history, PASSWORD), "the BMC password is in the workflow history");
    let log = worker.log();
    assert!(log.contains("running Core-local script"), "the worker log covers the script run");
    assert!(!log.contains(PASSWORD), "the BMC password is in the worker log");
    site.shutdown().await;
}
