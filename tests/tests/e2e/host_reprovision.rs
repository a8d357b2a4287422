//! End-to-end: host reprovisioning on a real Temporal dev server, real HTTP to bmc-sim, a real
//! SQLite site database, driven through the `hostfw` CLI code.

use std::time::Duration;

use futures::StreamExt;
use hostfw_tests::{Catalog, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::{host_reprovision_workflow_id, HostOutcome, HostReprovisionWorkflow};
use temporalio_client::{WorkflowListOptions, WorkflowQueryOptions};

/// The R760 (iDRAC 7.10.30.00, BIOS 2.3.5) and the Supermicro (BMC 1.03.10, then its
/// motherboard CPLD F1.6.0 from two image files) the fleet's hosts are.
fn catalog() -> Catalog {
    let r760 = HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["bmc", "uefi"])
        .component("bmc", r"^Installed-.*__iDRAC\.", [Firmware::file("7.10.30.00", "dell/idrac.bin")])
        .component("uefi", r"^Installed-.*__BIOS\.Setup\.", [Firmware::file("2.3.5", "dell/bios.bin")]);
    let cpld = Firmware::known("F1.6.0").set("filenames", vec!["smc/cpld-1.bin", "smc/cpld-2.bin"]);
    let smc = HostModel::new("smc", "Supermicro", "SYS-821GE-TNHR")
        .ordering(&["bmc", "cpldmb"])
        .component("bmc", "^BMC$", [Firmware::file("1.03.10", "smc/bmc.bin")])
        .component("cpldmb", "^CPLD_Motherboard$", [cpld]);
    Catalog::of([r760, smc])
}

const IMAGES: &[(&str, &str, &str)] = &[
    ("dell/idrac.bin", r"^Installed-.*__iDRAC\.", "7.10.30.00"),
    ("dell/bios.bin", r"^Installed-.*__BIOS\.Setup\.", "2.3.5"),
    ("smc/bmc.bin", "^BMC$", "1.03.10"),
    ("smc/cpld-1.bin", "^CPLD_Motherboard$", "F1.6.0"),
    ("smc/cpld-2.bin", "^CPLD_Motherboard$", "F1.6.0"),
];

fn fleet(task_seconds: f64) -> String {
    format!(
        r#"
[defaults]
username = "admin"
password = "s3cret"
task_seconds = {task_seconds}
reset_seconds = 0.3
manager_reset_seconds = 0.5

[[host]]
id = "dell-drifted"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
upload_style = "multipart"
task_style = "spec"
apply_time = "Immediate"
firmware = [
  {{ id = "Installed-25227-7.00.00.00__iDRAC.Embedded.1-1", version = "7.00.00.00" }},
  {{ id = "Installed-159-2.1.0__BIOS.Setup.1-1", version = "2.1.0" }},
]

[[host]]
id = "dell-compliant"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
upload_style = "httppush"
task_style = "bmcweb"
firmware = [
  {{ id = "Installed-25227-7.10.30.00__iDRAC.Embedded.1-1", version = "7.10.30.00" }},
  {{ id = "Installed-159-2.3.5__BIOS.Setup.1-1", version = "2.3.5" }},
]

[[host]]
id = "smc-no-cpld"
vendor = "Supermicro"
model = "SYS-821GE-TNHR"
bmc_address = "127.0.0.1:0"
firmware = [
  {{ id = "BMC", version = "1.03.10" }},
]

[[host]]
id = "smc-onreset"
vendor = "Supermicro"
model = "SYS-821GE-TNHR"
bmc_address = "127.0.0.1:0"
upload_style = "simpleupdate"
task_style = "sushy"
apply_time = "OnReset"
firmware = [
  {{ id = "BMC", version = "1.01.02" }},
  {{ id = "Backup_BMC", version = "1.00.00" }},
  {{ id = "CPLD_Motherboard", version = "F1.5.2" }},
]
"#
    )
}

async fn start(task_seconds: f64) -> Site {
    start_with(task_seconds, SiteToml::default()).await
}

/// `config`: the site's settings (e.g. `.max_retries(1)`); the catalog is added here.
async fn start_with(task_seconds: f64, config: SiteToml) -> Site {
    let fleet = fleet(task_seconds);
    let spec = SiteSpec { fleet: &fleet, config: config.catalog(&catalog()), images: IMAGES, ..SiteSpec::default() };
    Site::start(spec).await.expect("site starts")
}

