//! End-to-end: the compliance view on a real Temporal dev server, bmc-sim and the real
//! `hostfw-worker` binary. Two models (a Dell R760 with BMC and BIOS, an MNNVL GB200 with its
//! BMC); one update runs to completion, one spends its retry budget on injected task failures,
//! one waits at the manual platform gate, one drifted host has no request. Then
//! `hostfw compliance --format json` has the desired version, the running versions and every
//! status count per model and component; the worker's `/metrics` carries the same numbers as
//! `hostfw_component_*` series; `hostfw watch`'s final report carries the same view.

use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_tests::fixtures::r760;
use hostfw_tests::{free_port, Catalog, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};
use hostfw_workflows::HostOutcome;
use serde_json::{json, Value};

const IMAGES: &[(&str, &str, &str)] = &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0")];

/// r1: BMC old (updated to completion); r2: BIOS old, every update task fails (exhausted);
/// r3: both old, no request (pending); r4: compliant; g1: BMC old, waits at the manual platform
/// gate (active); g2: compliant.
const FLEET: &str = r#"
[defaults]
task_seconds = 0.3
reset_seconds = 0.2
manager_reset_seconds = 0.3
upload_style = "multipart"
task_style = "dell"

[[host]]
id = "r1"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" }, { id = "BIOS", version = "3.0" } ]

[[host]]
id = "r2"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "2.0" }, { id = "BIOS", version = "1.0" } ]

[[host]]
id = "r3"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" }, { id = "BIOS", version = "1.0" } ]

[[host]]
id = "r4"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "2.0" }, { id = "BIOS", version = "3.0" } ]

[[host]]
id = "g1"
vendor = "Nvidia"
model = "GB200 NVL"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" } ]

[[host]]
id = "g2"
vendor = "Nvidia"
model = "GB200 NVL"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "2.0" } ]
"#;

fn catalog() -> Catalog {
    let gb200 = HostModel::new("gb200", "Nvidia", "GB200 NVL").set("mnnvl_capable", true).ordering(&["bmc"]).component(
        "bmc",
        "^BMC$",
        [Firmware::file("2.0", "dell/bmc.bin")],
    );
    Catalog::of([r760(), gb200])
}

/// The counts of a JSON row, in `ComplianceStatus` order after `hosts`.
const COUNTS: [&str; 9] =
    ["hosts", "compliant", "drifted", "pending", "active", "failed", "exhausted", "not_reported", "unmatched"];

fn counts(row: &Value) -> Vec<u64> {
    COUNTS.iter().map(|k| row[*k].as_u64().unwrap_or_else(|| panic!("{k} in {row}"))).collect()
}

fn row<'a>(view: &'a Value, model: &str, component: &str) -> &'a Value {
    view["components"]
        .as_array()
        .expect("components")
        .iter()
        .find(|r| r["model"] == model && r["component"] == component)
        .unwrap_or_else(|| panic!("no row {model} {component}: {view:#}"))
}

