//! End-to-end: the site workflows on a real Temporal dev server against bmc-sim. The Site Explorer
//! crawls every BMC; the Machine Update Manager selects drifted hosts under the gates and the
//! ceiling, starts their workflows, refills a freed slot at once (the run interval is one hour in
//! these tests, so only the event-driven path can make progress), honours overrides, windows and
//! manual tagging, and resumes after the worker is killed.

use std::time::Duration;

use hostfw_model::update_intervals::max_overlap;
use hostfw_tests::fixtures::r760_bios;
use hostfw_tests::{Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::names::{MACHINE_UPDATE_MANAGER_ID, SITE_EXPLORER_ID};
use hostfw_workflows::{MachineUpdateManagerWorkflow, SiteExplorerWorkflow};

/// The R760 (BIOS only) and the XE9680, which waits for an explicit start.
fn catalog() -> Catalog {
    let xe = HostModel::new("xe", "Dell", "PowerEdge XE9680")
        .ordering(&["uefi"])
        .set("explicit_start_needed", true)
        .component("uefi", "^BIOS$", [Firmware::file("3.0", "dell/bios.bin")]);
    Catalog::of([r760_bios(), xe])
}

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];

/// Hosts with an old BIOS: `(id, model)`.
fn fleet(hosts: &[(&str, &str)]) -> String {
    let mut fleet = String::from(
        "[defaults]\ntask_seconds = 0.5\nreset_seconds = 0.2\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"Immediate\"\n",
    );
    for (id, model) in hosts {
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"{model}\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

fn compliant(site: &Site, id: &str) -> bool {
    site.fleet.versions(id).iter().any(|(member, v)| member == "BIOS" && v == "3.0")
}

async fn wait_compliant(site: &Site, ids: &[&str], within: Duration) {
    site.wait_for(&format!("{ids:?} compliant with no request left"), within, || async {
        for id in ids {
            if !compliant(site, id) || site.store.request_get(id).await.ok()?.is_some() {
                return None;
            }
        }
        Some(())
    })
    .await
}

/// From the recorded state history: each update as (entered HostReprovision, left it).
async fn update_intervals(site: &Site, ids: &[&str]) -> Vec<(i64, Option<i64>)> {
    let mut out = Vec::new();
    for id in ids {
        let history = site.store.history_list(id, 1000).await.unwrap();
        let intervals =
            hostfw_model::update_intervals::update_intervals(history.iter().rev().map(|h| (h.state, h.at_ms)));
        assert!(intervals.iter().all(|(_, end)| end.is_some()), "{id} never left HostReprovision");
        out.extend(intervals);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_fills_the_ceiling_and_refills_freed_slots_without_waiting_for_the_interval() {
    let ids = ["m1", "m2", "m3", "m4", "m5", "m6"];
    let hosts: Vec<(&str, &str)> = ids.iter().map(|id| (*id, "PowerEdge R760")).collect();
    let fleet = fleet(&hosts);
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().catalog(&catalog()).manager(2, "1h").explorer_interval("1h").site_workflows(true),
        images: IMAGES,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    // Six hosts through two slots, one pass an hour: only wake-ups on each finished host can
    // bring all six to the catalog within minutes. `watch --format json` follows it: one JSON
    // object per change, then this run's report.
    let watched = site.cli(&["--format", "json", "watch", "--timeout-secs", "240"]).await.unwrap();
    let lines: Vec<serde_json::Value> = watched.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() >= 3, "a line per change: {watched}");
    for change in &lines[..lines.len() - 1] {
        assert!(change["at"].as_str().is_some_and(|t| t.ends_with('Z')) && change["total"] == 6, "{change}");
        let waiting = change["waiting"].as_u64().unwrap() + change["failed"].as_u64().unwrap();
        assert_eq!(change["reasons"].as_object().unwrap().len() as u64, waiting, "a reason per waiting host: {change}");
    }
    let report = &lines.last().unwrap()["report"];
    assert_eq!((report["compliant"].as_u64(), report["total"].as_u64()), (Some(6), Some(6)), "{report}");
    assert_eq!(report["hosts_updated"], 6, "this run's updates: {report}");
    assert_eq!((report["highest_in_flight"].as_u64(), report["ceiling"].as_u64()), (Some(2), Some(2)), "{report}");
    wait_compliant(&site, &ids, Duration::from_secs(60)).await;
    let intervals = update_intervals(&site, &ids).await;
    assert_eq!(intervals.len(), 6, "each host updated once: {intervals:?}");
    assert_eq!(max_overlap(&intervals), 2, "never more than the ceiling in flight, and both slots used: {intervals:?}");
    for id in ids {
        let history = site.store.history_list(id, 100).await.unwrap();
        assert!(
            history.iter().any(|h| h.message.contains("started by Automated")),
            "{id} was requested by the scheduler: {history:?}"
        );
    }
    site.record_workflow_history::<MachineUpdateManagerWorkflow>(MACHINE_UPDATE_MANAGER_ID, "machine-update-manager")
        .await;
    site.record_workflow_history::<SiteExplorerWorkflow>(SITE_EXPLORER_ID, "site-explorer").await;
    let plan = site.cli(&["plan"]).await.unwrap();
    assert!(plan.contains("compliant: 6"), "{plan}");
    assert!(plan.contains("would start: none"), "{plan}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_windows_and_manual_tagging_gate_the_selection() {
    let fleet = fleet(&[
        ("on", "PowerEdge R760"),
        ("off", "PowerEdge R760"),
        ("win", "PowerEdge XE9680"),
        ("tenant", "PowerEdge R760"),
    ]);
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default()
            .catalog(&catalog())
            .firmware_global("autoupdate", false)
            .firmware_global("instance_updates_manual_tagging", true)
            .manager(10, "1h")
            .explorer_interval("1h")
            .site_workflows(true),
        images: IMAGES,
        // The site default is off: nothing starts until an operator enables hosts one by one.
        assigned: &[("tenant", "inst-7")],
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    // The Site Explorer's first crawl stores every host's inventory.
    site.wait_for("every host explored", Duration::from_secs(60), || async {
        let reports = site.store.report_list().await.ok()?;
        (reports.iter().filter(|r| r.report.is_some()).count() == 4).then_some(())
    })
    .await;
    let plan = site.cli(&["plan"]).await.unwrap();
    assert!(plan.contains("would start: none"), "{plan}");
    for id in ["on", "off", "win", "tenant"] {
        assert!(
            plan.lines().any(|l| l.starts_with(id) && l.contains("autoupdate")),
            "{id} held by the site policy:\n{plan}"
        );
    }

    for id in ["on", "win", "tenant"] {
        site.cli(&["machine", "auto-update", "--machine", id, "--enable"]).await.unwrap();
    }
    // The override wakes the manager: `on` starts now, not an hour from now.
    wait_compliant(&site, &["on"], Duration::from_secs(90)).await;

    let json = site.cli(&["--format", "json", "plan"]).await.unwrap();
    let plan: serde_json::Value = serde_json::from_str(&json).unwrap();
    let reason = |id: &str| -> String {
        plan["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["machine_id"] == id)
            .map(|s| s["reason"].to_string())
            .unwrap_or_default()
    };
    assert!(reason("off").contains("AutoUpdateOffSite"), "{json}");
    assert!(reason("win").contains("WindowClosed"), "{json}");
    assert!(reason("tenant").contains("AssignedManualTagging"), "{json}");

    // Opening the window is a gate only, and it wakes the manager.
    site.cli(&["managed-host", "start-updates", "--machines", "win"]).await.unwrap();
    wait_compliant(&site, &["win"], Duration::from_secs(90)).await;

    for id in ["off", "tenant"] {
        assert!(!compliant(&site, id), "{id} was updated");
        assert!(site.store.request_get(id).await.unwrap().is_none(), "{id} got a request");
    }

    // Re-explore reaches the Site Explorer workflow (its interval is an hour away).
    let bmc = site.store.machine_get("off").await.unwrap().unwrap().bmc_address;
    let exact = hostfw_model::BmcLookup::from(bmc.clone());
    let before = site.store.report_get(&exact).await.unwrap().unwrap().explored_at_ms;
    // Written without its scheme (the BMC is registered as http://): any spelling finds it.
    site.cli(&["site-explorer", "re-explore", &bmc.authority()]).await.unwrap();
    site.wait_for("the re-exploration of `off`", Duration::from_secs(60), || async {
        let r = site.store.report_get(&exact).await.ok()??;
        (r.explored_at_ms > before).then_some(())
    })
    .await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_resumes_after_the_worker_is_killed() {
    let ids = ["k1", "k2", "k3"];
    let hosts: Vec<(&str, &str)> = ids.iter().map(|id| (*id, "PowerEdge R760")).collect();
    let fleet = fleet(&hosts);
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().catalog(&catalog()).manager(1, "1h").explorer_interval("1h").site_workflows(true),
        images: IMAGES,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let mut worker = ChildWorker::start(&site).await;
    site.wait_for("a first host requested", Duration::from_secs(60), || async {
        (!site.store.request_list().await.ok()?.is_empty()).then_some(())
    })
    .await;
    worker.kill_9();
    worker.restart().await;
    wait_compliant(&site, &ids, Duration::from_secs(240)).await;
    let intervals = update_intervals(&site, &ids).await;
    assert_eq!(intervals.len(), 3, "{intervals:?}");
    assert_eq!(max_overlap(&intervals), 1, "one host at a time: {intervals:?}");
    drop(worker);
    site.shutdown().await;
}

/// A site with one drifted R760 `id`, automatic selection off (`autoupdate = false`), a manager
/// pass every 5 s.
async fn start_without_autoupdate(id: &str) -> Site {
    let fleet = fleet(&[(id, "PowerEdge R760")]);
    Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default()
            .catalog(&catalog())
            .firmware_global("autoupdate", false)
            .manager(5, "5s")
            .explorer_interval("1h")
            .site_workflows(true),
        images: IMAGES,
        ..SiteSpec::default()
    })
    .await
    .unwrap()
}

/// A request whose maker died before starting its workflow (written here straight into the site
/// database) would hold its host forever: the manager starts its workflow once the request has
/// waited 30 s without starting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_left_without_its_workflow_is_adopted() {
    // Automatic selection is off: only the adoption can start this host.
    let site = start_without_autoupdate("orphan").await;
    let created = site
        .store
        .request_create(&hostfw_store::NewRequest {
            machine_id: "orphan".into(),
            initiator: "AdminCli".into(),
            update_message: Some("maker died".into()),
            workflow_id: Some(hostfw_workflows::host_reprovision_workflow_id("orphan")),
        })
        .await
        .unwrap();
    assert!(matches!(created, hostfw_store::RequestCreate::Created(_)));
    wait_compliant(&site, &["orphan"], Duration::from_secs(120)).await;
    let history = site.store.history_list("orphan", 100).await.unwrap();
    assert!(history.iter().any(|h| h.message.contains("started by AdminCli")), "{history:?}");
    site.shutdown().await;
}

/// Issue 11 finding 2: a started request whose workflow an operator terminated by hand (or that
/// failed, or was lost with its namespace) is repaired by the manager: the workflow is started
/// again and resumes from inventory. Before, only requests that had never started were adopted,
/// and this host stayed protected with its request for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_request_whose_workflow_was_terminated_is_restarted() {
    let site = start_without_autoupdate("stopped").await;
    site.fleet.set_fault("stopped", hostfw_bmc_sim::Fault { fail_next_tasks: 1, ..Default::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "stopped"]).await.unwrap();
    site.wait_substate("stopped", "FailedFirmwareUpgrade", Duration::from_secs(60)).await;
    site.client
        .get_workflow_handle::<hostfw_workflows::HostReprovisionWorkflow>(
            hostfw_workflows::host_reprovision_workflow_id("stopped"),
        )
        .terminate(temporalio_client::WorkflowTerminateOptions::builder().reason("by hand").build())
        .await
        .unwrap();
    assert!(site.store.request_get("stopped").await.unwrap().is_some_and(|r| r.started_at_ms.is_some()));
    wait_compliant(&site, &["stopped"], Duration::from_secs(120)).await;
    site.wait_for("the request to be finished", Duration::from_secs(60), || async {
        site.store.request_get("stopped").await.unwrap().is_none().then_some(())
    })
    .await;
    assert_eq!(site.store.machine_get("stopped").await.unwrap().unwrap().state, hostfw_model::HostState::Ready);
    site.shutdown().await;
}

/// Issue 13 finding 6: with a ceiling of 0 nothing will ever start; `watch` says so at once
/// instead of waiting out its timeout, and names each waiting host's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_with_a_ceiling_of_zero_says_why_at_once() {
    let fleet = fleet(&[("z1", "PowerEdge R760"), ("z2", "PowerEdge R760")]);
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().catalog(&catalog()).manager(0, "1h").explorer_interval("1h").site_workflows(true),
        images: IMAGES,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let (result, printed) = site.cli_full(&["watch", "--timeout-secs", "600"]).await;
    let err = format!("{:#}", result.unwrap_err());
    assert!(err.contains("ceiling is 0") && err.contains("2 waiting hosts will wait forever"), "{err}");
    assert!(printed.contains("not compliant:") && printed.contains("z1: "), "{printed}");
    assert!(printed.contains("this run: 0 hosts updated"), "{printed}");
    site.shutdown().await;
}

/// Issue 26 item 12: a pass woken by an opening window says so. An XE9680 (explicit start) gets a
/// window that opens a few seconds from now; the run interval is an hour, so only the manager's
/// own timer for that window can start it, and the worker's log line of the pass that does names
/// the window as its reason, not "run interval".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_woken_by_an_opening_window_names_the_window() {
    let fleet = fleet(&[("win", "PowerEdge XE9680")]);
    let config = SiteToml::default().catalog(&catalog()).manager(10, "1h").explorer_interval("1h").site_workflows(true);
    let site =
        Site::start(SiteSpec { fleet: &fleet, config, images: IMAGES, external_worker: true, ..SiteSpec::default() })
            .await
            .unwrap();
    let worker = ChildWorker::start(&site).await;
    site.wait_for("the host explored", Duration::from_secs(60), || async {
        let reports = site.store.report_list().await.ok()?;
        reports.iter().any(|r| r.report.is_some()).then_some(())
    })
    .await;
    let opens = chrono::Utc::now() + chrono::Duration::seconds(6);
    let (start, end) = (
        opens.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        (opens + chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    site.cli(&["managed-host", "start-updates", "--machines", "win", "--start", &start, "--end", &end]).await.unwrap();
    wait_compliant(&site, &["win"], Duration::from_secs(90)).await;
    let log = worker.log();
    let pass = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["message"] == "machine update manager pass" && l["started_hosts"] == "win")
        .unwrap_or_else(|| panic!("no pass started win:\n{}", worker.log_tail(40)));
    assert_eq!(pass["reasons"], format!("an update window opened at {start}"), "{pass}");
    site.shutdown().await;
}
