//! End-to-end: a worker upgrade under a running rollout (issue 28, item 2), with the workers as
//! child processes on a real Temporal dev server and bmc-sim.
//!
//! Build A is the worker as it was before workflow change 1 (`approval-recheck`): the same binary
//! with `HOSTFW_EMULATE_BUILD_THROUGH_CHANGE=0`, which makes that change absent exactly as a build
//! without its code (its old branch runs, its marker is never asked for); see
//! `hostfw_workflows::versions`. Build B is the current worker.
//!
//! The rolling upgrade of docs/deploy.md, step by step:
//! 1. on A: two assigned hosts park waiting for their tenants' approval, and two unassigned
//!    hosts are mid-flash (a 12 s BMC update task);
//! 2. B starts beside A with `[worker] workflow_changes_through = 0` (A's number), then A is
//!    stopped with SIGTERM (its running flashes finish first);
//! 3. a third assigned host is requested on B while the pin holds: it parks the old way;
//! 4. the pin is removed and B reloads its config (SIGHUP, a live key);
//! 5. a fourth assigned host is requested: it takes the change. Its approval is recorded on the
//!    request without any signal, as when the signal is lost, and the change's recheck of the
//!    stored approval starts it (this records `tests/histories/approval-recheck.json`);
//! 6. the parked hosts are approved.
//!
//! Every host ends compliant; no workflow task failed (a nondeterminism error would fail one)
//! and neither worker logged one; every BIOS was installed once and uploaded once; only the run
//! started after the pin was lifted carries the change's marker.

use std::time::Duration;

use hostfw_tests::fixtures::r760_bios;
use hostfw_tests::history::{history_events, patch_markers};
use hostfw_tests::{Catalog, ChildWorker, Site, SiteSpec, SiteToml};
use hostfw_workflows::versions::Change;
use hostfw_workflows::HostOutcome;

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];
const PARKED: &[&str] = &["p1", "p2"];
const FLASHING: &[&str] = &["f1", "f2"];
/// Requested on B while the pin holds.
const PINNED: &str = "p3";
/// Requested on B once the change is active.
const NEW: &str = "n1";

