//! End-to-end: `host reprovision abort` and `machine remove` (issue 27) through the hostfw API,
//! on a real Temporal dev server, bmc-sim and the real `hostfw-worker` binary.
//!
//! Host `a` (assigned to inst-a) takes two components by a Core-local script: the BIOS first,
//! whose flash waits for a release file (the test decides when it ends, without timing), then
//! the NIC. The site ceiling is 1. While `a`'s BIOS flashes:
//! - `b`, enabled for automatic updates, is held by the ceiling;
//! - an admin's `machine remove a` is refused (a flash is never cut short) and changes nothing;
//! - an operator's `host reprovision abort a` is accepted, but the flash is not interrupted: the
//!   request stays until the flash is released; then the run stops before the NIC, the platform
//!   is restored (lockdown on, its own OS), the request and health report go, the record names
//!   what was flashed and what still differs, and `b` takes the freed slot;
//! - then the admin removes `a`: its credentials go, its audit trail stays.
//!
//! The second test takes the same site to an abort whose platform restore fails (the BMC refuses
//! to turn lockdown on again): the host is left in maintenance, in repair, and its slot is freed.
//! The third is the issue's starvation case (hosts in repair set apart from the ceiling) and the
//! abort to maintenance of an exhausted host whose BMC is dead.
//!
//! With `HOSTFW_RECORD_HISTORIES=1` it records `a`'s history as `abort`.

use std::time::Duration;

