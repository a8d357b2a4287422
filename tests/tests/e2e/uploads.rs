//! End-to-end: an image is never flashed twice, and `max_uploads` holds (issue 11, findings 7, 10,
//! 11). The real `hostfw-worker` binary runs as a child process against a real Temporal dev
//! server and bmc-sim over HTTP.
//!
//! - A BMC whose flash outlasts the worker: the worker is killed with SIGKILL right after the BMC
//!   accepted the POST; the restarted worker's retried upload follows the task still running on
//!   the BMC instead of POSTing the image again.
//! - The Temporal server stopped for longer than the heartbeat timeout while hosts wait for upload
//!   slots: the attempts that could not heartbeat never POST, the server's retries do, once each;
//!   the BMCs never run more update tasks at once than `max_uploads`.
//! - An image whose content differs from the catalog's `sha256` is never uploaded.
//!
//! bmc-sim counts per host the update tasks it accepted (`uploads`), every update request that
//! reached its update slot, refused ones included (`update_requests`), the installs per member,
//! and fleet-wide the most update tasks running at once (`max_concurrent_uploads`).
//!
//! Needs the worker binary: `cargo build -p hostfw-worker --bins` (or `HOSTFW_WORKER_BIN`).

use std::collections::BTreeMap;
use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_tests::fixtures::r760_bios;
use hostfw_tests::{activity_records, history_contains, ChildWorker, Site, SiteSpec, SiteToml};
use hostfw_workflows::names::ACT_UPLOAD;
use hostfw_workflows::HostOutcome;

/// The site: the R760's BIOS; a dead worker's (or an unreachable server's) activity times out
/// after 5 s; `max_uploads` site-wide upload slots.
fn config(max_uploads: i64) -> SiteToml {
    SiteToml::default().model(&r760_bios()).heartbeat_timeout("5s").max_retries(5).max_uploads(max_uploads)
}

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];

