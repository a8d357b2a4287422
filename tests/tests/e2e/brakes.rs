//! End-to-end: the operator's brakes (issue 27) on a real Temporal dev server, bmc-sim and the
//! real `hostfw-worker` binary. Two Lenovo SR630 hosts take two components each, both by a
//! Core-local script: the BIOS first, whose flash waits for a release file (so the test decides
//! when the flash ends, without timing), then the NIC. The scheduler starts host `a`; while its
//! BIOS flash runs the site is frozen (`hostfw freeze --reason ...`). Then:
//! - no new host starts: `b`, enabled for automatic updates after the freeze, gets no request over
//!   several passes; `plan` shows the freeze (who, why) and names it as `b`'s reason; a direct
//!   request for `b` is refused; `/metrics` has `hostfw_freezes_active{scope="site"} 1`; the
//!   scheduler's current details in the Web UI name the freeze and who set it;
//! - the flash in progress is not interrupted: released, `a`'s BIOS completes, then `a` holds in
//!   `HeldByFreeze` before its NIC (the `status` query and `managed-host show` say which freeze);
//!   its NIC script never starts while frozen;
//! - `hostfw unfreeze` (audited) lets `a` finish its NIC, and `b` starts and updates;
//! - `hostfw budget pause` pauses a target by hand (`plan` names who), `budget resume` lifts it.
//!
//! With `HOSTFW_RECORD_HISTORIES=1` it records `a`'s history as `freeze-hold` (the hold path).

use std::time::Duration;