fn version(site: &Site, host: &str, member: &str) -> String {
    site.fleet
        .versions(host)
        .into_iter()
        .find(|(id, _)| id == member)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("{host} has no member {member}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drifted_hosts_are_updated_verified_and_restored() {
    let site = start(0.5).await;
    site.cli(&["host", "reprovision", "set", "--id", "dell-drifted", "--update-message", "CHG-1"]).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "smc-onreset"]).await.unwrap();

    // Both components of the Dell host, through multipart + spec task monitor, applied at once.
    let outcome = site.host_result("dell-drifted").await.expect("dell workflow completes");
    let HostOutcome::Compliant { installed } = outcome else { panic!("unexpected outcome {outcome:?}") };
    let components: Vec<String> = installed.iter().map(|c| c.component.to_string()).collect();
    assert_eq!(components, vec!["bmc", "uefi"], "installed in catalog order");
    assert_eq!(installed[0].from, vec!["7.00.00.00".to_string()]);
    assert_eq!(version(&site, "dell-drifted", "Installed-25227-7.00.00.00__iDRAC.Embedded.1-1"), "7.10.30.00");
    assert_eq!(version(&site, "dell-drifted", "Installed-159-2.1.0__BIOS.Setup.1-1"), "2.3.5");

    // The Supermicro host: SimpleUpdate fetching from the worker's artifact server, sushy-style
    // tasks, images staged until reset, and a two-part CPLD image applied with one activation.
    let outcome = site.host_result("smc-onreset").await.expect("smc workflow completes");
    let HostOutcome::Compliant { installed } = outcome else { panic!("unexpected outcome {outcome:?}") };
    assert_eq!(installed.len(), 2);
    assert_eq!(version(&site, "smc-onreset", "BMC"), "1.03.10");
    assert_eq!(version(&site, "smc-onreset", "Backup_BMC"), "1.00.00", "non-matching entries untouched");
    assert_eq!(version(&site, "smc-onreset", "CPLD_Motherboard"), "F1.6.0");
    let stats = site.fleet.stats();
    assert_eq!(stats.per_host["smc-onreset"].uploads, 3, "bmc + two CPLD parts");
    assert!(stats.per_host["smc-onreset"].manager_resets >= 1, "BMC image activated by a manager reset");

    for host in ["dell-drifted", "smc-onreset"] {
        let machine = site.store.machine_get(host).await.unwrap().unwrap();
        assert_eq!(machine.state, hostfw_model::HostState::Ready, "{host} back to Ready");
        assert!(site.store.request_get(host).await.unwrap().is_none(), "{host}: request cleared");
        assert!(site.store.health_reports_for(host).await.unwrap().is_empty(), "{host}: health report removed");
        let history = site.store.history_list(host, 100).await.unwrap();
        let substates: Vec<String> = history.iter().filter_map(|h| h.substate.map(|s| s.to_string())).collect();
        for expected in [
            "CheckingFirmwareV2",
            "WaitingForUpload",
            "WaitingForFirmwareUpgrade",
            "ResetForNewFirmware",
            "NewFirmwareReportedWait",
            "CheckingFirmwareRepeatV2",
        ] {
            assert!(substates.iter().any(|s| s == expected), "{host}: history lacks {expected}: {substates:?}");
        }
    }

    // The query answers after completion, and the Web UI's search attributes find the workflow.
    let handle =
        site.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id("dell-drifted"));
    let status = handle.query(HostReprovisionWorkflow::status, (), WorkflowQueryOptions::default()).await.unwrap();
    assert_eq!(status.substate.to_string(), "Completed");
    let found = site
        .wait_for("the visibility store to index the workflow", Duration::from_secs(20), || async {
            let mut list = site.client.list_workflows(
                "HostfwMachineId = 'dell-drifted' AND HostfwSubstate = 'Completed'",
                WorkflowListOptions::builder().limit(10).build(),
            );
            let mut ids = Vec::new();
            while let Some(w) = list.next().await {
                ids.push(w.ok()?.id().to_string());
            }
            (!ids.is_empty()).then_some(ids)
        })
        .await;
    assert_eq!(found, vec![host_reprovision_workflow_id("dell-drifted")]);
    site.record_history("dell-drifted", "redfish-immediate-two-components").await;
    site.record_history("smc-onreset", "redfish-onreset-multi-artifact").await;

    // Issue 13 finding 6: a finished host shows what its last run installed, not a component
    // and target it no longer works on; without Temporal, `show` says its live status is missing.
    let shown = site.cli(&["managed-host", "show", "dell-drifted"]).await.unwrap();
    assert!(shown.contains("State:     Ready") && !shown.contains("Component:"), "{shown}");
    assert!(shown.contains("Last run:  bmc") && !shown.contains("Live:"), "{shown}");
    let mut site = site;
    site.stop_temporal().await;
    let shown = site.cli(&["managed-host", "show", "dell-drifted"]).await.unwrap();
    assert!(shown.contains("Live:      unavailable (Temporal at "), "{shown}");
    let shown = site.cli(&["--format", "json", "managed-host", "show", "dell-drifted"]).await.unwrap();
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert!(shown["live_status_error"].as_str().is_some_and(|e| e.contains("Temporal at")), "{shown}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compliant_host_returns_to_ready_without_any_install() {
    let site = start(0.5).await;
    site.cli(&["host", "reprovision", "set", "--id", "dell-compliant"]).await.unwrap();
    let outcome = site.host_result("dell-compliant").await.expect("workflow completes");
    assert_eq!(outcome, HostOutcome::Compliant { installed: vec![] });
    let stats = site.fleet.stats();
    assert_eq!(stats.per_host["dell-compliant"].uploads, 0, "nothing uploaded");
    assert_eq!(stats.per_host["dell-compliant"].system_resets + stats.per_host["dell-compliant"].manager_resets, 0);
    let machine = site.store.machine_get("dell-compliant").await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::Ready);
    assert!(site.store.request_get("dell-compliant").await.unwrap().is_none());
    assert!(site.store.health_reports_for("dell-compliant").await.unwrap().is_empty());
    site.record_history("dell-compliant", "nothing-to-update").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_request_for_a_running_host_is_refused() {
    // Long tasks keep the first workflow busy while the second request comes in.
    let site = start(30.0).await;
    site.cli(&["host", "reprovision", "set", "--id", "dell-drifted"]).await.unwrap();

    // While it runs, the host is protected: HostReprovision, health report host-fw-update.
    site.wait_for("the upload task to be followed", Duration::from_secs(30), || async {
        let m = site.store.machine_get("dell-drifted").await.ok()??;
        (m.substate == Some(hostfw_model::HostSubstate::WaitingForFirmwareUpgrade)).then_some(())
    })
    .await;
    let machine = site.store.machine_get("dell-drifted").await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::HostReprovision);
    let health = site.store.health_reports_for("dell-drifted").await.unwrap();
    assert_eq!(health.len(), 1);
    assert_eq!(health[0].source, "host-fw-update");
    assert_eq!(health[0].classifications, vec!["PreventAllocations", "SuppressExternalAlerting"]);

    // `host reprovision list` shows the request, its initiator, start and substate.
    let listed = site.cli(&["--format", "json", "host", "reprovision", "list"]).await.unwrap();
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["machine_id"], "dell-drifted");
    assert_eq!(listed[0]["initiator"], "AdminCli");
    assert!(listed[0]["started_at"].as_str().is_some_and(|t| t.ends_with('Z')), "started: {listed}");
    let table = site.cli(&["host", "reprovision", "list"]).await.unwrap();
    assert!(table.contains("WaitingForFirmwareUpgrade"), "{table}");

    // `managed-host show` answers from the database and the workflow's status query.
    let shown = site.cli(&["managed-host", "show", "dell-drifted"]).await.unwrap();
    assert!(shown.contains("State:     HostReprovision"), "{shown}");
    assert!(shown.contains("Component: bmc  Target: 7.10.30.00"), "{shown}");
    assert!(shown.contains("host-fw-update"), "{shown}");
    let err = site.cli(&["host", "reprovision", "set", "--id", "dell-drifted"]).await.unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("already has a reprovisioning request"), "{message}");
    // The refusal changed nothing: the first request is still there, and still the only one.
    let request = site.store.request_get("dell-drifted").await.unwrap().expect("first request kept");
    assert_eq!(request.initiator, "AdminCli");
    assert_eq!(site.store.request_list().await.unwrap().len(), 1);

    // An unknown machine is refused with a clear message and writes nothing.
    let err = site.cli(&["host", "reprovision", "set", "--id", "no-such-host"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("machine no-such-host is not registered"), "{err:#}");
    assert_eq!(site.store.request_list().await.unwrap().len(), 1);
    site.shutdown().await;
}