/// `hosts` Dell BMCs (multipart push, Dell task style, applied at once) whose flash takes
/// `task_seconds`, each with only the BIOS behind the catalog.
fn fleet(hosts: usize, task_seconds: f64) -> String {
    let mut fleet = format!(
        "[defaults]\nusername = \"root\"\npassword = \"p\"\ntask_seconds = {task_seconds}\nreset_seconds = 0.3\n\
         upload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"Immediate\"\n"
    );
    for n in 0..hosts {
        fleet.push_str(&format!(
            "[[host]]\nid = \"h{n}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

async fn start(fleet: &str, max_uploads: i64) -> (Site, ChildWorker) {
    let spec = SiteSpec {
        fleet,
        config: config(max_uploads),
        images: IMAGES,
        external_worker: true,
        temporal_db: true,
        ..SiteSpec::default()
    };
    let site = Site::start(spec).await.expect("site starts");
    let worker = ChildWorker::start(&site).await;
    (site, worker)
}

fn host_stats(site: &Site, host: &str) -> hostfw_bmc_sim::HostStats {
    site.fleet.stats().per_host[host].clone()
}

fn once() -> BTreeMap<String, u64> {
    [("BIOS".to_string(), 1)].into_iter().collect()
}

/// The host ended compliant with its BIOS installed, never through a failed attempt.
async fn assert_compliant(site: &Site, host: &str) {
    let outcome = site.host_result(host).await.expect("workflow completes");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{host}: not compliant: {outcome:?}");
    let history = site.store.history_list(host, 200).await.unwrap();
    assert!(
        !history.iter().any(|h| h.substate == Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade)),
        "{host}: went through a failed attempt: {history:?}"
    );
    assert_eq!(site.fleet.versions(host), vec![("BIOS".to_string(), "3.0".to_string())]);
}

/// Finding 7: the worker dies right after the BMC accepted the image, and the BMC flashes for
/// 20 s. The retried upload finds the task running and follows it: one update request, one task,
/// one install.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_upload_follows_the_flash_its_killed_attempt_started() {
    let fleet = fleet(1, 20.0);
    let (site, mut worker) = start(&fleet, 2).await;
    // Park the upload before its POST by holding every slot, then make the BMC slow to answer
    // (it still acts at once) and let the upload go.
    let mut held = Vec::new();
    for holder in ["uploads-test-1", "uploads-test-2"] {
        held.push((site.store.upload_slot_acquire(holder, 2, 120_000).await.unwrap().expect("a free slot"), holder));
    }
    site.cli(&["host", "reprovision", "set", "--id", "h0"]).await.unwrap();
    site.wait_for("the upload to wait for a slot", Duration::from_secs(60), || async {
        site.pending_activities("h0")
            .await
            .into_iter()
            .any(|a| a.name == ACT_UPLOAD && a.heartbeat.contains("upload slots"))
            .then_some(())
    })
    .await;
    site.fleet.set_fault("h0", Fault { slow_response_secs: 2.0, ..Fault::default() }).unwrap();
    for (grant, holder) in held {
        site.store.upload_slot_release(grant, holder).await.unwrap();
    }
    site.wait_for("the BMC to accept the upload POST", Duration::from_secs(120), || async {
        (host_stats(&site, "h0").uploads >= 1).then_some(())
    })
    .await;
    // The answer (with the task's address) is still held back: the worker dies never learning it.
    worker.kill_9();
    site.fleet.set_fault("h0", Fault::default()).unwrap();
    assert!(site.fleet.uploads_in_flight() > 0, "killed while the BMC flashes");

    // Restart at once: the BMC is still flashing when the retried upload runs.
    worker.restart().await;
    site.wait_for("the retried upload to end, or a second update request", Duration::from_secs(90), || async {
        if host_stats(&site, "h0").update_requests > 1 {
            return Some(());
        }
        let history = site.history_json("h0").await;
        activity_records(&history, ACT_UPLOAD).first().filter(|r| r.completed || r.timed_out.is_some()).map(|_| ())
    })
    .await;
    assert_eq!(host_stats(&site, "h0").update_requests, 1, "the retried upload POSTed the image again");
    assert!(site.fleet.uploads_in_flight() > 0, "the retried upload ended while the first flash still ran");
    assert_compliant(&site, "h0").await;
    let stats = host_stats(&site, "h0");
    assert_eq!(stats.installs, once(), "installed once");
    assert_eq!(stats.uploads, 1, "one update task");
    assert_eq!(stats.update_requests, 1, "one update request: the retried upload did not POST again");

    let history = site.history_json("h0").await;
    let records = activity_records(&history, ACT_UPLOAD);
    assert_eq!(records.len(), 1, "one upload activity: {records:#?}");
    assert!(records[0].attempt >= 2 && records[0].completed, "retried after the kill and completed: {records:?}");
    assert!(history_contains(&history, "RunningTask"), "the retried upload followed the running task");
    site.shutdown().await;
}

/// Finding 10: the upload returns once the BMC accepted the image, and the workflow schedules the
/// task wait afterwards, however late. Nothing may renew the slot in that gap (here: the worker is
/// killed right after the upload completed), so the lease the upload leaves must already cover
/// the whole task (`redfish.task_timeout`, 2 min in these sites), not one 60 s lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slot_stays_held_between_the_upload_and_the_task_wait() {
    let fleet = fleet(1, 20.0);
    let (site, mut worker) = start(&fleet, 1).await;
    site.cli(&["host", "reprovision", "set", "--id", "h0"]).await.unwrap();
    site.wait_substate("h0", "WaitingForFirmwareUpgrade", Duration::from_secs(60)).await;
    worker.kill_9();
    assert!(site.fleet.uploads_in_flight() > 0, "the BMC flashes while no worker runs");
    let held = site.store.upload_slots_held().await.unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
    let left_ms = held[0].expires_at_ms - hostfw_store::now_ms();
    assert!(
        left_ms > 100_000,
        "the slot of a running task expires in {left_ms} ms, before the task's 2 min bound: another upload could start"
    );
    worker.restart().await;
    assert_compliant(&site, "h0").await;
    assert!(site.store.upload_slots_held().await.unwrap().is_empty(), "the task wait released the slot");
    assert_eq!(host_stats(&site, "h0").installs, once());
    site.shutdown().await;
}

/// Take the site's only upload slot (held by the test), request h0 and wait until its upload waits
/// for that slot; the grant to release.
async fn hold_the_slot_while_h0_waits(site: &Site) -> hostfw_store::SlotGrant {
    let grant = site.store.upload_slot_acquire("uploads-test", 1, 120_000).await.unwrap().expect("the slot");
    site.cli(&["host", "reprovision", "set", "--id", "h0"]).await.unwrap();
    site.wait_for("the upload to wait for the slot", Duration::from_secs(60), || async {
        site.pending_activities("h0")
            .await
            .into_iter()
            .any(|a| a.name == ACT_UPLOAD && a.heartbeat.contains("upload slots"))
            .then_some(())
    })
    .await;
    grant
}

/// Finding 10: waiting for a slot is cheap. An upload waits 10 s for the only slot (held by the
/// test); the waiter tries the slot table on a growing, jittered interval (0.5 s to 5 s), not every
/// 250 ms (40 tries in 10 s before). Runs the worker in this process to read its counter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_slot_polls_the_database_rarely() {
    let fleet = fleet(1, 1.0);
    let spec = SiteSpec { fleet: &fleet, config: config(1), images: IMAGES, exclusive: true, ..SiteSpec::default() };
    let site = Site::start(spec).await.expect("site starts");
    let grant = hold_the_slot_while_h0_waits(&site).await;
    let before = hostfw_activities::upload_slot::acquire_tries();
    // The measurement window (not a synchronisation).
    tokio::time::sleep(Duration::from_secs(10)).await;
    let tries = hostfw_activities::upload_slot::acquire_tries() - before;
    eprintln!("one waiter tried the slot table {tries} times in 10 s");
    assert!(tries <= 8, "{tries} tries of the slot table in 10 s by one waiter");
    site.store.upload_slot_release(grant, "uploads-test").await.unwrap();
    assert_compliant(&site, "h0").await;
    site.shutdown().await;
}