use hostfw_model::HostSubstate;
use hostfw_store::{MANAGER_PASSES_TOTAL, PASS_SUCCEEDED};
use hostfw_tests::fixtures::gated_flash_script;
use hostfw_tests::{free_port, Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::names::MACHINE_UPDATE_MANAGER_ID;

const FLEET: &str = r#"
[defaults]
task_seconds = 0.3
upload_style = "multipart"
task_style = "spec"

[[host]]
id = "a"
vendor = "Lenovo"
model = "SR630"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" }, { id = "NIC", version = "1.0" } ]

[[host]]
id = "b"
vendor = "Lenovo"
model = "SR630"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" }, { id = "NIC", version = "1.0" } ]
"#;

const IMAGES: &[(&str, &str, &str)] =
    &[("lenovo/uefi-3.0.bin", "^BIOS$", "3.0"), ("lenovo/nic-2.0.bin", "^NIC$", "2.0")];

fn sr630() -> HostModel {
    HostModel::new("sr630", "Lenovo", "SR630")
        .ordering(&["uefi", "nic"])
        .component("uefi", "^BIOS$", [Firmware::script("3.0", "scripts/flash.sh")])
        .component("nic", "^NIC$", [Firmware::script("2.0", "scripts/flash.sh")])
}

fn compliant(site: &Site, id: &str) -> bool {
    let v = site.fleet.versions(id);
    v.contains(&("BIOS".to_string(), "3.0".to_string())) && v.contains(&("NIC".to_string(), "2.0".to_string()))
}

async fn passes(site: &Site) -> i64 {
    let rows = site.store.counter_list().await.unwrap();
    rows.iter().filter(|(n, l, _)| n == MANAGER_PASSES_TOTAL && l == PASS_SUCCEEDED).map(|(_, _, v)| *v).sum()
}

async fn scrape(addr: &str) -> String {
    hostfw_tests::metrics_page::scrape(addr).await
}

/// The site both tests start from: hosts `a` and `b` explored, the scheduler (ceiling 10) started
/// `a`, and `a`'s BIOS flash runs, waiting for the release file.
async fn a_flashing(metrics: &str) -> (Site, ChildWorker) {
    let script = gated_flash_script();
    let files = [("firmware/scripts/flash.sh", script.as_str())];
    let config = SiteToml::default()
        .catalog(&Catalog::of([sr630()]))
        .manager(10, "1s")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .set("worker", "metrics_listen", metrics);
    let site = Site::start(SiteSpec {
        fleet: FLEET,
        config,
        images: IMAGES,
        files: &files,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let worker = ChildWorker::start(&site).await;
    site.cli(&["site-explorer", "explore"]).await.unwrap();
    let flashes = site.dir.path().join("flashes.log");
    site.cli(&["machine", "auto-update", "--machine", "a", "--enable"]).await.unwrap();
    site.wait_for("a's BIOS flash to start", Duration::from_secs(120), || async {
        std::fs::read_to_string(&flashes).unwrap_or_default().contains("start uefi").then_some(())
    })
    .await;
    (site, worker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_freeze_starts_no_host_holds_the_one_in_flight_after_its_flash_and_unfreeze_lets_it_finish() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let (site, _worker) = a_flashing(&metrics).await;
    let flashes = site.dir.path().join("flashes.log");
    let read_flashes = || std::fs::read_to_string(&flashes).unwrap_or_default();

    // Freeze the site mid-flash.
    let empty = site.cli(&["freeze", "--reason", " "]).await.unwrap_err().to_string();
    assert!(empty.contains("needs a reason"), "{empty}");
    let bad = site.cli(&["freeze", "--reason", "x", "--selector", "rack=r1"]).await.unwrap_err().to_string();
    assert!(bad.contains("\"rack=r1\""), "the bad selector is named: {bad}");
    let out = site.cli(&["freeze", "--reason", "datacenter power work"]).await.unwrap();
    assert!(out.contains("freeze 1 set on site"), "{out}");

    // No new host starts: b, enabled now, gets no request over passes that see it.
    site.cli(&["machine", "auto-update", "--machine", "b", "--enable"]).await.unwrap();
    let seen = passes(&site).await;
    site.wait_for("two scheduler passes after b was enabled", Duration::from_secs(60), || async {
        (passes(&site).await >= seen + 2).then_some(())
    })
    .await;
    assert!(site.store.request_get("b").await.unwrap().is_none(), "b was started under the freeze");
    let plan = site.cli(&["plan"]).await.unwrap();
    assert!(plan.contains("FROZEN") && plan.contains("datacenter power work"), "{plan}");
    let line = plan.lines().find(|l| l.starts_with("b ")).unwrap_or_else(|| panic!("b in {plan}"));
    assert!(line.contains("the whole site is frozen by cli:") && line.contains("hostfw unfreeze --id 1"), "{line}");
    let refused = site.cli(&["host", "reprovision", "set", "--id", "b"]).await.unwrap_err().to_string();
    assert!(refused.contains("site is frozen by cli:"), "{refused}");
    assert!(site.store.request_get("b").await.unwrap().is_none());
    let page = scrape(&metrics).await;
    assert!(page.lines().any(|l| l == "hostfw_freezes_active{scope=\"site\"} 1"), "{page}");
    // `watch` shows the freeze too (its JSON lines carry each freeze and the hosts it holds).
    let (_, watched) = site.cli_full(&["--format", "json", "watch", "--timeout-secs", "1"]).await;
    let first: serde_json::Value = serde_json::from_str(watched.lines().next().unwrap_or_default()).unwrap();
    let freeze = first["freezes"]["freeze 1"].as_str().unwrap_or_default();
    assert!(freeze.starts_with("on site by cli:") && freeze.ends_with("datacenter power work"), "{watched}");
    assert_eq!(first["frozen"], 1, "b is held by the freeze: {watched}");
    // So does the Web UI: the scheduler's current details name the freeze and who set it.
    let details = site
        .wait_for("the scheduler's current details to show the freeze", Duration::from_secs(60), || async {
            let d = site.temporal().current_details(MACHINE_UPDATE_MANAGER_ID).ok()?;
            d.contains("freeze 1 on site set by cli:").then_some(d)
        })
        .await;
    assert!(details.contains("datacenter power work") && details.contains("Frozen 1"), "{details}");

    // The flash in progress finishes; a then holds before its NIC.
    std::fs::write(site.dir.path().join("release"), "").unwrap();
    site.wait_for("a to hold before its NIC", Duration::from_secs(120), || async {
        let s = site.status("a").await?;
        (s.substate == HostSubstate::HeldByFreeze).then_some(s)
    })
    .await;
    assert!(
        site.fleet.versions("a").contains(&("BIOS".to_string(), "3.0".to_string())),
        "the BIOS flash was not interrupted"
    );
    let show = site.cli(&["managed-host", "show", "a"]).await.unwrap();
    assert!(show.contains("HeldByFreeze") && show.contains("freeze 1 on site"), "{show}");
    assert!(!read_flashes().contains("start nic"), "the NIC flash started under the freeze");

    // Unfreeze: a finishes its NIC, and b starts and updates.
    let out = site.cli(&["unfreeze"]).await.unwrap();
    assert!(out.contains("freeze 1 on site") && out.contains("lifted"), "{out}");
    let audit = site.cli(&["audit"]).await.unwrap();
    assert!(audit.contains("freeze.set") && audit.contains("freeze.lift"), "{audit}");
    for id in ["a", "b"] {
        site.wait_for(&format!("{id} to update"), Duration::from_secs(120), || async {
            (compliant(&site, id) && site.store.request_get(id).await.ok()?.is_none()).then_some(())
        })
        .await;
    }
    site.record_history("a", "freeze-hold").await;
    site.wait_for("the scheduler's current details to show no brake", Duration::from_secs(60), || async {
        let d = site.temporal().current_details(MACHINE_UPDATE_MANAGER_ID).ok()?;
        d.contains("**Brakes**: none in force").then_some(())
    })
    .await;
    let page = scrape(&metrics).await;
    assert!(page.lines().any(|l| l == "hostfw_freezes_active{scope=\"site\"} 0"), "{page}");

    // A target paused by hand is listed in `plan` and lifted by `budget resume`; `freeze list` is
    // empty again.
    let target = ["--model", "SR630", "--component", "uefi", "--version", "3.0"];
    let unknown = site
        .cli(&["budget", "pause", "--model", "R999", "--component", "uefi", "--version", "3.0", "--reason", "x"])
        .await;
    assert!(unknown.is_err_and(|e| e.to_string().contains("no model \"R999\"")), "an unknown model is refused");
    let out = site.cli(&[&["budget", "pause"], &target[..], &["--reason", "vendor recall"]].concat()).await.unwrap();
    assert!(out.contains("Lenovo SR630 uefi 3.0 paused by cli:") && out.contains("vendor recall"), "{out}");
    let plan = site.cli(&["plan"]).await.unwrap();
    assert!(plan.contains("PAUSED TARGET Lenovo SR630 uefi 3.0: paused by cli:"), "{plan}");
    let out = site.cli(&[&["budget", "resume"][..], &target[..]].concat()).await.unwrap();
    assert!(out.contains("the pause set by cli:") && out.contains("is lifted"), "{out}");
    assert!(site.store.target_pauses().await.unwrap().is_empty());
    let list = site.cli(&["--format", "json", "freeze", "list"]).await.unwrap();
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["freezes"].as_array().map(Vec::len), Some(0), "{list:#}");
    site.shutdown().await;
}

/// `hostfw freeze --drain`: no new host starts, but a host in flight finishes all its components
/// instead of holding before the next one. `a` is mid-BIOS when the site is frozen with drain;
/// released, it goes on to its NIC and ends compliant under the freeze, never `HeldByFreeze`;
/// `b` starts only after `unfreeze`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_freeze_lets_the_host_in_flight_finish_every_component_and_starts_no_other() {
    let (site, _worker) = a_flashing(&format!("127.0.0.1:{}", free_port())).await;

    let out = site.cli(&["freeze", "--reason", "change window closing", "--drain"]).await.unwrap();
    assert!(out.contains("freeze 1 set on site"), "{out}");
    site.cli(&["machine", "auto-update", "--machine", "b", "--enable"]).await.unwrap();
    std::fs::write(site.dir.path().join("release"), "").unwrap();
    // a drains: it finishes its NIC under the freeze and its request ends.
    site.wait_for("a to finish under the draining freeze", Duration::from_secs(120), || async {
        (compliant(&site, "a") && site.store.request_get("a").await.ok()?.is_none()).then_some(())
    })
    .await;
    let history = site.store.history_list("a", 200).await.unwrap();
    assert!(
        !history.iter().any(|h| h.substate == Some(HostSubstate::HeldByFreeze)),
        "a draining freeze does not hold a host in flight: {history:?}"
    );
    // b was never started while frozen: passes that saw it enabled made no request.
    let seen = passes(&site).await;
    site.wait_for("two scheduler passes after a finished", Duration::from_secs(60), || async {
        (passes(&site).await >= seen + 2).then_some(())
    })
    .await;
    assert!(site.store.request_get("b").await.unwrap().is_none(), "b was started under the freeze");
    assert!(!site.fleet.versions("b").contains(&("BIOS".to_string(), "3.0".to_string())));

    site.cli(&["unfreeze", "--id", "1"]).await.unwrap();
    site.wait_for("b to update after the unfreeze", Duration::from_secs(120), || async {
        (compliant(&site, "b") && site.store.request_get("b").await.ok()?.is_none()).then_some(())
    })
    .await;
    site.shutdown().await;
}