/// Issue 11 finding 3: a component whose matcher finds no inventory member, early in `ordering`,
/// is passed over with its reason; the drifted component after it is installed, no retry is
/// burned, the host goes back to its steady state (no slot held) and is reported as not fully
/// installable. (Before, the walk stopped there: the BMC was never updated and the host spent its
/// retries, then sat exhausted.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmatched_component_is_skipped_and_the_rest_installed() {
    let fleet = fleet(0.5).replace(
        "id = \"smc-no-cpld\"\nvendor = \"Supermicro\"\nmodel = \"SYS-821GE-TNHR\"\nbmc_address = \"127.0.0.1:0\"\nfirmware = [\n  { id = \"BMC\", version = \"1.03.10\" },",
        "id = \"smc-no-cpld\"\nvendor = \"Supermicro\"\nmodel = \"SYS-821GE-TNHR\"\nbmc_address = \"127.0.0.1:0\"\nfirmware = [\n  { id = \"BMC\", version = \"1.01.02\" },",
    );
    assert!(fleet.contains(r#"{ id = "BMC", version = "1.01.02" },"#) && !fleet.contains(r#"version = "1.03.10""#));
    let config = SiteToml::default().max_retries(1).catalog(&catalog()).set(
        "host_models.smc",
        "ordering",
        vec!["cpldmb", "bmc"],
    );
    let spec = SiteSpec { fleet: &fleet, config, images: IMAGES, ..SiteSpec::default() };
    let site = Site::start(spec).await.expect("site starts");
    site.cli(&["host", "reprovision", "set", "--id", "smc-no-cpld"]).await.unwrap();
    let outcome = site.host_result("smc-no-cpld").await.expect("the workflow completes");
    let HostOutcome::NotFullyInstallable { installed, unmatched, not_reported } = outcome else {
        panic!("unexpected outcome {outcome:?}")
    };
    assert_eq!(installed.iter().map(|c| c.component.to_string()).collect::<Vec<_>>(), vec!["bmc"]);
    assert_eq!(
        version(&site, "smc-no-cpld", "BMC"),
        "1.03.10",
        "the drifted BMC after the unmatched CPLD is installed"
    );
    assert_eq!(unmatched.len(), 1);
    assert_eq!(
        (unmatched[0].component.to_string(), unmatched[0].matcher.as_str()),
        ("cpldmb".into(), "^CPLD_Motherboard$")
    );
    assert!(not_reported.is_empty());

    let machine = site.store.machine_get("smc-no-cpld").await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::Ready, "back to its steady state, holding no slot");
    assert!(site.store.request_get("smc-no-cpld").await.unwrap().is_none(), "request cleared");
    let history = site.store.history_list("smc-no-cpld", 50).await.unwrap();
    assert!(
        !history.iter().any(|h| h.substate == Some(hostfw_model::HostSubstate::FailedFirmwareUpgrade)),
        "no retry burned: {history:?}"
    );
    let last = &history.iter().find(|h| h.message.starts_with("not fully installable")).expect("reported").message;
    assert!(
        last.contains("cpldmb") && last.contains("^CPLD_Motherboard$") && last.contains("installed bmc 1.03.10"),
        "{last}"
    );
    assert_eq!(site.fleet.stats().per_host["smc-no-cpld"].uploads, 1);
    site.record_history("smc-no-cpld", "unmatched-component-skipped").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_reads_inventory_catalog_and_gets_clear_errors() {
    let site = start(0.5).await;
    let explored = site.cli(&["site-explorer", "explore"]).await.unwrap();
    assert!(explored.contains("explored 4 BMCs: 4 read, 0 failed"), "{explored}");

    // `ip:port` without the scheme the BMC is registered with (http://): lookups take any spelling.
    let addr = site.fleet.host("dell-drifted").unwrap().addr.to_string();
    let report = site.cli(&["site-explorer", "get-report", "managed-host", &addr]).await.unwrap();
    assert!(report.contains("Installed-159-2.1.0__BIOS.Setup.1-1"), "{report}");
    assert!(report.contains(r#"uefi: "2.1.0" / "2.3.5"  [DRIFT]"#), "{report}");
    let json = site.cli(&["--format", "json", "site-explorer", "get-report", "managed-host", &addr]).await.unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["report"]["vendor"], "Dell");
    assert_eq!(json["versions"]["Desired"]["bmc"], "7.10.30.00");

    let catalog = site.cli(&["firmware", "show"]).await.unwrap();
    assert!(catalog.lines().any(|l| l.starts_with("Dell") && l.contains("uefi") && l.contains("2.3.5")), "{catalog}");

    // Bad input: clear errors, nothing written.
    let err = site.cli(&["machine", "add", "--id", "new-1", "--bmc", "ftp://10.0.0.1"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("invalid BMC address \"ftp://10.0.0.1\": unknown scheme"), "{err:#}");
    assert!(site.store.machine_get("new-1").await.unwrap().is_none());
    let err = site
        .cli(&["machine", "add", "--id", "new-1", "--bmc", "10.0.0.1:443", "--state", "Assigned"])
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("--instance"), "{err:#}");
    assert!(site.store.machine_get("new-1").await.unwrap().is_none());
    let err = site.cli(&["site-explorer", "get-report", "managed-host", "10.9.9.9"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("no exploration report for BMC 10.9.9.9"), "{err:#}");
    let err = site.cli(&["managed-host", "show", "ghost"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("machine ghost is not registered"), "{err:#}");

    site.cli(&["machine", "add", "--id", "new-1", "--bmc", "10.0.0.1:443"]).await.unwrap();
    let machine = site.store.machine_get("new-1").await.unwrap().unwrap();
    assert_eq!((machine.bmc_address.to_string().as_str(), machine.state.as_str()), ("https://10.0.0.1:443", "Ready"));
    let audit = site.store.audit_list(10).await.unwrap();
    assert!(audit.iter().any(|a| a.action == "machine add" && a.target == "new-1"), "{audit:?}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_updates_every_drifted_host_and_reports_compliance() {
    let site = start_with(0.5, SiteToml::default().max_retries(1)).await;
    // The old name only says where the command went, and changes nothing.
    let err = site.cli(&["rollout", "--timeout-secs", "120"]).await.unwrap_err();
    assert!(format!("{err:#}").contains("hostfw host reprovision all-drifted --bypass-ceiling"), "{err:#}");
    // The flag that says what it does is required.
    assert!(site.cli(&["host", "reprovision", "all-drifted"]).await.is_err(), "--bypass-ceiling is required");
    // A dry run lists the hosts and requests none; without --yes (stdin is no terminal) nothing starts.
    let dry = site.cli(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--dry-run"]).await.unwrap();
    assert!(dry.contains("dry run: would request 3 hosts") && dry.contains("nothing was requested"), "{dry}");
    let err =
        site.cli(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--explore", "false"]).await.unwrap_err();
    assert!(
        format!("{err:#}").contains("bypassing the scheduler's site ceiling")
            && format!("{err:#}").contains("pass --yes"),
        "{err:#}"
    );
    assert!(site.store.request_list().await.unwrap().is_empty(), "not confirmed: nothing requested");
    let audit = site.store.audit_list(20).await.unwrap();
    assert!(!audit.iter().any(|a| a.action == "host reprovision all-drifted"), "{audit:?}");

    let (result, printed) = site
        .cli_full(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--yes", "--timeout-secs", "120"])
        .await;
    // smc-no-cpld cannot be made compliant (no inventory entry for its CPLD): the rollout says
    // why (its drifted components would be installed, the unmatched one named) and fails; every
    // other host ends compliant.
    let err = result.expect_err("one host cannot be made compliant");
    assert!(format!("{err:#}").contains("1 of 4 hosts are not compliant"), "{err:#}");
    assert!(printed.contains("3 of 4 hosts differ from the catalog"), "{printed}");
    assert!(printed.contains("bmc: 7.00.00.00 -> 7.10.30.00"), "{printed}");
    assert!(printed.contains("cpldmb: F1.5.2 -> F1.6.0"), "{printed}");
    assert!(printed.contains("dell-compliant [compliant] already compliant"), "{printed}");
    assert!(
        printed.contains(
            r#"smc-no-cpld [DRIFTED] NOT FULLY INSTALLABLE: cpldmb (no inventory entry matches "^CPLD_Motherboard$")"#
        ),
        "{printed}"
    );
    assert_eq!(printed.lines().last(), Some("compliant: 3/4 hosts"), "{printed}");

    // The same report as one JSON document (nothing else on stdout).
    let audit = site.store.audit_list(20).await.unwrap();
    assert!(
        audit.iter().any(|a| a.action == "host reprovision all-drifted" && a.detail == "3 hosts requested"),
        "{audit:?}"
    );
    let (result, printed) = site
        .cli_full(&[
            "--format",
            "json",
            "host",
            "reprovision",
            "all-drifted",
            "--bypass-ceiling",
            "--yes",
            "--explore",
            "false",
        ])
        .await;
    assert!(result.is_err(), "still 1 host not compliant");
    let report: serde_json::Value = serde_json::from_str(&printed).unwrap_or_else(|e| panic!("{e}: {printed}"));
    assert_eq!((report["compliant"].as_u64(), report["total"].as_u64()), (Some(3), Some(4)), "{report}");
    let hosts = report["hosts"].as_array().unwrap();
    let smc = hosts.iter().find(|h| h["machine_id"] == "smc-no-cpld").unwrap();
    assert_eq!(smc["standing"], "DRIFTED", "{report}");
    assert_eq!(smc["components"]["bmc"][1], "1.03.10", "(before, after) per component: {report}");
    site.shutdown().await;
}