/// Finding 11, one attempt: the upload waits for the only slot; the Temporal server is stopped,
/// and the slot is freed during the outage. The attempt can take the slot, but it cannot heartbeat
/// any more (the outage lasts longer than the heartbeat timeout): it must not POST. Once the server
/// is back, its retry uploads, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_that_cannot_heartbeat_does_not_post() {
    let fleet = fleet(1, 3.0);
    let (mut site, _worker) = start(&fleet, 1).await;
    let grant = hold_the_slot_while_h0_waits(&site).await;
    site.stop_temporal().await;
    site.store.upload_slot_release(grant, "uploads-test").await.unwrap();
    // The outage itself (not a synchronisation): longer than the 5 s heartbeat timeout.
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_eq!(
        host_stats(&site, "h0").update_requests,
        0,
        "an upload attempt that could not heartbeat POSTed the image during the outage"
    );
    site.start_temporal().await;

    assert_compliant(&site, "h0").await;
    let stats = host_stats(&site, "h0");
    assert_eq!(stats.installs, once(), "installed once");
    assert_eq!((stats.uploads, stats.update_requests), (1, 1), "one update request, by the retried attempt");
    site.shutdown().await;
}

/// Finding 11: 8 hosts, `max_uploads = 2`; while 6 of them wait for a slot the Temporal server is
/// stopped for 12 s, longer than the 5 s heartbeat timeout. The waiting attempts cannot heartbeat:
/// they must not POST (the server retries them), so every host installs its BIOS exactly once,
/// through exactly one update request, and the BMCs never run more than 2 update tasks at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_outage_longer_than_the_heartbeat_timeout_never_flashes_twice() {
    const HOSTS: usize = 8;
    const MAX_UPLOADS: u64 = 2;
    let fleet = fleet(HOSTS, 3.0);
    let (mut site, worker) = start(&fleet, 2).await;
    let hosts: Vec<String> = (0..HOSTS).map(|n| format!("h{n}")).collect();
    for host in &hosts {
        site.cli(&["host", "reprovision", "set", "--id", host]).await.unwrap();
    }
    site.wait_for("most hosts to wait for an upload slot", Duration::from_secs(90), || async {
        let mut waiting = 0;
        for host in &hosts {
            let pending = site.pending_activities(host).await;
            waiting += pending.iter().filter(|a| a.name == ACT_UPLOAD && a.heartbeat.contains("upload slots")).count();
        }
        (waiting >= HOSTS - MAX_UPLOADS as usize).then_some(())
    })
    .await;
    site.stop_temporal().await;
    // The outage itself (not a synchronisation): longer than the heartbeat timeout.
    tokio::time::sleep(Duration::from_secs(12)).await;
    site.start_temporal().await;

    for host in &hosts {
        assert_compliant(&site, host).await;
    }
    let stats = site.fleet.stats();
    let mut twice = Vec::new();
    for host in &hosts {
        let s = &stats.per_host[host];
        if s.installs != once() || s.uploads != 1 || s.update_requests != 1 {
            twice.push(format!(
                "{host}: installs {:?}, tasks {}, update requests {}",
                s.installs, s.uploads, s.update_requests
            ));
        }
    }
    let log = worker.log();
    let stopped = log.matches("stops before any irreversible step").count();
    eprintln!(
        "outage: max concurrent update tasks {}, attempts stopped before their POST (log lines) {stopped}",
        stats.max_concurrent_uploads
    );
    assert!(twice.is_empty(), "hosts flashed more than once: {twice:#?}");
    assert!(
        stats.max_concurrent_uploads <= MAX_UPLOADS,
        "{} update tasks at once under max_uploads = {MAX_UPLOADS}",
        stats.max_concurrent_uploads
    );
    site.shutdown().await;
}

/// A catalog `sha256` that the image on disk does not match: the worker never uploads it, and the
/// failure names both digests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_that_does_not_match_its_catalog_digest_is_never_uploaded() {
    let wrong = "0".repeat(64);
    let model = hostfw_tests::HostModel::new("r760", "Dell", "PowerEdge R760").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [hostfw_tests::Firmware::file("3.0", "dell/bios.bin").set("sha256", wrong.as_str())],
    );
    let spec = SiteSpec {
        fleet: &fleet(1, 0.3),
        config: SiteToml::default().model(&model).max_retries(0),
        images: IMAGES,
        ..SiteSpec::default()
    };
    let site = Site::start(spec).await.expect("site starts");
    site.cli(&["host", "reprovision", "set", "--id", "h0"]).await.unwrap();
    site.wait_for("h0's budget spent", Duration::from_secs(60), || async {
        site.status("h0").await.filter(|s| s.exhausted)
    })
    .await;
    let history = site.store.history_list("h0", 20).await.unwrap();
    assert!(
        history.iter().any(|h| h.message.contains(&format!("but the catalog says {wrong}"))),
        "the failure names the digests: {history:#?}"
    );
    assert_eq!(site.fleet.stats().per_host["h0"].update_requests, 0, "nothing reached the BMC's update service");
    site.shutdown().await;
}
