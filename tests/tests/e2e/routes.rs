//! End-to-end: the installation routes (Scout, Core-local script, Redfish with site-wide upload
//! slots) and the activation kinds (AC power cycles, HGX power cycle, pre-update resets, bounded
//! re-activation), against bmc-sim on a real Temporal dev server.

use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_tests::fixtures::{dell_bios_flash_script, dgx_h100, r760_bios, strings};
use hostfw_tests::history::activity_records;
use hostfw_tests::{Catalog, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::{host_reprovision_workflow_id, HostOutcome, HostReprovisionWorkflow};

fn history_has(history: &[hostfw_store::HistoryEntry], substate: &str) -> bool {
    history.iter().any(|h| h.substate.map(|s| s.as_str()) == Some(substate))
}

async fn workflow_history(site: &Site, machine_id: &str) -> String {
    let handle = site.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
    let bytes = handle.fetch_history(Default::default()).to_json().await.unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

// The Scout script stands in for a vendor's in-band updater: it flashes the downloaded image
// through the simulated host's local flash interface (bmc-sim `/sim/host-flash`).
const SCOUT_SCRIPT: &str = r#"#!/bin/sh
set -eu
echo "scout: $COMPONENT_TYPE -> $TARGET_VERSION on $MACHINE_ID"
curl -sSf --data-binary @"$DOWNLOAD_DIR/nic.bin" "$(cat "{SITE}/simhosts/$MACHINE_ID")/sim/host-flash"
"#;

/// A site with one DGX host `id` (its NIC at 28.39, applied on reset) whose NIC goes through
/// Scout: the package is in the site's Scout directory, and the host's flash endpoint is in
/// `simhosts/<id>` for the script.
async fn start_scout(id: &str, assigned: &[(&str, &str)]) -> Site {
    let fleet = format!(
        "[[host]]\nid = \"{id}\"\nvendor = \"Nvidia\"\nmodel = \"DGX H100\"\nbmc_address = \"127.0.0.1:0\"\n\
         apply_time = \"OnReset\"\nreset_seconds = 0.2\nfirmware = [ {{ id = \"NIC_0\", version = \"28.39\" }} ]\n"
    );
    let files = [
        ("scout/nvidia/dgx_h100/nic/upgrade.sh", SCOUT_SCRIPT),
        (
            "scout/nvidia/dgx_h100/nic/metadata.toml",
            "execution_timeout_seconds = 60\nartifact_download_timeout_seconds = 30\n",
        ),
    ];
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().model(&dgx_h100()),
        images: &[("dgx/nic.bin", "^NIC_0$", "28.43")],
        files: &files,
        scout: true,
        assigned,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let simhosts = site.dir.path().join("simhosts");
    std::fs::create_dir_all(&simhosts).unwrap();
    std::fs::write(simhosts.join(id), &site.fleet.host(id).unwrap().base_url).unwrap();
    site
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scout_installs_then_hostfw_activates_and_verifies() {
    let site = start_scout("dgx-1", &[]).await;

    site.cli(&["host", "reprovision", "set", "--id", "dgx-1"]).await.unwrap();
    let outcome = site.host_result("dgx-1").await.expect("compliant through Scout");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.fleet.versions("dgx-1"), vec![("NIC_0".into(), "28.43".into())]);
    let stats = site.fleet.stats();
    let host = &stats.per_host["dgx-1"];
    assert_eq!(host.uploads, 0, "nothing went through Redfish");
    assert_eq!(host.installs.get("NIC_0"), Some(&1));
    assert!(host.system_resets >= 1, "Scout's staged image was activated by hostfw's reset");
    let history = site.store.history_list("dgx-1", 100).await.unwrap();
    for s in ["WaitingForScoutUpgrade", "ResetForNewFirmware", "NewFirmwareReportedWait"] {
        assert!(history_has(&history, s), "missing {s}: {history:?}");
    }
    site.record_history("dgx-1", "scout-route").await;
    site.shutdown().await;
}

/// The R760's BIOS by a Core-local script that works, the R750's by one that fails.
fn script_catalog() -> Catalog {
    let r750 = HostModel::new("r750", "Dell", "PowerEdge R750").ordering(&["uefi"]).component(
        "uefi",
        "^BIOS$",
        [Firmware::script("3.0", "scripts/broken.sh")],
    );
    Catalog::of([r760_bios().component("uefi", "^BIOS$", [Firmware::script("3.0", "scripts/flash-bios.sh")]), r750])
}

// A legacy Core-local script: it owns install and activation, through the BMC's Redfish API, with
// the BMC address and login from its environment.
fn flash_script() -> String {
    dell_bios_flash_script(false)
}

const BROKEN_SCRIPT: &str = "#!/bin/sh\necho \"login $BMC_USERNAME/$BMC_PASSWORD refused\" >&2\nexit 3\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_local_scripts_run_with_bmc_credentials_and_failures_are_reported() {
    let fleet = r#"
[defaults]
password = "pw-do-not-leak"
task_seconds = 0.3
upload_style = "multipart"
task_style = "spec"
[[host]]
id = "script-ok"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" } ]
[[host]]
id = "script-bad"
vendor = "Dell"
model = "PowerEdge R750"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" } ]
"#;
    let script = flash_script();
    let files = [("firmware/scripts/flash-bios.sh", script.as_str()), ("firmware/scripts/broken.sh", BROKEN_SCRIPT)];
    let site = Site::start(SiteSpec {
        fleet,
        config: SiteToml::default().catalog(&script_catalog()).max_retries(0),
        images: &[("dell/bios.bin", "^BIOS$", "3.0")],
        files: &files,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "script-ok"]).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "script-bad"]).await.unwrap();

    let outcome = site.host_result("script-ok").await.expect("compliant through the script");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.fleet.versions("script-ok"), vec![("BIOS".into(), "3.0".into())]);
    let history = site.store.history_list("script-ok", 100).await.unwrap();
    assert!(history_has(&history, "WaitingForScript"));
    assert!(!history_has(&history, "ResetForNewFirmware"), "the script owns activation: {history:?}");
    site.record_history("script-ok", "core-local-script-route").await;

    let status = site
        .wait_for("the failing script to exhaust its (zero) retries", Duration::from_secs(60), || async {
            site.status("script-bad").await.filter(|s| s.exhausted)
        })
        .await;
    assert_eq!(status.substate.to_string(), "FailedFirmwareUpgrade");
    let history = site.store.history_list("script-bad", 100).await.unwrap();
    let failure = history.iter().find(|h| h.message.contains("exit code 3")).expect("exit code reported");
    assert!(failure.message.contains("refused"), "stderr tail reported: {failure:?}");
    assert!(failure.message.contains("****") && !failure.message.contains("pw-do-not-leak"), "{failure:?}");
    // Issue 26 item 12: the script that failed is a failed activity (red in the Web UI, counted
    // among the run's failures), not a completed one whose result says it failed.
    let runs = activity_records(&site.history_json("script-bad").await, hostfw_workflows::names::ACT_RUN_SCRIPT);
    assert!(!runs.is_empty() && runs.iter().all(|r| !r.completed), "{runs:?}");
    assert!(
        runs.iter()
            .all(|r| r.failed.as_deref().is_some_and(|f| f.contains("ScriptFailed") && f.contains("exit code 3"))),
        "each run of the failing script failed with its cause: {runs:?}"
    );

    for host in ["script-ok", "script-bad"] {
        let json = workflow_history(&site, host).await;
        assert!(!json.contains("pw-do-not-leak"), "BMC password in the history of {host}");
    }
    site.shutdown().await;
}

