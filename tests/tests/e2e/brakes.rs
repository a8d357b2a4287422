//! End-to-end: the operator's brakes (issue 27) on a real Temporal dev server, bmc-sim and the
//! real `hostfw-worker` binary. Two Lenovo SR630 hosts take two components each, both by a
//! Core-local script: the BIOS first, whose flash waits for a release file (so the test decides
//! when the flash ends, without timing), then the NIC. The scheduler starts host `a`; while its
//! BIOS flash runs the site is frozen (`hostfw freeze --reason ...`). Then:
//! - no new host starts: `b`, enabled for automatic updates after the freeze, gets no request over
//!   several passes; `plan` shows the freeze (who, why) and names it as `b`'s reason; a direct
//!   request for `b` is refused; `/metrics` has `hostfw_freezes_active{scope="site"} 1`;
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
use hostfw_tests::fixtures::multipart_flash_script;
use hostfw_tests::{free_port, Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};

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

/// Logs `start <component>` to `<site>/flashes.log`; a BIOS flash then waits for
/// `<site>/release` before it pushes the image.
fn gated_flash() -> String {
    multipart_flash_script(
        "finish() { exit \"$1\"; }\n\
         echo \"start $COMPONENT_TYPE\" >>\"$site/flashes.log\"\n\
         if [ \"$COMPONENT_TYPE\" = uefi ]; then while [ ! -e \"$site/release\" ]; do sleep 0.1; done; fi",
        200,
    )
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_freeze_starts_no_host_holds_the_one_in_flight_after_its_flash_and_unfreeze_lets_it_finish() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let script = gated_flash();
    let files = [("firmware/scripts/flash.sh", script.as_str())];
    let config = SiteToml::default()
        .catalog(&Catalog::of([sr630()]))
        .manager(10, "1s")
        .site_workflows(true)
        .explorer_interval("1h")
        .firmware_global("autoupdate", false)
        .set("worker", "metrics_listen", metrics.as_str());
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
    let _worker = ChildWorker::start(&site).await;
    site.cli(&["site-explorer", "explore"]).await.unwrap();
    let flashes = site.dir.path().join("flashes.log");
    let read_flashes = || std::fs::read_to_string(&flashes).unwrap_or_default();

    // The rollout starts a; its BIOS flash runs (and waits for the release file).
    site.cli(&["machine", "auto-update", "--machine", "a", "--enable"]).await.unwrap();
    site.wait_for("a's BIOS flash to start", Duration::from_secs(120), || async {
        read_flashes().contains("start uefi").then_some(())
    })
    .await;

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