/// The value of the one sample of `series` (name and labels as printed) on a metrics page.
fn sample(page: &str, series: &str) -> Option<String> {
    let found: Vec<&str> = page
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').filter(|(s, _)| *s == series).map(|(_, v)| v))
        .collect();
    assert!(found.len() <= 1, "{series} appears {} times", found.len());
    found.first().map(|v| v.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compliance_counts_a_real_rollout_and_the_metrics_say_the_same() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let config = SiteToml::default()
        .catalog(&catalog())
        .max_retries(1)
        .firmware_global("autoupdate", true)
        .firmware_global("requires_manual_upgrade", true)
        .set("worker", "metrics_listen", metrics.as_str());
    let site =
        Site::start(SiteSpec { fleet: FLEET, config, images: IMAGES, external_worker: true, ..SiteSpec::default() })
            .await
            .unwrap();
    let _worker = ChildWorker::start(&site).await;

    // Before anything is read, every host is "not explored" and every row is zero.
    let view: Value = serde_json::from_str(&site.cli(&["--format", "json", "compliance"]).await.unwrap()).unwrap();
    assert_eq!(view["not_explored"], 6, "{view:#}");
    assert_eq!(counts(row(&view, "PowerEdge R760", "bmc")), [0; 9], "{view:#}");

    site.cli(&["site-explorer", "explore"]).await.unwrap();
    site.fleet.set_fault("r2", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    for id in ["r1", "r2", "g1"] {
        site.cli(&["host", "reprovision", "set", "--id", id]).await.unwrap();
    }
    let outcome = site.host_result("r1").await.expect("r1 completes");
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    site.wait_for("r2 to spend its retry budget", Duration::from_secs(120), || async {
        site.store.request_get("r2").await.ok()??.exhausted.then_some(())
    })
    .await;
    site.wait_substate("g1", "WaitingForManualUpgrade", Duration::from_secs(60)).await;

    let text = site.cli(&["--format", "json", "compliance"]).await.unwrap();
    let view: Value = serde_json::from_str(&text).unwrap();
    assert_eq!((view["not_explored"].as_u64(), view["no_catalog_entry"].as_u64()), (Some(0), Some(0)), "{view:#}");
    assert_eq!(view["components"].as_array().unwrap().len(), 3, "R760 bmc and uefi, GB200 bmc: {view:#}");

    // R760 BMC: r1 updated to 2.0; only r3 still runs 1.0, and it is pending.
    let bmc = row(&view, "PowerEdge R760", "bmc");
    assert_eq!((bmc["vendor"].as_str(), bmc["desired"].as_str()), (Some("Dell"), Some("2.0")));
    assert_eq!(bmc["versions"], json!([{ "version": "1.0", "hosts": 1 }, { "version": "2.0", "hosts": 3 }]));
    assert_eq!(counts(bmc), [4, 3, 1, 1, 0, 0, 0, 0, 0], "{bmc}");
    // R760 BIOS: r2 failed until its budget was spent, r3 pending.
    let uefi = row(&view, "PowerEdge R760", "uefi");
    assert_eq!(uefi["desired"], "3.0");
    assert_eq!(uefi["versions"], json!([{ "version": "1.0", "hosts": 2 }, { "version": "3.0", "hosts": 2 }]));
    assert_eq!(counts(uefi), [4, 2, 2, 1, 0, 0, 1, 0, 0], "{uefi}");
    // GB200 BMC: g1's update started and waits for the platform procedure: active.
    let gb = row(&view, "GB200 NVL", "bmc");
    assert_eq!((gb["vendor"].as_str(), gb["desired"].as_str()), (Some("Nvidia"), Some("2.0")));
    assert_eq!(gb["versions"], json!([{ "version": "1.0", "hosts": 1 }, { "version": "2.0", "hosts": 1 }]));
    assert_eq!(counts(gb), [2, 1, 1, 0, 1, 0, 0, 0, 0], "{gb}");

    // The table shows the same rows.
    let table = site.cli(&["compliance"]).await.unwrap();
    assert!(table.lines().next().is_some_and(|h| h.starts_with("MODEL") && h.contains("EXHAUSTED")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("Nvidia GB200 NVL") && l.contains("1.0 (1), 2.0 (1)")), "{table}");

    // The worker's /metrics: every count and version of every row, under the same labels.
    let page = hostfw_tests::metrics_page::scrape(&metrics).await;
    assert_eq!(sample(&page, "hostfw_metrics_scrape_error").as_deref(), Some("0"), "{page}");
    let mut checked = 0;
    for r in view["components"].as_array().unwrap() {
        let labels = format!(
            "vendor=\"{}\",model=\"{}\",component=\"{}\"",
            r["vendor"].as_str().unwrap(),
            r["model"].as_str().unwrap(),
            r["component"].as_str().unwrap()
        );
        let desired = format!("hostfw_component_desired_version_info{{{labels},version={}}}", r["desired"]);
        assert_eq!(sample(&page, &desired).as_deref(), Some("1"), "{desired} in\n{page}");
        for (status, value) in COUNTS[1..].iter().zip(&counts(r)[1..]) {
            let series = format!("hostfw_component_hosts{{{labels},status=\"{status}\"}}");
            assert_eq!(sample(&page, &series), Some(value.to_string()), "{series} in\n{page}");
            checked += 1;
        }
        for v in r["versions"].as_array().unwrap() {
            let series = format!("hostfw_component_version_hosts{{{labels},version={}}}", v["version"]);
            assert_eq!(sample(&page, &series), Some(v["hosts"].to_string()), "{series} in\n{page}");
        }
    }
    assert_eq!(checked, 3 * 8);
    let version_series = page.lines().filter(|l| l.starts_with("hostfw_component_version_hosts{")).count();
    assert_eq!(version_series, 6, "one series per running version:\n{page}");
    for id in ["r1", "r2", "r3", "r4", "g1", "g2"] {
        assert!(!page.contains(&format!("\"{id}\"")), "a machine id as a label:\n{page}");
    }

    // `HOSTFW_E2E_EVIDENCE=<dir>` keeps what an operator would see: the table, the JSON, the page.
    if let Ok(dir) = std::env::var("HOSTFW_E2E_EVIDENCE") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("compliance.txt"), &table).unwrap();
        std::fs::write(dir.join("compliance.json"), &text).unwrap();
        let series: Vec<&str> = page.lines().filter(|l| l.contains("hostfw_component_")).collect();
        std::fs::write(dir.join("compliance-metrics.txt"), series.join("\n") + "\n").unwrap();
    }

    // `watch` stops at its timeout (g1 and r3 wait for an operator), and its final report carries
    // the same view.
    let (result, watched) = site.cli_full(&["--format", "json", "watch", "--timeout-secs", "1"]).await;
    assert!(result.is_err(), "not every host is compliant: {watched}");
    let report: Value = serde_json::from_str(watched.lines().last().expect("a report line")).unwrap();
    assert_eq!(report["report"]["compliance"], view, "{watched}");
    let (_, watched) = site.cli_full(&["watch", "--timeout-secs", "1"]).await;
    assert!(watched.contains("RUNNING (HOSTS)") && watched.contains("Dell PowerEdge R760"), "{watched}");
    site.shutdown().await;
}