use hostfw_tests::fixtures::{gated_flash_script, sim_lockdown};
use hostfw_tests::{free_port, Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::HostOutcome;

const FLEET: &str = r#"
[defaults]
task_seconds = 0.3
reset_seconds = 0.2
upload_style = "multipart"
task_style = "spec"

[[host]]
id = "a"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" }, { id = "NIC", version = "1.0" } ]

[[host]]
id = "b"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" }, { id = "NIC", version = "1.0" } ]
"#;

const IMAGES: &[(&str, &str, &str)] =
    &[("lenovo/uefi-3.0.bin", "^BIOS$", "3.0"), ("lenovo/nic-2.0.bin", "^NIC$", "2.0")];

/// Two components by the Core-local script, and a lockdown switch (bmc-sim's generic one), so an
/// assigned host's update turns lockdown off and its restore must turn it on again.
fn r760() -> HostModel {
    HostModel::new("r760", "Dell", "PowerEdge R760")
        .ordering(&["uefi", "nic"])
        .component("uefi", "^BIOS$", [Firmware::script("3.0", "scripts/flash.sh")])
        .component("nic", "^NIC$", [Firmware::script("2.0", "scripts/flash.sh")])
        .set("lockdown", sim_lockdown())
}

fn version(site: &Site, id: &str, member: &str) -> String {
    site.fleet.versions(id).into_iter().find(|(m, _)| m == member).map(|(_, v)| v).unwrap_or_default()
}

/// The site of the first two tests: `a` (assigned to inst-a) and `b` behind a ceiling of 1, the
/// API on a free port, an admin token (`admin.token`) and an operator's (`olga.token`); `a`
/// requested, approved and its BIOS flash started (waiting for the release file).
struct AbortSite {
    site: Site,
    _worker: ChildWorker,
    dir: tempfile::TempDir,
    url: String,
}

impl AbortSite {
    async fn start_with_a_flashing() -> AbortSite {
        let api = format!("127.0.0.1:{}", free_port());
        let script = gated_flash_script();
        let files = [("firmware/scripts/flash.sh", script.as_str())];
        let config = SiteToml::default()
            .catalog(&Catalog::of([r760()]))
            .manager(1, "1s")
            .site_workflows(true)
            .explorer_interval("1h")
            .firmware_global("autoupdate", false)
            .firmware_global("instance_updates_manual_tagging", false)
            .set("api", "listen", api.as_str());
        let site = Site::start(SiteSpec {
            fleet: FLEET,
            config,
            images: IMAGES,
            files: &files,
            assigned: &[("a", "inst-a")],
            external_worker: true,
            ..SiteSpec::default()
        })
        .await
        .unwrap();
        let worker = ChildWorker::start(&site).await;
        let dir = tempfile::tempdir().unwrap();
        let admin_token = dir.path().join("admin.token").display().to_string();
        site.cli(&["admin", "bootstrap", "--out", &admin_token]).await.unwrap();
        let s = AbortSite { site, _worker: worker, dir, url: format!("http://{api}") };
        let made = s.run("admin.token", &["token", "create", "--name", "olga", "--role", "operator"]).await.unwrap();
        std::fs::write(s.dir.path().join("olga.token"), hostfw_tests::fixtures::token_secret(&made)).unwrap();
        s.run("olga.token", &["site-explorer", "explore"]).await.unwrap();
        s.run("olga.token", &["host", "reprovision", "set", "--id", "a"]).await.unwrap();
        s.run("olga.token", &["instance", "reboot", "--instance", "inst-a", "--apply-updates-on-reboot"])
            .await
            .unwrap();
        s.site
            .wait_for("a's BIOS flash to start", Duration::from_secs(120), || async {
                s.flashes().contains("start uefi").then_some(())
            })
            .await;
        assert_eq!(s.site.fleet.lockdown("a"), Some(false), "lockdown is off for the update");
        s
    }

    /// `hostfw -a URL --token-file <token> args...`.
    async fn run(&self, token: &str, args: &[&str]) -> anyhow::Result<String> {
        let token_file = self.dir.path().join(token).display().to_string();
        let mut argv = vec!["-a", self.url.as_str(), "--token-file", token_file.as_str()];
        argv.extend_from_slice(args);
        self.site.cli(&argv).await
    }

    /// The flash script's log: `start <component>` / `done <component>` lines.
    fn flashes(&self) -> String {
        std::fs::read_to_string(self.site.dir.path().join("flashes.log")).unwrap_or_default()
    }

    /// Let the BIOS flash in progress end.
    fn release_flash(&self) {
        std::fs::write(self.site.dir.path().join("release"), "").unwrap();
    }

    /// Wait for b (held by the ceiling while a holds its slot) to be updated.
    async fn wait_for_b_updated(&self) {
        self.site
            .wait_for("b to update", Duration::from_secs(120), || async {
                (version(&self.site, "b", "NIC") == "2.0" && self.site.store.request_get("b").await.ok()?.is_none())
                    .then_some(())
            })
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_stops_after_the_flash_restores_the_host_frees_its_slot_and_then_it_can_be_removed() {
    let s = AbortSite::start_with_a_flashing().await;
    let site = &s.site;
    let admin = |args: &'static [&'static str]| s.run("admin.token", args);
    let olga = |args: &'static [&'static str]| s.run("olga.token", args);

    // b is held by the ceiling of 1.
    olga(&["machine", "auto-update", "--machine", "b", "--enable"]).await.unwrap();
    site.wait_for("the plan to hold b on the ceiling", Duration::from_secs(60), || async {
        let plan = olga(&["plan"]).await.ok()?;
        plan.lines().any(|l| l.starts_with("b ") && l.contains("ceiling")).then_some(())
    })
    .await;

    // A removal mid-flash is refused and changes nothing; an operator may not remove at all.
    let refused =
        admin(&["machine", "remove", "--id", "a", "--reason", "decommission", "--yes"]).await.unwrap_err().to_string();
    assert!(refused.contains("an update in progress") && refused.contains("host reprovision abort"), "{refused}");
    assert!(site.store.machine_get("a").await.unwrap().is_some());
    let forbidden = olga(&["machine", "remove", "--id", "a", "--reason", "x", "--yes"]).await.unwrap_err().to_string();
    assert!(forbidden.contains("403") || forbidden.contains("admin"), "{forbidden}");

    // The abort is accepted; the flash in progress is not interrupted.
    let blank = olga(&["host", "reprovision", "abort", "--id", "a", "--reason", " "]).await.unwrap_err();
    assert!(blank.to_string().contains("needs a reason"), "{blank}");
    let out = olga(&["host", "reprovision", "abort", "--id", "a", "--reason", "bad NIC batch"]).await.unwrap();
    assert!(out.contains("abort of a requested") && out.contains("next safe point"), "{out}");
    let status = site.status("a").await.expect("a's workflow answers");
    assert!(status.abort_requested.as_deref().is_some_and(|s| s.contains("bad NIC batch")), "{status:?}");
    assert!(site.store.request_get("a").await.unwrap().is_some(), "the request stays while the flash runs");
    assert_eq!(version(site, "a", "BIOS"), "1.0");

    // Released: the BIOS flash completes, then the run stops before the NIC and restores a.
    s.release_flash();
    let outcome = site.host_result("a").await.expect("a's run ends");
    let HostOutcome::Aborted { by, reason, installed, to_maintenance } = outcome else { panic!("{outcome:?}") };
    assert!(by.contains("olga"), "the abort names the token: {by}");
    assert_eq!((reason.as_str(), to_maintenance), ("bad NIC batch", false));
    assert_eq!(installed.iter().map(|c| c.to.as_str()).collect::<Vec<_>>(), vec!["3.0"], "{installed:?}");
    assert_eq!((version(site, "a", "BIOS"), version(site, "a", "NIC")), ("3.0".into(), "1.0".into()));
    assert!(!s.flashes().contains("start nic"), "the NIC was flashed after the abort");
    assert!(site.store.request_get("a").await.unwrap().is_none(), "the request is cleared");
    let machine = site.store.machine_get("a").await.unwrap().unwrap();
    assert_eq!(machine.state.as_str(), "Assigned", "back to its prior state");
    assert!(machine.repair.is_none());
    assert_eq!(site.fleet.lockdown("a"), Some(true), "lockdown back on");
    assert_eq!(site.fleet.booted_image("a").as_deref(), Some("os"), "back in its own OS");
    assert!(site.store.health_report_list().await.unwrap().iter().all(|h| h.machine_id != "a"), "health report gone");
    let history = site.store.history_list("a", 50).await.unwrap();
    for step in ["disabling platform lockdown", "re-enabling platform lockdown"] {
        assert!(history.iter().any(|h| h.message == step), "{step}: {history:?}");
    }
    let last = &history[0].message;
    assert!(
        last.contains("aborted by")
            && last.contains("this run flashed uefi 3.0")
            && last.contains("still differing from the catalog: nic"),
        "{last}"
    );

    // The freed slot goes to b.
    s.wait_for_b_updated().await;
    site.record_history("a", "abort").await;

    // Now a can be removed: its credentials go, its record stays.
    let out = admin(&["machine", "remove", "--id", "a", "--reason", "decommission", "--yes"]).await.unwrap();
    assert!(out.contains("machine a removed"), "{out}");
    assert!(site.store.machine_get("a").await.unwrap().is_none());
    assert!(site.store.credentials_get("a").await.unwrap().is_none(), "its BMC credentials are destroyed");
    let audit = admin(&["audit", "--target", "a"]).await.unwrap();
    assert!(audit.contains("machine remove") && audit.contains("host reprovision abort"), "{audit}");
    s.site.shutdown().await;
}

/// An abort whose platform restore fails: `a`'s BMC refuses every settings change from the
/// middle of its flash on (bmc-sim `refuse_patches`), so lockdown cannot be turned on again. The
/// run still ends at its safe point, but `a` is left in maintenance, in repair, with lockdown
/// honestly still off and the reason on record; its request goes and its slot goes to `b`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_whose_platform_restore_fails_leaves_the_host_in_repair_and_still_frees_its_slot() {
    use hostfw_bmc_sim::Fault;

    let s = AbortSite::start_with_a_flashing().await;
    let site = &s.site;
    s.run("olga.token", &["machine", "auto-update", "--machine", "b", "--enable"]).await.unwrap();
    site.fleet.set_fault("a", Fault { refuse_patches: 1000, ..Fault::default() }).unwrap();
    s.run("olga.token", &["host", "reprovision", "abort", "--id", "a", "--reason", "bad NIC batch"]).await.unwrap();
    s.release_flash();

    let outcome = site.host_result("a").await.expect("a's run ends");
    let HostOutcome::Aborted { to_maintenance, installed, .. } = outcome else { panic!("{outcome:?}") };
    assert!(to_maintenance, "a failed restore leaves the host in maintenance");
    assert_eq!(installed.iter().map(|c| c.to.as_str()).collect::<Vec<_>>(), vec!["3.0"], "{installed:?}");
    assert!(site.store.request_get("a").await.unwrap().is_none(), "the request is cleared");
    let machine = site.store.machine_get("a").await.unwrap().unwrap();
    assert_eq!(machine.state.as_str(), "Maintenance");
    let mark = machine.repair.expect("a is marked for repair");
    assert!(mark.reason.contains("bad NIC batch"), "{mark:?}");
    assert_eq!(site.fleet.lockdown("a"), Some(false), "the refused change did not happen");
    let last = site.store.history_list("a", 1).await.unwrap().remove(0).message;
    assert!(
        last.contains("re-enabling platform lockdown")
            && last.contains("the platform restore failed")
            && last.contains("left in maintenance for repair")
            && last.contains("this run flashed uefi 3.0"),
        "{last}"
    );
    assert!(!s.flashes().contains("start nic"), "the NIC was flashed after the abort");

    // Its slot is free (a host in repair holds none): b updates; the plan lists a in repair.
    s.wait_for_b_updated().await;
    let plan = s.run("olga.token", &["plan"]).await.unwrap();
    assert!(plan.lines().any(|l| l.starts_with("a ") && l.contains("aborted to maintenance")), "{plan}");
    s.site.shutdown().await;
}