fn fleet() -> String {
    let mut fleet = String::from(
        "[defaults]\ntask_seconds = 0.3\nreset_seconds = 0.2\nupload_style = \"multipart\"\ntask_style = \"dell\"\n\
         apply_time = \"Immediate\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n",
    );
    for id in ["p1", "p2", "p3", "n1", "f1", "f2"] {
        // The flashing hosts' update task runs long enough to span the switch from A to B.
        let task = if FLASHING.contains(&id) { "task_seconds = 12.0\n" } else { "" };
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nbmc_address = \"127.0.0.1:0\"\n{task}firmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

fn config() -> SiteToml {
    SiteToml::default()
        .catalog(&Catalog::of([r760_bios()]))
        .site_workflows(false)
        .host_reprovision("approval_recheck", "2s")
}

async fn failed_workflow_tasks(site: &Site, id: &str) -> Vec<serde_json::Value> {
    history_events(&site.history_json(id).await)
        .into_iter()
        .filter(|(_, key, _)| key == "WorkflowTaskFailedEventAttributes")
        .map(|(_, _, a)| a)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_worker_upgrade_keeps_parked_and_flashing_hosts_and_activates_the_change_only_when_allowed() {
    let fleet = fleet();
    let assigned = [("p1", "inst-p1"), ("p2", "inst-p2"), ("p3", "inst-p3"), ("n1", "inst-n1")];
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: config(),
        images: IMAGES,
        assigned: &assigned,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();

    // 1. Build A: hosts park for approval and flash.
    let mut a =
        ChildWorker::start_extra_with(&site, "a", site.toml.clone(), &[("HOSTFW_EMULATE_BUILD_THROUGH_CHANGE", "0")])
            .await;
    assert!(a.log().contains("behaving as the build whose newest workflow change is 0"), "{}", a.log_tail(40));
    site.cli(&["site-explorer", "explore"]).await.unwrap();
    for id in PARKED.iter().chain(FLASHING) {
        site.cli(&["host", "reprovision", "set", "--id", id]).await.unwrap();
    }
    for id in PARKED {
        site.wait_substate(id, "WaitingForApproval", Duration::from_secs(60)).await;
    }
    for id in FLASHING {
        site.wait_for(&format!("{id} to be mid-flash on A"), Duration::from_secs(60), || async {
            let pending = site.pending_activities(id).await;
            pending.iter().any(|p| p.name == hostfw_workflows::names::ACT_WAIT_TASK).then_some(())
        })
        .await;
    }

    // 2. Build B beside A, pinned to A's changes; then A stops gracefully.
    let pinned = site.toml.clone().set("worker", "workflow_changes_through", 0);
    let b = ChildWorker::start_extra_with(&site, "b", pinned, &[]).await;
    assert!(b.log().contains("workflow changes after 0 stay inactive"), "{}", b.log_tail(40));
    let status = a.terminate().await;
    assert!(status.success(), "A stopped cleanly: {status}\n{}", a.log_tail(40));
    for id in FLASHING {
        assert!(
            site.workflow_running(id).await || site.fleet.versions(id).iter().any(|(_, v)| v == "3.0"),
            "{id} is still in its update or done"
        );
    }

    // 3. Requested on B under the pin: it parks the old way.
    site.cli(&["host", "reprovision", "set", "--id", PINNED]).await.unwrap();
    site.wait_substate(PINNED, "WaitingForApproval", Duration::from_secs(60)).await;

    // 4. The pin lifted: a live key, applied without a restart.
    b.reload_with(site.toml.clone());
    site.wait_for("B to apply the lifted pin", Duration::from_secs(30), || async {
        let log = b.log();
        log.lines()
            .any(|l| l.contains("config reload applied") && l.contains("worker.workflow_changes_through"))
            .then_some(())
    })
    .await;

    // 5. A new run takes the change: an approval recorded without its signal starts it.
    site.cli(&["host", "reprovision", "set", "--id", NEW]).await.unwrap();
    site.wait_substate(NEW, "WaitingForApproval", Duration::from_secs(60)).await;
    let taken = site.store.request_approve(NEW, "tenant-n1", hostfw_store::now_ms()).await.unwrap();
    assert_eq!(taken, hostfw_store::ApprovalTaken::Approved, "recorded on the request, no signal sent");
    let outcome = site.host_result(NEW).await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{NEW}: {outcome:?}");

    // 6. The parked hosts are approved, through the signal as usual.
    for id in PARKED.iter().chain([&PINNED]) {
        site.cli(&["instance", "reboot", "--instance", &format!("inst-{id}"), "--apply-updates-on-reboot"])
            .await
            .unwrap();
    }

    let change = Change::ApprovalRecheck.id();
    for id in PARKED.iter().chain(FLASHING).chain([&PINNED, &NEW]) {
        let outcome = site.host_result(id).await.unwrap();
        assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{id}: {outcome:?}");
        assert_eq!(site.fleet.versions(id), vec![("BIOS".into(), "3.0".into())], "{id}");
        let stats = site.fleet.stats().per_host[*id].clone();
        assert_eq!(stats.installs.get("BIOS"), Some(&1), "{id}: installed once: {stats:?}");
        assert_eq!(stats.uploads, 1, "{id}: uploaded once: {stats:?}");
        let failed = failed_workflow_tasks(&site, id).await;
        assert!(failed.is_empty(), "{id}: workflow tasks failed: {failed:?}");
        let marked = patch_markers(&site.history_json(id).await).contains(&change.to_string());
        assert_eq!(marked, *id == NEW, "{id}: the {change} marker only in the run started after the pin was lifted");
    }
    for (name, log) in [("A", a.log()), ("B", b.log())] {
        assert!(!log.to_lowercase().contains("nondetermin"), "worker {name} logged a nondeterminism error:\n{log}");
    }
    // The recheck is what started the new run: with no autoreboot period and no deadline, the
    // only timer before its update began is the change's; no approval signal reached it.
    let events = history_events(&site.history_json(NEW).await);
    let protect = events
        .iter()
        .position(|(_, key, a)| {
            key == "ActivityTaskScheduledEventAttributes" && a["activity_type"]["name"] == "hostfw.host.protect"
        })
        .expect("the update began");
    let timers = events[..protect].iter().filter(|(_, key, _)| key == "TimerStartedEventAttributes").count();
    assert!(timers >= 1, "{NEW}: no recheck timer before the update began: {events:?}");
    let signals: Vec<&serde_json::Value> = events
        .iter()
        .filter(|(_, key, _)| key == "WorkflowExecutionSignaledEventAttributes")
        .map(|(_, _, a)| &a["signal_name"])
        .collect();
    assert!(signals.is_empty(), "{NEW} was signalled: {signals:?}");
    site.record_history(NEW, "approval-recheck").await;
    drop(b);
    site.shutdown().await;
}
