//! End-to-end: failures and recovery (seed "Failures and recovery"), the manual platform gate,
//! assigned hosts and requests (seed "Assigned hosts need reboot approval", `clear`), on a real
//! Temporal dev server against bmc-sim with injected faults.

use std::time::Duration;

use hostfw_bmc_sim::{Fault, HttpErrors};
use hostfw_tests::fixtures::{r760, sim_lockdown, strings};
use hostfw_tests::history::activity_records;
use hostfw_tests::{Catalog, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::HostOutcome;

/// The R760 with a lockdown switch (BMC and BIOS), and a GB200 (MNNVL-capable, BMC only).
fn r760_lockdown() -> HostModel {
    r760().set("lockdown", sim_lockdown())
}

fn config() -> SiteToml {
    let gb200 = HostModel::new("gb200", "Nvidia", "GB200 NVL").set("mnnvl_capable", true).ordering(&["bmc"]).component(
        "bmc",
        "^BMC$",
        [Firmware::file("2.0", "dell/bmc.bin")],
    );
    SiteToml::default().catalog(&Catalog::of([r760_lockdown(), gb200]))
}

const IMAGES: &[(&str, &str, &str)] = &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0")];

const FLEET: &str = r#"
[defaults]
task_seconds = 0.3
reset_seconds = 0.2
manager_reset_seconds = 0.3
upload_style = "multipart"
task_style = "dell"

[[host]]
id = "h1"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" }, { id = "BIOS", version = "1.0" } ]

[[host]]
id = "h2"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" }, { id = "BIOS", version = "3.0" } ]

[[host]]
id = "gb"
vendor = "Nvidia"
model = "GB200 NVL"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" } ]
"#;

fn spec<'a>() -> SiteSpec<'a> {
    SiteSpec { fleet: FLEET, config: config(), images: IMAGES, ..SiteSpec::default() }
}

fn count(site_history: &[hostfw_store::HistoryEntry], substate: &str) -> usize {
    site_history.iter().filter(|h| h.substate.map(|s| s.as_str()) == Some(substate)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_is_retried_after_the_interval_and_recovers() {
    let site = Site::start(SiteSpec { config: config().max_retries(5), ..spec() }).await.unwrap();
    site.fleet.set_fault("h1", Fault { fail_next_tasks: 1, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    let outcome = site.host_result("h1").await.expect("recovers after one retry");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let history = site.store.history_list("h1", 200).await.unwrap();
    assert!(count(&history, "FailedFirmwareUpgrade") >= 1, "{history:?}");
    let failed = history.iter().find(|h| h.message.contains("injected failure")).expect("the BMC's message recorded");
    assert_eq!(failed.substate, Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade));
    assert!(history.iter().any(|h| h.message.starts_with("retry 1/5")), "{history:?}");
    // Issue 26 item 12: the task that failed is a failed activity with the BMC's message first
    // (red in the Web UI); the retry's task completed.
    let tasks = activity_records(&site.history_json("h1").await, hostfw_workflows::names::ACT_WAIT_TASK);
    let failed: Vec<_> = tasks.iter().filter_map(|t| t.failed.as_deref()).collect();
    assert_eq!(failed.len(), 1, "{tasks:?}");
    assert!(failed[0].contains("UpdateTaskFailed") && failed[0].contains("injected failure"), "{tasks:?}");
    assert!(tasks.iter().any(|t| t.completed), "{tasks:?}");
    let status = site.status("h1").await.unwrap();
    assert_eq!(status.retry_count, 1);
    assert_eq!(site.fleet.versions("h1"), vec![("BMC".into(), "2.0".into()), ("BIOS".into(), "3.0".into())]);
    let shown = site.cli(&["machine", "show", "h1", "--history-count", "50"]).await.unwrap();
    assert!(shown.contains("STATE:               Ready"), "{shown}");
    assert!(shown.contains("HostReprovision/FailedFirmwareUpgrade"), "history with states: {shown}");
    assert!(shown.contains("injected failure"), "history with reasons: {shown}");
    site.record_history("h1", "retry-after-failed-task").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_are_bounded_then_exhausted_until_an_operator_resets() {
    let site = Site::start(SiteSpec { config: config().max_retries(2), ..spec() }).await.unwrap();
    site.fleet.set_fault("h1", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    // Reset on a host with no request says so and fails.
    let err = site.cli(&["managed-host", "reset-host-reprovisioning", "--machine", "h1"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("no reprovisioning request"), "{err:#}");

    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    let status = site
        .wait_for("the retry budget to be spent", Duration::from_secs(90), || async {
            site.status("h1").await.filter(|s| s.exhausted)
        })
        .await;
    assert_eq!(status.retry_count, 2);
    let request = site.store.request_get("h1").await.unwrap().expect("request kept while failed");
    assert_eq!(request.retry_count, 2, "the count is persisted");
    let machine = site.store.machine_get("h1").await.unwrap().unwrap();
    assert_eq!(machine.substate, Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade));
    assert!(!site.store.health_reports_for("h1").await.unwrap().is_empty(), "still protected");
    let uploads_when_exhausted = site.fleet.stats().per_host["h1"].uploads;
    assert_eq!(uploads_when_exhausted, 3, "first attempt + 2 retries");

    // Issue 13 finding 5: exhausted is visible as such, not as a host waiting to retry: in
    // `reprovision list`, `managed-host show` and the Web UI's search attribute.
    let listed = site.cli(&["host", "reprovision", "list"]).await.unwrap();
    assert!(listed.contains("FailedFirmwareUpgrade (retries exhausted 2/2"), "{listed}");
    let shown = site.cli(&["managed-host", "show", "h1"]).await.unwrap();
    assert!(shown.contains("Substate:  FailedFirmwareUpgrade (retries exhausted 2/2"), "{shown}");
    let exhausted = site
        .wait_for("the Web UI to list h1 as exhausted", Duration::from_secs(30), || async {
            let ids = site.workflow_ids("HostfwRetriesExhausted = true").await;
            (!ids.is_empty()).then_some(ids)
        })
        .await;
    assert_eq!(exhausted, vec!["host-reprovision/h1".to_string()]);

    // The operator fixes the cause, then resets: firmware checking restarts, the count is cleared.
    site.fleet.set_fault("h1", Fault::default()).unwrap();
    site.cli(&["managed-host", "reset-host-reprovisioning", "--machine", "h1"]).await.unwrap();
    let outcome = site.host_result("h1").await.expect("compliant after the reset");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let history = site.store.history_list("h1", 200).await.unwrap();
    assert!(history.iter().any(|h| h.message.contains("reset by an operator")), "{history:?}");
    site.wait_for("the reset to clear HostfwRetriesExhausted", Duration::from_secs(30), || async {
        site.workflow_ids("HostfwRetriesExhausted = true").await.is_empty().then_some(())
    })
    .await;
    site.record_history("h1", "exhausted-attribute-then-reset").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mnnvl_host_waits_for_the_manual_platform_procedure() {
    let site = Site::start(SiteSpec { config: config().firmware_global("requires_manual_upgrade", true), ..spec() })
        .await
        .unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "gb"]).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    // A non-MNNVL model is not gated.
    let outcome = site.host_result("h2").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }));
    site.wait_substate("gb", "WaitingForManualUpgrade", Duration::from_secs(90)).await;
    assert_eq!(site.fleet.stats().per_host["gb"].uploads, 0, "nothing selected before the mark");
    site.cli(&["host", "reprovision", "mark-manual-upgrade-complete", "--id", "gb"]).await.unwrap();
    let outcome = site.host_result("gb").await.unwrap();
    let HostOutcome::Compliant { installed } = outcome else { panic!("{outcome:?}") };
    assert_eq!(installed.len(), 1, "the normal loop ran for what still differed");
    assert_eq!(site.fleet.versions("gb"), vec![("BMC".into(), "2.0".into())]);
    site.record_history("gb", "manual-platform-gate").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assigned_host_waits_for_tenant_approval() {
    let site = Site::start(SiteSpec { assigned: &[("h1", "inst-7")], ..spec() }).await.unwrap();
    assert_eq!(site.fleet.lockdown("h1"), Some(true));
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.wait_substate("h1", "WaitingForApproval", Duration::from_secs(90)).await;
    // Issue 13 item 12: the R760 has no manual platform gate; marking it complete is refused and
    // changes nothing (it used to "succeed" and claim firmware checking went on).
    let audit_before = site.store.audit_list(100).await.unwrap().len();
    let refused = site.cli(&["host", "reprovision", "mark-manual-upgrade-complete", "--id", "h1"]).await.unwrap_err();
    let refused = format!("{refused:#}");
    assert!(refused.contains("has no manual platform gate") && refused.contains("WaitingForApproval"), "{refused}");
    assert!(refused.contains("nothing was changed"), "{refused}");
    assert_eq!(site.store.audit_list(100).await.unwrap().len(), audit_before);
    assert!(site.store.request_get("h1").await.unwrap().unwrap().manual_upgrade_completed_ms.is_none());
    let machine = site.store.machine_get("h1").await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::Assigned, "the instance is not interrupted");
    assert_eq!(site.fleet.stats().per_host["h1"].uploads, 0);
    assert_eq!(site.fleet.stats().per_host["h1"].system_resets, 0);
    let err = site.cli(&["instance", "reboot", "--instance", "nope", "--apply-updates-on-reboot"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("no machine runs instance nope"), "{err:#}");

    site.cli(&["instance", "reboot", "--instance", "inst-7", "--apply-updates-on-reboot"]).await.unwrap();
    let outcome = site.host_result("h1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let machine = site.store.machine_get("h1").await.unwrap().unwrap();
    assert_eq!((machine.state.as_str(), machine.instance_id.as_deref()), ("Assigned", Some("inst-7")));
    assert_eq!(site.fleet.lockdown("h1"), Some(true), "lockdown back on");
    assert_eq!(site.fleet.stats().per_host["h1"].setting_patches, 2, "lockdown turned off, then on again");
    assert_eq!(site.fleet.booted_image("h1").as_deref(), Some("os"), "back in its own OS");
    let history = site.store.history_list("h1", 200).await.unwrap();
    for expected in ["WaitingForApproval", "PlatformConfiguration", "DiscoveryBoot", "CheckingFirmwareV2"] {
        assert!(count(&history, expected) >= 1, "missing {expected}: {history:?}");
    }
    assert!(site.store.request_get("h1").await.unwrap().is_none());
    site.record_history("h1", "assigned-host-approved").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assigned_host_starts_when_the_autoreboot_period_opens() {
    let start = chrono::Utc::now() + chrono::Duration::seconds(3);
    let end = start + chrono::Duration::hours(1);
    let (from, to) = (start.format("%Y-%m-%dT%H:%M:%SZ").to_string(), end.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    let window = strings(&[("start", &from), ("end", &to)]);
    let config = config().machine_updater("instance_autoreboot_period", window);
    let site = Site::start(SiteSpec { assigned: &[("h1", "inst-1")], config, ..spec() }).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.wait_substate("h1", "WaitingForApproval", Duration::from_secs(90)).await;
    let outcome = site.host_result("h1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let status = site.status("h1").await.unwrap();
    let approval = status.approval.unwrap_or_default();
    assert!(approval.starts_with("inside the instance autoreboot period (") && approval.contains(&from), "{approval}");
    assert!(chrono::Utc::now() >= start, "did not start before the period");
    // Issue 13 item 12: the history says why the host went ahead.
    let history = site.store.history_list("h1", 100).await.unwrap();
    assert!(
        history.iter().any(|h| h
            .message
            .starts_with("reprovisioning started by AdminCli (inside the instance autoreboot period (")),
        "{history:#?}"
    );
    site.shutdown().await;
}

/// Issue 11 finding 12: `clear` of an unassigned host's request that has not started must really
/// stop it. Before, the CLI said "cleared" while the workflow went on and updated the host.
/// No worker runs while the request is made and cleared, so the clear surely comes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clearing_an_unassigned_request_before_it_starts_stops_its_workflow() {
    let site = Site::start(SiteSpec { external_worker: true, ..spec() }).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    let printed = site.cli(&["host", "reprovision", "clear", "--id", "h1"]).await.unwrap();
    assert!(printed.contains("reprovisioning request of h1 cleared"), "{printed}");
    let _worker = hostfw_tests::ChildWorker::start(&site).await;
    let outcome = site.host_result("h1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Cancelled { .. }), "what clear said must be true: {outcome:?}");
    assert_eq!(site.fleet.stats().per_host["h1"].uploads, 0, "nothing was flashed");
    let machine = site.store.machine_get("h1").await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::Ready, "never protected");
    assert!(site.store.health_reports_for("h1").await.unwrap().is_empty(), "no health report left behind");
    assert!(site.store.request_get("h1").await.unwrap().is_none());
    site.record_history("h1", "cleared-unassigned-before-protect").await;
    site.shutdown().await;
}

/// Issue 11 finding 13: a `reset-host-reprovisioning` that arrives while FailedFirmwareUpgrade is
/// being recorded must not be swallowed. The BIOS goes through a Core-local script that fails
/// after a moment; the site database is held locked (a real SQLite writer lock: a database blip)
/// while the script runs, so the failure's record is in flight when the reset arrives. With
/// `max_retries = 0` the host is exhausted at once: a swallowed reset leaves it waiting for a
/// second one, an applied reset runs the next attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_that_arrives_while_the_failure_is_recorded_is_applied() {
    use sqlx::Connection;
    const FAILING: &str = "#!/bin/sh\necho run >> {SITE}/runs.txt\nsleep 3\necho 'flash refused' >&2\nexit 1\n";
    let files = [("firmware/scripts/fail.sh", FAILING)];
    let spec = SiteSpec {
        config: config()
            .model(&r760_lockdown().component("uefi", "^BIOS$", [Firmware::script("3.0", "scripts/fail.sh")]))
            .max_retries(0),
        files: &files,
        ..spec()
    };
    let site = Site::start(spec).await.unwrap();
    let runs = site.dir.path().join("runs.txt");
    let count_runs = || std::fs::read_to_string(&runs).map(|t| t.lines().count()).unwrap_or(0);
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    // The script runs (its lock claimed, its start written): only its end and what follows
    // meet the locked database.
    site.wait_for("the script to start", Duration::from_secs(60), || async { (count_runs() >= 1).then_some(()) }).await;

    // Hold the writer lock: the script's failure cannot be recorded.
    let db = site.dir.path().join("site.db");
    let mut lock = sqlx::sqlite::SqliteConnection::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut lock).await.unwrap();
    site.wait_for("the failure to be in its record", Duration::from_secs(60), || async {
        site.status("h1").await.filter(|s| s.substate == hostfw_model::HostSubstate::FailedFirmwareUpgrade)
    })
    .await;
    // The reset (signalled directly: the CLI's own database write would wait for the lock).
    let handle = site.client.get_workflow_handle::<hostfw_workflows::HostReprovisionWorkflow>(
        hostfw_workflows::host_reprovision_workflow_id("h1"),
    );
    handle
        .signal(
            hostfw_workflows::HostReprovisionWorkflow::reset_reprovisioning,
            "sre".to_string(),
            temporalio_client::WorkflowSignalOptions::default(),
        )
        .await
        .unwrap();
    sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();
    drop(lock);

    // The reset is applied: the count is cleared and a second attempt runs. (Whether that attempt
    // runs the script again is the script lock's decision: a lock the first run could not release
    // during the blip makes it refuse, which is a failed attempt, not a lost reset.)
    let history = site
        .wait_for("the reset to start a second attempt", Duration::from_secs(60), || async {
            let history = site.store.history_list("h1", 100).await.ok()?;
            (count(&history, "WaitingForScript") >= 2).then_some(history)
        })
        .await;
    assert!(history.iter().any(|h| h.message.starts_with("reset by an operator")), "{history:?}");
    assert!(count_runs() >= 1);
    site.record_history("h1", "reset-while-recording-failure").await;
    site.shutdown().await;
}

/// Issue 11 finding 14: a tenant's approval recorded on the request is heard even when its signal
/// never reached the workflow (here: recorded while no worker runs, as a lost signal or a
/// workflow started again for an approved request would leave it). Before, the host waited for
/// a signal that never came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_recorded_without_its_signal_is_still_heard() {
    let site = Site::start(SiteSpec { assigned: &[("h2", "inst-2")], external_worker: true, ..spec() }).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    site.store.request_set_approval("h2", true).await.unwrap(); // recorded; no signal sent
    let _worker = hostfw_tests::ChildWorker::start(&site).await;
    let outcome = site.host_result("h2").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let status = site.status("h2").await.unwrap();
    assert_eq!(status.approval.as_deref(), Some("approved (recorded on the request)"));
    site.record_history("h2", "approval-read-from-request").await;
    site.shutdown().await;
}

/// Issue 26 item 6: a restarted workflow of an assigned host resumes; it does not ask again. The
/// autoreboot period approved h1's request (an approval stored nowhere else) and the update
/// started; its workflow is terminated mid-update, the period closes, and `doctor --fix` starts
/// it again. Before, the new run waited for an approval the host had already had, the host
/// sitting protected in its update; now it goes on and ends compliant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_workflow_of_an_approved_started_host_does_not_ask_again() {
    let start = chrono::Utc::now() - chrono::Duration::seconds(60);
    let end = chrono::Utc::now() + chrono::Duration::seconds(20);
    let (from, to) = (start.format("%Y-%m-%dT%H:%M:%SZ").to_string(), end.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    let config = config().machine_updater("instance_autoreboot_period", strings(&[("start", &from), ("end", &to)]));
    let site = Site::start(SiteSpec { assigned: &[("h1", "inst-1")], config, ..spec() }).await.unwrap();
    // The flash "never takes": the update stays in progress until the workflow is terminated.
    site.fleet.set_fault("h1", Fault { version_never_changes: true, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.wait_for("the update to be under way", Duration::from_secs(60), || async {
        let started = site.store.request_get("h1").await.ok()??.started_at_ms.is_some();
        let past = site.status("h1").await.is_some_and(|s| {
            matches!(
                s.substate,
                hostfw_model::HostSubstate::NewFirmwareReportedWait | hostfw_model::HostSubstate::ResetForNewFirmware
            )
        });
        (started && past).then_some(())
    })
    .await;
    let handle = site.client.get_workflow_handle::<hostfw_workflows::HostReprovisionWorkflow>(
        hostfw_workflows::host_reprovision_workflow_id("h1"),
    );
    handle.terminate(temporalio_client::WorkflowTerminateOptions::builder().reason("by hand").build()).await.unwrap();
    site.fleet.set_fault("h1", Fault::default()).unwrap();
    site.wait_for("the autoreboot period to close", Duration::from_secs(60), || async {
        (chrono::Utc::now() > end + chrono::Duration::seconds(1)).then_some(())
    })
    .await;
    site.wait_for("doctor to see the orphaned request", Duration::from_secs(30), || async {
        site.cli_full(&["doctor"]).await.1.contains("request-without-workflow").then_some(())
    })
    .await;
    site.cli(&["doctor", "--fix"]).await.unwrap();
    let outcome = site.host_result("h1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "h1 resumed and finished: {outcome:?}");
    // The period is closed: only the started request can have released the new run.
    let status = site.status("h1").await.unwrap();
    assert_eq!(status.approval.as_deref(), Some("approved (recorded on the request)"), "{status:?}");
    site.shutdown().await;
}

/// Issue 11 finding 2: `hostfw doctor` on a deliberately broken site lists every disagreement
/// between the site database and Temporal with its fix, and `--fix` repairs them:
/// - h1: a started request whose workflow an operator terminated by hand → started again, it
///   resumes from inventory and the host ends compliant;
/// - h2: an assigned host whose stored approval never reached its waiting workflow → signalled;
/// - gb: a host left protected (HostReprovision + health report) with no request → restored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_lists_and_repairs_a_broken_site() {
    let site = Site::start(SiteSpec { assigned: &[("h2", "inst-2")], ..spec() }).await.unwrap();
    site.fleet.set_fault("h1", Fault { fail_next_tasks: 1, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.wait_substate("h1", "FailedFirmwareUpgrade", Duration::from_secs(60)).await;
    let handle = site.client.get_workflow_handle::<hostfw_workflows::HostReprovisionWorkflow>(
        hostfw_workflows::host_reprovision_workflow_id("h1"),
    );
    handle.terminate(temporalio_client::WorkflowTerminateOptions::builder().reason("by hand").build()).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    site.wait_substate("h2", "WaitingForApproval", Duration::from_secs(90)).await;
    site.store.request_set_approval("h2", true).await.unwrap(); // stored; its signal was lost
    site.store
        .machine_set_state(
            "gb",
            hostfw_model::HostState::HostReprovision,
            Some(hostfw_model::HostSubstate::Protecting),
            "worker lost",
        )
        .await
        .unwrap();
    site.store
        .health_report_put(&hostfw_store::HealthReport {
            machine_id: "gb".into(),
            source: "host-fw-update".into(),
            alert_id: "HostUpdateInProgress".into(),
            message: "Host firmware update".into(),
            classifications: vec!["PreventAllocations".into()],
        })
        .await
        .unwrap();

    // Listed with the fix, exit status 1, nothing changed. (Requests younger than 5 s are not
    // judged: their workflow may be starting.)
    let (result, printed) = site
        .wait_for("doctor to see all three", Duration::from_secs(30), || async {
            let (result, printed) = site.cli_full(&["doctor"]).await;
            (printed.contains("h1") && printed.contains("h2") && printed.contains("gb")).then_some((result, printed))
        })
        .await;
    assert!(format!("{:#}", result.unwrap_err()).contains("3 of 3 inconsistencies left"), "{printed}");
    for line in ["request-without-workflow", "approval-not-heard", "protected-without-request", "Terminated"] {
        assert!(printed.contains(line), "{line} in:\n{printed}");
    }
    assert_eq!(site.store.machine_get("gb").await.unwrap().unwrap().state, hostfw_model::HostState::HostReprovision);

    site.cli(&["doctor", "--fix"]).await.unwrap();
    let outcome = site.host_result("h1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "h1 resumed and finished: {outcome:?}");
    let outcome = site.host_result("h2").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "h2 approved: {outcome:?}");
    let gb = site.store.machine_get("gb").await.unwrap().unwrap();
    assert_eq!(gb.state, hostfw_model::HostState::Ready);
    assert!(site.store.health_reports_for("gb").await.unwrap().is_empty());
    let printed = site.cli(&["doctor"]).await.unwrap();
    assert!(printed.contains("nothing to repair"), "{printed}");
    let audit = site.store.audit_list(20).await.unwrap();
    assert_eq!(audit.iter().filter(|a| a.action == "doctor --fix").count(), 3, "{audit:?}");
    site.shutdown().await;
}

/// Issue 11 finding 5: a stubborn host's workflow bounds its history by continuing as new, and
/// keeps its retry count, approval and status across runs. The dev server suggests continuing as
/// new after 60 events here (production: Temporal's own threshold, or 10,000 events at most).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stubborn_host_continues_as_new_and_keeps_its_count_approval_and_status() {
    let spec = SiteSpec {
        assigned: &[("h2", "inst-2")],
        config: config().max_retries(3),
        temporal_dynamic_config: &["limit.historyCount.suggestContinueAsNew=60"],
        ..spec()
    };
    let site = Site::start(spec).await.unwrap();
    site.fleet.set_fault("h2", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    site.wait_substate("h2", "WaitingForApproval", Duration::from_secs(90)).await;
    site.cli(&["instance", "reboot", "--instance", "inst-2", "--apply-updates-on-reboot"]).await.unwrap();
    let status = site
        .wait_for("the retry budget to be spent", Duration::from_secs(120), || async {
            site.status("h2").await.filter(|s| s.exhausted)
        })
        .await;
    assert_eq!(status.retry_count, 3, "the count survived the new runs");
    assert!(status.approval.as_deref().is_some_and(|a| a.starts_with("approved by")), "{:?}", status.approval);
    assert!(status.events.iter().any(|e| e.substate == hostfw_model::HostSubstate::WaitingForApproval), "status kept");
    let mut list = site.client.list_workflows(
        "WorkflowId = 'host-reprovision/h2' AND ExecutionStatus = 'ContinuedAsNew'",
        temporalio_client::WorkflowListOptions::builder().build(),
    );
    let mut continued = 0;
    while let Some(w) = futures::StreamExt::next(&mut list).await {
        w.unwrap();
        continued += 1;
    }
    assert!(continued >= 1, "the history was bounded by continuing as new");
    // The next run resumes where the last stopped: a reset after fixing the cause finishes it,
    // without asking the tenant again.
    site.fleet.set_fault("h2", Fault::default()).unwrap();
    site.cli(&["managed-host", "reset-host-reprovisioning", "--machine", "h2"]).await.unwrap();
    let outcome = site.host_result("h2").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.store.machine_get("h2").await.unwrap().unwrap().state, hostfw_model::HostState::Assigned);
    site.record_history("h2", "continued-as-new-run").await;
    site.shutdown().await;
}

/// Issue 11 finding 4: settings that may change are read when needed and pushed to running
/// workflows, not frozen into each request. The site config is changed and the worker restarted
/// (what an operator does): an exhausted host gets the raised retry budget, and an assigned host
/// already waiting for approval is released by an autoreboot period configured after its request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_settings_reach_workflows_that_already_wait() {
    let spec =
        SiteSpec { assigned: &[("h2", "inst-2")], config: config().max_retries(1), external_worker: true, ..spec() };
    let site = Site::start(spec).await.unwrap();
    let mut worker = hostfw_tests::ChildWorker::start(&site).await;
    site.fleet.set_fault("h1", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    let status = site
        .wait_for("h1's budget of 1 to be spent", Duration::from_secs(60), || async {
            site.status("h1").await.filter(|s| s.exhausted)
        })
        .await;
    assert_eq!(status.retry_count, 1);
    site.wait_substate("h2", "WaitingForApproval", Duration::from_secs(90)).await;

    // The operator raises the budget and opens an autoreboot period, then restarts the worker.
    let now = chrono::Utc::now();
    let config = std::fs::read_to_string(&site.config_path).unwrap();
    assert!(config.contains("max_retries = 1"), "{config}");
    let period = format!(
        "[machine_updater]\ninstance_autoreboot_period = {{ start = \"{}\", end = \"{}\" }}\n",
        (now - chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%M:%SZ"),
        (now + chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%M:%SZ")
    );
    let config = config.replace("max_retries = 1", "max_retries = 3").replacen("[machine_updater]\n", &period, 1);
    std::fs::write(&site.config_path, config).unwrap();
    worker.kill_9();
    worker.restart().await;

    let outcome = site.host_result("h2").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let approval = site.status("h2").await.unwrap().approval;
    assert!(
        approval.as_deref().is_some_and(|a| a.starts_with("inside the instance autoreboot period (")),
        "{approval:?}"
    );
    let status = site
        .wait_for("h1's raised budget of 3 to be spent", Duration::from_secs(90), || async {
            site.status("h1").await.filter(|s| s.exhausted && s.retry_count == 3)
        })
        .await;
    assert_eq!(status.retry_count, 3);
    let history = site.store.history_list("h1", 200).await.unwrap();
    assert!(history.iter().any(|h| h.message.starts_with("retry 3/3")), "{history:?}");
    site.record_history("h1", "retry-limits-read-after-push").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_removes_a_pending_request_and_refuses_a_started_one() {
    let site = Site::start(SiteSpec { assigned: &[("h2", "inst-2")], ..spec() }).await.unwrap();
    // Pending (assigned, not approved): cleared, workflow ends, nothing touched.
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    site.wait_substate("h2", "WaitingForApproval", Duration::from_secs(90)).await;
    site.cli(&["host", "reprovision", "clear", "--id", "h2"]).await.unwrap();
    let outcome = site.host_result("h2").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Cancelled { .. }), "{outcome:?}");
    assert!(site.store.request_get("h2").await.unwrap().is_none());
    assert_eq!(site.fleet.stats().per_host["h2"].uploads, 0);
    assert_eq!(site.store.machine_get("h2").await.unwrap().unwrap().state, hostfw_model::HostState::Assigned);
    // Issue 13 item 12: the Web UI no longer shows the cleared run as WaitingForApproval.
    site.wait_for("the cleared run to show Completed", Duration::from_secs(30), || async {
        let ids = site.workflow_ids("HostfwMachineId = 'h2' AND HostfwSubstate = 'Completed'").await;
        (!ids.is_empty()).then_some(())
    })
    .await;
    site.record_history("h2", "cleared-before-start-completed").await;

    // Started (a Ready host starts at once): refused with the reason, request kept.
    site.fleet.set_fault("h1", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.wait_substate("h1", "FailedFirmwareUpgrade", Duration::from_secs(90)).await;
    let err = site.cli(&["host", "reprovision", "clear", "--id", "h1"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("cannot be cleared"), "{err:#}");
    assert!(site.store.request_get("h1").await.unwrap().is_some());
    let err = site.cli(&["host", "reprovision", "clear", "--id", "h2"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("no reprovisioning request"), "{err:#}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_bmc_errors_are_retried_without_failing_the_host() {
    let site = Site::start(spec()).await.unwrap();
    // The next 4 Redfish requests to h1 answer 503 (with Retry-After): reads and uploads retry.
    site.fleet
        .set_fault(
            "h1",
            Fault { http_errors: Some(hostfw_bmc_sim::HttpErrors { count: 4, status: 503 }), ..Fault::default() },
        )
        .unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    let outcome = site.host_result("h1").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let history = site.store.history_list("h1", 200).await.unwrap();
    assert_eq!(count(&history, "FailedFirmwareUpgrade"), 0, "{history:?}");
    assert!(site.fleet.fault("h1").unwrap().http_errors.is_none(), "every injected error was consumed");
    site.shutdown().await;
}

/// `reset-host-reprovisioning` sent while an attempt runs (not while the host waits in
/// FailedFirmwareUpgrade) still clears the count: that attempt's failure is counted as the first
/// retry again. The attempt is held in WaitingForUpload by holding the site's only upload slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_during_an_attempt_clears_the_retry_count() {
    let site = Site::start(SiteSpec { config: config().max_retries(5).max_uploads(1), ..spec() }).await.unwrap();
    site.fleet.set_fault("h2", Fault { fail_next_tasks: 2, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h2"]).await.unwrap();
    site.wait_for("the first failure", Duration::from_secs(60), || async {
        let history = site.store.history_list("h2", 100).await.ok()?;
        history.iter().any(|h| h.message.starts_with("retry 1/5")).then_some(())
    })
    .await;
    // The failed task gave its slot back; take it before the retry (1 s later) does.
    let slot = site
        .wait_for("the upload slot", Duration::from_secs(10), || async {
            site.store.upload_slot_acquire("reset-test", 1, 120_000).await.ok()?
        })
        .await;
    site.wait_for("the second attempt to wait for the slot", Duration::from_secs(30), || async {
        site.pending_activities("h2")
            .await
            .into_iter()
            .any(|a| a.name == hostfw_workflows::names::ACT_UPLOAD && a.heartbeat.contains("upload slots"))
            .then_some(())
    })
    .await;
    site.cli(&["managed-host", "reset-host-reprovisioning", "--machine", "h2"]).await.unwrap();
    site.store.upload_slot_release(slot, "reset-test").await.unwrap();

    let outcome = site.host_result("h2").await.expect("compliant on the third attempt");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let history = site.store.history_list("h2", 200).await.unwrap();
    let retries: Vec<&str> =
        history.iter().rev().filter(|h| h.message.starts_with("retry ")).map(|h| h.message.as_str()).collect();
    assert_eq!(retries.len(), 2, "{retries:#?}");
    assert!(retries.iter().all(|m| m.starts_with("retry 1/5")), "the count restarted after the reset: {retries:#?}");
    assert_eq!(site.status("h2").await.unwrap().retry_count, 1);
    site.record_history("h2", "reset-during-attempt").await;
    site.shutdown().await;
}

/// A platform step that fails (here the BMC refuses the first request of the lockdown step) is a
/// failed attempt: FailedFirmwareUpgrade naming the step, a retry after the interval, and the
/// host still ends compliant with its lockdown back on. Before, the workflow failed and left
/// the request, the health report and the ceiling slot behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_platform_step_is_a_failed_attempt_retried_under_the_budget() {
    let site = Site::start(SiteSpec { assigned: &[("h1", "inst-3")], ..spec() }).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    site.wait_substate("h1", "WaitingForApproval", Duration::from_secs(90)).await;
    let refuse_once = Fault { http_errors: Some(HttpErrors { count: 1, status: 400 }), ..Fault::default() };
    site.fleet.set_fault("h1", refuse_once).unwrap();
    site.cli(&["instance", "reboot", "--instance", "inst-3", "--apply-updates-on-reboot"]).await.unwrap();
    let outcome = site.host_result("h1").await.expect("the workflow completes");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let history = site.store.history_list("h1", 200).await.unwrap();
    let failed =
        |h: &&hostfw_store::HistoryEntry| h.substate == Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade);
    assert!(
        history.iter().filter(failed).any(|h| h.message.contains("disabling platform lockdown")),
        "no FailedFirmwareUpgrade naming the step: {history:#?}"
    );
    assert!(history.iter().any(|h| h.message.starts_with("retry 1/")), "{history:?}");
    let machine = site.store.machine_get("h1").await.unwrap().unwrap();
    assert_eq!((machine.state.as_str(), machine.instance_id.as_deref()), ("Assigned", Some("inst-3")));
    assert_eq!(site.fleet.lockdown("h1"), Some(true), "lockdown back on");
    assert!(site.store.request_get("h1").await.unwrap().is_none(), "request cleared");
    assert!(site.store.health_reports_for("h1").await.unwrap().is_empty(), "health report removed");
    site.record_history("h1", "assigned-platform-step-retried").await;
    site.shutdown().await;
}

/// Issue 26 item 12: `doctor --fix` re-checks each finding before acting on it. gb is found
/// protected without a request; before the fix runs, an operator requests it (its update starts
/// and protects it for real). The stale finding is not acted on: nothing restores gb mid-update,
/// nothing is audited, and its update finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_fix_skips_a_finding_that_resolved_itself_since_the_listing() {
    use hostfw_activities::repair::{self, Finding, Fixed};

    let site = Site::start(spec()).await.unwrap();
    site.store
        .machine_set_state(
            "gb",
            hostfw_model::HostState::HostReprovision,
            Some(hostfw_model::HostSubstate::Protecting),
            "worker lost",
        )
        .await
        .unwrap();
    let found = repair::find(&site.store, &site.client, repair::DOCTOR_SETTLE_MS).await.unwrap();
    let finding = found
        .iter()
        .find(|f| matches!(f, Finding::ProtectedWithoutRequest { machine_id, .. } if machine_id == "gb"))
        .unwrap_or_else(|| panic!("gb is listed: {found:?}"))
        .clone();

    // Between the listing and the fix: gb is requested and its update starts.
    site.cli(&["host", "reprovision", "set", "--id", "gb"]).await.unwrap();

    let deps = hostfw_activities::Deps::open(&site.site, site.store.clone(), None).await.unwrap();
    let fixed = repair::fix(&deps, &site.client, &finding, "test").await.unwrap();
    assert_eq!(fixed, Fixed::NoLongerHolds("it has a reprovisioning request now".into()));
    assert!(fixed.to_string().starts_with("skipped, no longer true"), "{fixed}");
    let history = site.store.history_list("gb", 50).await.unwrap();
    assert!(!history.iter().any(|h| h.message.contains("repaired by")), "gb was not restored mid-update: {history:?}");
    let outcome = site.host_result("gb").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "gb's update finished: {outcome:?}");
    site.shutdown().await;
}

/// A release lost to a site-database restart (chaos: PostgreSQL restarted mid-rollout) left an
/// upload slot held, for the whole task bound, by a workflow that had completed. The repair finds
/// it (the manager pass runs the same check every 10 s) and gives it back; fenced by generation,
/// so a fix listed before the holder took the slot again does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_slot_left_held_by_a_completed_workflow_is_given_back() {
    use hostfw_activities::repair::{self, Finding, Fixed};

    let site = Site::start(spec()).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "gb"]).await.unwrap();
    let outcome = site.host_result("gb").await.unwrap();
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    let holder = format!("{}/bmc/0", hostfw_workflows::host_reprovision_workflow_id("gb"));
    let hour = 3_600_000;
    let first = site.store.upload_slot_acquire(&holder, 4, hour).await.unwrap().expect("a free slot");
    // A slot of a holder Temporal never heard of is not judged: its lease decides.
    site.store.upload_slot_acquire("elsewhere/bmc/0", 4, hour).await.unwrap().expect("a free slot");

    let listed = |found: Vec<Finding>| -> Vec<Finding> {
        found.into_iter().filter(|f| matches!(f, Finding::SlotAfterWorkflow { .. })).collect()
    };
    let found = listed(repair::find(&site.store, &site.client, repair::DOCTOR_SETTLE_MS).await.unwrap());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        matches!(&found[0], Finding::SlotAfterWorkflow { machine_id, generation, workflow, .. }
            if machine_id == "gb" && *generation == first.generation && workflow == "closed (Completed)"),
        "{found:?}"
    );
    assert!(found[0].problem().contains("no other host can use it"), "{}", found[0].problem());

    // The holder takes its slot again (a newer generation): the stale finding is not acted on.
    let deps = hostfw_activities::Deps::open(&site.site, site.store.clone(), None).await.unwrap();
    let again = site.store.upload_slot_acquire(&holder, 4, hour).await.unwrap().expect("its own slot");
    assert_eq!(again.slot, first.slot);
    let fixed = repair::fix(&deps, &site.client, &found[0], "test").await.unwrap();
    assert!(matches!(fixed, Fixed::NoLongerHolds(_)), "{fixed}");
    assert_eq!(site.store.upload_slots_held().await.unwrap().len(), 2, "nothing was given back");

    let found = listed(repair::find(&site.store, &site.client, repair::DOCTOR_SETTLE_MS).await.unwrap());
    assert_eq!(found.len(), 1, "{found:?}");
    let fixed = repair::fix(&deps, &site.client, &found[0], "test").await.unwrap();
    assert_eq!(fixed, Fixed::Done(format!("upload slot {} given back", again.slot)));
    let held: Vec<_> = site.store.upload_slots_held().await.unwrap().into_iter().map(|h| h.holder).collect();
    assert_eq!(held, vec!["elsewhere/bmc/0".to_string()]);
    site.shutdown().await;
}

/// Issue 26 item 12: with the Temporal server up but no worker polling the site's task queue,
/// `managed-host show` says so instead of "Temporal did not answer".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_host_show_says_no_worker_polls_when_the_server_is_up() {
    let site = Site::start(SiteSpec { external_worker: true, ..spec() }).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "h1"]).await.unwrap();
    let printed = site.cli(&["managed-host", "show", "h1"]).await.unwrap();
    let live = printed.lines().find(|l| l.starts_with("Live:")).unwrap_or_else(|| panic!("{printed}"));
    assert!(live.contains(&format!("no worker polls the task queue `{}`", site.site.temporal.task_queue)), "{live}");
    assert!(!live.contains("did not answer"), "{live}");
    site.shutdown().await;
}