/// The issue's starvation case, then an abort to maintenance of a host whose BMC is dead.
/// Canary waves off, ceiling 3, no retries: three R760 hosts of a bad image start, fail and spend
/// their retry budgets (an error budget of 3, so that the third starts whichever pass sees it;
/// then the target pauses). They are in repair, set apart from the
/// ceiling, so the healthy Supermicro host still starts and updates (before, it waited on
/// "ceiling reached" for good). Then x1's BMC dies; its abort with `--to-maintenance` (through the
/// API) ends the exhausted run at once: the request and slot go, x1 stays in maintenance marked
/// for repair until `machine maintenance --exit`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_in_repair_do_not_starve_the_site_and_a_dead_bmc_host_is_aborted_to_maintenance() {
    use hostfw_bmc_sim::Fault;
    use hostfw_tests::fixtures::{bios_fleet, r760_bios, smc_bios};

    let api = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{api}");
    let metrics = format!("127.0.0.1:{}", free_port());
    let fleet = bios_fleet(&[
        ("g1", "Supermicro", "SYS-821GE-TNHR"),
        ("x1", "Dell", "PowerEdge R760"),
        ("x2", "Dell", "PowerEdge R760"),
        ("x3", "Dell", "PowerEdge R760"),
    ]);
    let config = SiteToml::default()
        .catalog(&Catalog::of([r760_bios(), smc_bios()]))
        .manager(3, "1s")
        .site_workflows(true)
        .explorer_interval("1h")
        .max_retries(0)
        .canary_waves(&[], "1m")
        .firmware_global("autoupdate", false)
        .machine_updater("error_budget_failed_hosts", 3)
        .machine_updater("error_budget_failed_percent", 0)
        .set("worker", "metrics_listen", metrics.as_str())
        .set("api", "listen", api.as_str());
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config,
        images: &[("dell/bios.bin", "^BIOS$", "3.0")],
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let _worker = ChildWorker::start(&site).await;
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("admin.token").display().to_string();
    site.cli(&["admin", "bootstrap", "--out", &token]).await.unwrap();
    let api_cli = |args: &[&str]| {
        let mut argv = vec!["-a", url.as_str(), "--token-file", token.as_str()];
        argv.extend_from_slice(args);
        let argv: Vec<String> = argv.into_iter().map(str::to_string).collect();
        let site = &site;
        async move { site.cli(&argv.iter().map(String::as_str).collect::<Vec<_>>()).await }
    };
    api_cli(&["site-explorer", "explore"]).await.unwrap();
    for id in ["x1", "x2", "x3"] {
        site.fleet.set_fault(id, Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
        api_cli(&["machine", "auto-update", "--machine", id, "--enable"]).await.unwrap();
    }
    for id in ["x1", "x2", "x3"] {
        site.wait_for(&format!("{id} to spend its retry budget"), Duration::from_secs(120), || async {
            site.store.request_get(id).await.ok()??.exhausted.then_some(())
        })
        .await;
    }

    // The healthy model still starts: the exhausted hosts hold no update slot.
    api_cli(&["machine", "auto-update", "--machine", "g1", "--enable"]).await.unwrap();
    site.wait_for("g1 to update", Duration::from_secs(120), || async {
        (version(&site, "g1", "BIOS") == "3.0" && site.store.request_get("g1").await.ok()?.is_none()).then_some(())
    })
    .await;
    let plan = api_cli(&["plan"]).await.unwrap();
    assert!(plan.contains("IN REPAIR (3 of machine_updater.max_hosts_in_repair = 10"), "{plan}");
    for id in ["x1", "x2", "x3"] {
        assert!(plan.lines().any(|l| l.starts_with(id) && l.contains("retry budget spent")), "{id}: {plan}");
    }
    let page = hostfw_tests::metrics_page::scrape(&metrics).await;
    assert!(page.contains("\nhostfw_hosts_in_repair 3\n"), "{page}");
    assert!(page.contains("\nhostfw_max_hosts_in_repair 10\n"), "{page}");

    // x1's BMC dies; the abort to maintenance ends its exhausted run at once.
    site.fleet.set_fault("x1", Fault { unreachable_for_secs: 3600.0, ..Fault::default() }).unwrap();
    let out = api_cli(&["host", "reprovision", "abort", "--id", "x1", "--reason", "BMC dead", "--to-maintenance"])
        .await
        .unwrap();
    assert!(out.contains("abort of x1 requested"), "{out}");
    let outcome = site.host_result("x1").await.expect("x1's run ends");
    assert!(matches!(outcome, HostOutcome::Aborted { to_maintenance: true, .. }), "{outcome:?}");
    assert!(site.store.request_get("x1").await.unwrap().is_none(), "the request is cleared");
    let machine = site.store.machine_get("x1").await.unwrap().unwrap();
    assert_eq!(machine.state.as_str(), "Maintenance");
    let mark = machine.repair.expect("x1 is marked for repair");
    assert!(mark.reason.contains("BMC dead"), "{mark:?}");
    let plan = api_cli(&["plan"]).await.unwrap();
    assert!(plan.lines().any(|l| l.starts_with("x1") && l.contains("aborted to maintenance")), "{plan}");

    // Repaired: out of maintenance, out of repair.
    site.fleet.set_fault("x1", Fault::default()).unwrap();
    api_cli(&["machine", "maintenance", "--id", "x1", "--exit"]).await.unwrap();
    let machine = site.store.machine_get("x1").await.unwrap().unwrap();
    assert!(machine.repair.is_none() && machine.state.as_str() != "Maintenance", "{machine:?}");
    site.shutdown().await;
}