/// Six Dell hosts with an old BIOS, over every upload route.
fn six_hosts() -> String {
    let mut fleet =
        String::from("[defaults]\ntask_seconds = 1.0\nupload_style = \"multipart\"\ntask_style = \"dell\"\n");
    let styles = [
        "",
        "",
        "",
        "upload_style = \"simpleupdate\"\ntask_style = \"sushy\"\n",
        "upload_style = \"httppush\"\ntask_style = \"bmcweb\"\n",
        "",
    ];
    for (n, style) in styles.iter().enumerate() {
        fleet.push_str(&format!(
            "[[host]]\nid = \"u{}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n{style}\
             firmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n",
            n + 1
        ));
    }
    fleet
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_uploads_bounds_concurrent_uploads_site_wide() {
    let fleet = six_hosts();
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().model(&r760_bios()).max_uploads(2),
        images: &[("dell/bios.bin", "^BIOS$", "3.0")],
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let (result, printed) = site
        .cli_full(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--yes", "--timeout-secs", "120"])
        .await;
    result.unwrap_or_else(|e| panic!("{e:#}\n{printed}"));
    assert_eq!(printed.lines().last(), Some("compliant: 6/6 hosts"), "{printed}");
    let stats = site.fleet.stats();
    assert_eq!(stats.uploads_started, 6);
    assert!(stats.max_concurrent_uploads <= 2, "bmc-sim saw {} uploads at once", stats.max_concurrent_uploads);
    assert_eq!(stats.max_concurrent_uploads, 2, "both slots were used");
    assert_eq!(site.store.upload_slots_in_use(2).await.unwrap(), 0, "every slot released");
    site.shutdown().await;
}

/// `ac_cycle` of a model: a `#Chassis.Reset` PowerCycle of `chassis`.
fn ac_cycle(chassis: &str) -> toml::Value {
    strings(&[("resource", chassis), ("action", "#Chassis.Reset"), ("reset_type", "PowerCycle")])
}

/// An HGX B200 (`gb`) with one component per activation kind: its BIOS needs the pre-update resets,
/// its HGX BMC the GPU reboot delay, its CPLD a power drain (AC cycle of `/redfish/v1/Chassis/1`).
fn activation_model() -> HostModel {
    HostModel::new("gb", "Nvidia", "HGX B200")
        .ordering(&["uefi", "hgxbmc", "cpldmb"])
        .set("ac_cycle", ac_cycle("/redfish/v1/Chassis/1"))
        .component("hgxbmc", "^HGX_FW_BMC_0$", [Firmware::file("25.06", "hgx/hgxbmc.bin")])
        .component("cpldmb", "^CPLD_0$", [Firmware::file("2.0", "hgx/cpld.bin").set("power_drains_needed", 1)])
        .component("uefi", "^BIOS_0$", [Firmware::file("9.0", "hgx/bios.bin").set("pre_update_resets", true)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_activation_kind_runs_and_is_verified() {
    let fleet = r#"
[[host]]
id = "hgx-1"
vendor = "Nvidia"
model = "HGX B200"
bmc_address = "127.0.0.1:0"
task_seconds = 0.2
reset_seconds = 0.2
manager_reset_seconds = 0.3
apply_time = "OnReset"
firmware = [ { id = "HGX_FW_BMC_0", version = "24.0" }, { id = "CPLD_0", version = "1.0" }, { id = "BIOS_0", version = "8.0" } ]
"#;
    let site = Site::start(SiteSpec {
        fleet,
        config: SiteToml::default()
            .model(&activation_model())
            .firmware_global("hgx_bmc_gpu_reboot_delay", "1s")
            .power_drain_waits("1s")
            .host_reprovision("pre_update_wait", "1s"),
        images: &[("hgx/hgxbmc.bin", "^HGX_FW_BMC_0$", "25.06"), ("hgx/bios.bin", "^BIOS_0$", "9.0")],
        files: &[(
            "firmware/hgx/cpld.bin",
            "HOSTFW-SIM-IMAGE applies_to=^CPLD_0$ version=2.0 activation=ac_cycle\nxxxxxxxx",
        )],
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "hgx-1"]).await.unwrap();
    let outcome = site.host_result("hgx-1").await.expect("compliant");
    let HostOutcome::Compliant { installed } = outcome else { panic!("{outcome:?}") };
    assert_eq!(installed.len(), 3);
    let versions = site.fleet.versions("hgx-1");
    assert_eq!(
        versions,
        vec![("HGX_FW_BMC_0".into(), "25.06".into()), ("CPLD_0".into(), "2.0".into()), ("BIOS_0".into(), "9.0".into())],
    );
    let stats = site.fleet.stats();
    let host = &stats.per_host["hgx-1"];
    assert_eq!(host.ac_cycles, 1, "one power drain for the CPLD (its image applies only on an AC cycle)");
    assert!(host.manager_resets >= 1, "the pre-update resets reset the BMC before the first attempt");
    let history = site.store.history_list("hgx-1", 200).await.unwrap();
    assert!(history.iter().any(|h| h.message.contains("pre-update resets")), "{history:?}");
    site.record_history("hgx-1", "activation-kinds").await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activation_retries_are_bounded_then_the_attempt_fails() {
    let fleet = r#"
[[host]]
id = "stuck"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
task_seconds = 0.2
reset_seconds = 0.2
faults = { version_never_changes = true }
firmware = [ { id = "BIOS", version = "1.0" } ]
"#;
    let site = Site::start(SiteSpec {
        fleet,
        config: SiteToml::default()
            .model(&r760_bios())
            .max_retries(0)
            .host_reprovision("max_reactivations", 2)
            .host_reprovision("verify_max_polls", 2),
        images: &[("dell/bios.bin", "^BIOS$", "3.0")],
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "stuck"]).await.unwrap();
    site.wait_for("the host to be exhausted", Duration::from_secs(60), || async {
        site.status("stuck").await.filter(|s| s.exhausted)
    })
    .await;
    let history = site.store.history_list("stuck", 200).await.unwrap();
    let reactivations = history.iter().filter(|h| h.message.starts_with("re-activating")).count();
    assert_eq!(reactivations, 2, "{history:?}");
    assert!(history.iter().any(|h| h.message.contains("never reported 3.0 after 3 activations")), "{history:?}");
    assert_eq!(site.fleet.stats().per_host["stuck"].system_resets, 3, "one reset per activation, no more");
    let _ = Fault::default();
    site.shutdown().await;
}

/// Scout serves assigned hosts too (NICo delivers Scout tasks only to hosts in the top-level
/// state): after the tenant's approval, platform configuration and discovery boot, the NIC
/// installs through the host's agent, and the host returns to its tenant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scout_installs_on_an_assigned_host_after_the_tenant_approves() {
    let site = start_scout("dgx-a", &[("dgx-a", "tenant-vm-9")]).await;

    site.cli(&["host", "reprovision", "set", "--id", "dgx-a"]).await.unwrap();
    site.wait_substate("dgx-a", "WaitingForApproval", Duration::from_secs(60)).await;
    assert_eq!(site.fleet.stats().per_host["dgx-a"].installs.get("NIC_0"), None, "nothing before the approval");
    site.cli(&["instance", "reboot", "--instance", "tenant-vm-9", "--apply-updates-on-reboot"]).await.unwrap();
    let outcome = site.host_result("dgx-a").await.expect("compliant through Scout");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.fleet.versions("dgx-a"), vec![("NIC_0".into(), "28.43".into())]);
    let stats = site.fleet.stats();
    assert_eq!(stats.per_host["dgx-a"].uploads, 0, "nothing went through Redfish");
    assert_eq!(stats.per_host["dgx-a"].installs.get("NIC_0"), Some(&1));
    let history = site.store.history_list("dgx-a", 100).await.unwrap();
    for s in ["WaitingForApproval", "DiscoveryBoot", "WaitingForScoutUpgrade", "NewFirmwareReportedWait"] {
        assert!(history_has(&history, s), "missing {s}: {history:?}");
    }
    let machine = site.store.machine_get("dgx-a").await.unwrap().unwrap();
    assert_eq!(machine.state, hostfw_model::HostState::Assigned, "back to its tenant");
    assert_eq!(machine.instance_id.as_deref(), Some("tenant-vm-9"));
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scout_package_changed_after_signing_is_refused_and_nothing_runs() {
    let site = start_scout("dgx-t", &[]).await;
    // One byte changed after the operator signed the package (the kit signs at start).
    let script = site.dir.path().join("scout/nvidia/dgx_h100/nic/upgrade.sh");
    let marker = site.dir.path().join("tampered-script-ran");
    std::fs::write(&script, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();

    site.cli(&["host", "reprovision", "set", "--id", "dgx-t"]).await.unwrap();
    let refusal = site
        .wait_for("Scout to refuse the changed package", Duration::from_secs(60), || async {
            let history = site.store.history_list("dgx-t", 100).await.unwrap();
            history.into_iter().find(|h| h.message.contains("scout package nvidia/dgx_h100/nic refused"))
        })
        .await;
    assert!(refusal.message.contains("differs from the signed"), "{refusal:?}");
    assert!(!marker.exists(), "the changed script ran");
    assert_eq!(site.fleet.versions("dgx-t"), vec![("NIC_0".into(), "28.39".into())]);
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scout_package_signed_for_another_version_is_refused_and_nothing_runs() {
    use hostfw_activities::host::scout_signing;
    let site = start_scout("dgx-v", &[]).await;
    // The operator's signature of this very package, but for the version it installed before:
    // an old signed package served again for the catalog's new target.
    let package = site.dir.path().join("scout/nvidia/dgx_h100/nic");
    let key = hostfw_tests::site::scout_keys_dir(site.dir.path()).join(scout_signing::PRIVATE_KEY_FILE);
    let key = scout_signing::load_signing_key(&key).unwrap();
    let old = scout_signing::SignFor { version: "28.39".into(), ..Default::default() };
    scout_signing::sign(&key, &package, &old).unwrap();

    site.cli(&["host", "reprovision", "set", "--id", "dgx-v"]).await.unwrap();
    let refusal = site
        .wait_for("Scout to refuse the package signed for 28.39", Duration::from_secs(60), || async {
            let history = site.store.history_list("dgx-v", 100).await.unwrap();
            history.into_iter().find(|h| h.message.contains("scout package nvidia/dgx_h100/nic refused"))
        })
        .await;
    assert!(
        refusal.message.contains("signed for firmware version 28.39, but the task's target version is 28.43"),
        "{refusal:?}"
    );
    let stats = site.fleet.stats();
    assert_eq!(stats.per_host["dgx-v"].installs.get("NIC_0"), None, "nothing was flashed");
    assert_eq!(site.fleet.versions("dgx-v"), vec![("NIC_0".into(), "28.39".into())]);
    // Issue 26 item 12: Scout's refusal is a failed activity (red in the Web UI) with its reason.
    let runs = activity_records(&site.history_json("dgx-v").await, hostfw_workflows::names::ACT_SCOUT_RUN_UPGRADE);
    assert!(
        runs.iter().any(|r| !r.completed && r.failed.as_deref().is_some_and(|f| f.contains("ScriptFailed"))),
        "{runs:?}"
    );
    site.shutdown().await;
}

/// Issue 26 item 11: power actions never leave a host off. A model whose entry needs an AC power
/// cycle but whose catalog says nothing of how (`ac_cycle` missing) fails before its first power
/// action; so does one whose `ac_cycle` names a resource the BMC does not have (the activation
/// preflight reads it first, patch `power-preflight`). One whose AC cycle the BMC advertises but
/// fails to carry out (bmc-sim's `failing_actions`) after the plan powered the host off is powered
/// back on, and the failure says so. All end with their retry budget (0) spent and the host On.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn power_actions_never_leave_a_host_off() {
    let cpld = |key: &str, model: &str| {
        HostModel::new(key, "Nvidia", model).ordering(&["cpldmb"]).component(
            "cpldmb",
            "^CPLD_0$",
            [Firmware::file("2.0", "hgx/cpld.bin").set("power_drains_needed", 1)],
        )
    };
    let catalog = Catalog::of([
        cpld("unset", "HGX B200"),
        cpld("broken", "HGX H200").set("ac_cycle", ac_cycle("/redfish/v1/Chassis/NoSuchChassis")),
        cpld("failing", "HGX B300").set("ac_cycle", ac_cycle("/redfish/v1/Chassis/1")),
    ]);
    let host = |id: &str, model: &str, extra: &str| {
        format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Nvidia\"\nmodel = \"{model}\"\nbmc_address = \"127.0.0.1:0\"\n\
             task_seconds = 0.2\nreset_seconds = 0.2\napply_time = \"OnReset\"\n\
             firmware = [ {{ id = \"CPLD_0\", version = \"1.0\" }} ]\n{extra}"
        )
    };
    let fleet = host("unset-1", "HGX B200", "")
        + &host("broken-1", "HGX H200", "")
        + &host("failing-1", "HGX B300", "faults = { failing_actions = [\"Chassis.Reset\"] }\n");
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().catalog(&catalog).power_drain_waits("1s").max_retries(0),
        files: &[(
            "firmware/hgx/cpld.bin",
            "HOSTFW-SIM-IMAGE applies_to=^CPLD_0$ version=2.0 activation=ac_cycle\nxxxxxxxx",
        )],
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    for (id, wanted, resets) in [
        (
            "unset-1",
            vec!["no ac_cycle setting (which resource and action cycle its AC power); nothing was powered off"],
            0,
        ),
        (
            "broken-1",
            vec![
                "activation preflight: AC power cycle (the model's ac_cycle action)",
                "/redfish/v1/Chassis/NoSuchChassis: HTTP 404",
                "nothing was powered off or reset",
            ],
            0,
        ),
        ("failing-1", vec!["Chassis.Reset: HTTP 500", "the host was powered back on"], 2),
    ] {
        site.cli(&["host", "reprovision", "set", "--id", id]).await.unwrap();
        site.wait_for(&format!("{id} to fail"), Duration::from_secs(90), || async {
            site.store.request_get(id).await.ok()??.exhausted.then_some(())
        })
        .await;
        let history = site.store.history_list(id, 200).await.unwrap();
        for wanted in wanted {
            assert!(history.iter().any(|h| h.message.contains(wanted)), "{id}: {wanted:?} in {history:#?}");
        }
        assert_eq!(site.fleet.power_state(id).as_deref(), Some("On"), "{id} is left On");
        assert_eq!(site.fleet.stats().per_host[id].system_resets, resets, "{id}: ForceOff then On, or nothing");
        assert_eq!(site.fleet.stats().per_host[id].ac_cycles, 0, "{id}: no AC cycle happened");
    }
    site.record_history("broken-1", "power-preflight-refused").await;
    site.record_history("failing-1", "power-preflight-then-drain-failed-powered-back-on").await;
    site.shutdown().await;
}
