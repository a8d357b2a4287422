//! The Prometheus rules and the Grafana dashboard (`deploy/`) against real Prometheus:
//! - `promtool check rules` and the rule unit tests (`promtool test rules`) pass;
//! - a real `prometheus` (1 s scrape and evaluation, the real rules file) scrapes the real
//!   `hostfw-worker` binary through a rollout where one host spends its retry budget, and
//!   `HostfwHostExhausted` fires, labelled with the site's name (`site`, issue 27 item 8);
//! - every dashboard panel's PromQL evaluates without error on that server, and has data;
//! - the compliance series (`hostfw_component_*`) reach Prometheus with the rollout's numbers,
//!   and the dashboard shows each of them.
//!
//! Skipped (with a message) when Prometheus is not installed; `make test` installs it.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_tests::fixtures::r760;
use hostfw_tests::prometheus::{promtool_bin, Prometheus};
use hostfw_tests::{free_port, wait_for, workspace_root, Catalog, ChildWorker, Site, SiteSpec, SiteToml};

const IMAGES: &[(&str, &str, &str)] = &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0")];

const FLEET: &str = r#"
[defaults]
task_seconds = 0.3
reset_seconds = 0.2
manager_reset_seconds = 0.3
upload_style = "multipart"
task_style = "dell"

[[host]]
id = "bad"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" }, { id = "BIOS", version = "1.0" } ]

[[host]]
id = "good"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BMC", version = "1.0" }, { id = "BIOS", version = "3.0" } ]
"#;

fn deploy(path: &str) -> PathBuf {
    workspace_root().join("deploy").join(path)
}

#[test]
fn promtool_checks_the_rules_and_their_unit_tests_pass() {
    let Some(promtool) = promtool_bin() else {
        eprintln!("skipped: prometheus not installed (promtool missing; scripts/tools.sh installs it)");
        return;
    };
    let dir = deploy("prometheus");
    for args in [["check", "rules", "hostfw.rules.yml"], ["test", "rules", "hostfw.rules.test.yml"]] {
        let out = Command::new(&promtool).args(args).current_dir(&dir).output().expect("promtool runs");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "promtool {}:\n{text}", args.join(" "));
        assert!(text.contains("SUCCESS"), "{text}");
    }
}

/// Every PromQL expression of the dashboard, with Grafana's `$__rate_interval` and the `site`
/// variable (all sites, Grafana's `.*`) filled in.
fn dashboard_queries() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(deploy("grafana/hostfw-dashboard.json")).expect("dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr").replace("$__rate_interval", "1m").replace("$site", ".*");
            queries.push((panel["title"].as_str().unwrap_or_default().to_string(), expr));
        }
    }
    queries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_fires_host_exhausted_on_a_real_worker_and_every_panel_evaluates() {
    if hostfw_tests::prometheus::prometheus_bin().is_none() {
        eprintln!("skipped: prometheus not installed (scripts/tools.sh installs it)");
        return;
    }
    let metrics = format!("127.0.0.1:{}", free_port());
    let config = SiteToml::default().catalog(&Catalog::of([r760()])).max_retries(1).set(
        "worker",
        "metrics_listen",
        metrics.as_str(),
    );
    let site =
        Site::start(SiteSpec { fleet: FLEET, config, images: IMAGES, external_worker: true, ..SiteSpec::default() })
            .await
            .unwrap();
    let worker = ChildWorker::start(&site).await;
    let rules = deploy("prometheus/hostfw.rules.yml");
    let prom = Prometheus::start(&[rules.as_path()], std::slice::from_ref(&metrics)).await.unwrap().expect("installed");

    let started = std::time::Instant::now();
    site.fleet.set_fault("bad", Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "bad"]).await.unwrap();
    site.cli(&["host", "reprovision", "set", "--id", "good"]).await.unwrap();

    let alert = site
        .wait_for("HostfwHostExhausted firing", Duration::from_secs(120), || prom.firing("HostfwHostExhausted"))
        .await;
    eprintln!("HostfwHostExhausted firing {:?} after the requests", started.elapsed());
    assert_eq!(alert["labels"]["severity"], "warning");
    assert_eq!(alert["labels"]["site"], "e2e", "the alert names the site ([site] name): {alert}");
    let description = alert["annotations"]["description"].as_str().unwrap_or_default();
    assert!(description.contains("hostfw managed-host reset-host-reprovisioning --machine"), "{alert}");
    assert_eq!(alert["annotations"]["summary"], "site e2e: 1 host(s) spent their firmware retry budget");
    let status = site.status("bad").await.expect("bad has a workflow");
    assert!(status.exhausted, "{status:?}");

    // The same story in the worker's log: JSON lines (its output is a file), ERROR for each failed
    // attempt and for the spent budget, each naming the host, component, target and workflow.
    let bad_lines: Vec<serde_json::Value> = worker
        .log()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["machine_id"] == "bad")
        .collect();
    let errors: Vec<&serde_json::Value> = bad_lines.iter().filter(|l| l["level"] == "ERROR").collect();
    assert!(errors.iter().any(|l| l["message"] == "retry budget exhausted"), "{bad_lines:#?}");
    assert!(
        errors.iter().all(|l| l["workflow_id"] == "host-reprovision/bad" && l["component"].is_string()),
        "{errors:#?}"
    );
    // `HOSTFW_E2E_EVIDENCE=<dir>` keeps what an operator would see: the alert and the host's log.
    if let Ok(dir) = std::env::var("HOSTFW_E2E_EVIDENCE") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("alert.json"), serde_json::to_string_pretty(&alert).unwrap()).unwrap();
        let log = worker.log();
        let raw: Vec<&str> = log.lines().filter(|l| l.contains(r#""machine_id":"bad""#)).collect();
        std::fs::write(dir.join("bad-host.log.jsonl"), raw.join("\n") + "\n").unwrap();
    }

    // The scrape is healthy and carries the build info.
    let up = prom.query("up{job=\"hostfw-worker\"}").await.unwrap();
    assert_eq!(up["result"][0]["value"][1], "1", "{up}");
    let build = prom.query("hostfw_build_info").await.unwrap();
    assert_eq!(build["result"][0]["metric"]["version"], env!("CARGO_PKG_VERSION"), "{build}");
    assert!(prom.firing("HostfwScrapeError").await.is_none());

    // Every panel evaluates without error now, and has data once Prometheus holds two scrapes
    // (its rates need them): a typo in a series name would never have any.
    let queries = dashboard_queries();
    for (title, expr) in &queries {
        let data = prom.query(expr).await.unwrap_or_else(|e| panic!("panel {title:?}: {expr}: {e}"));
        assert!(data["resultType"].is_string(), "panel {title:?}: {data}");
    }
    let empty_panels = || async {
        let mut empty = Vec::new();
        for (title, expr) in &queries {
            let data = prom.query(expr).await.unwrap_or_else(|e| panic!("panel {title:?}: {expr}: {e}"));
            if data["result"].as_array().is_none_or(|r| r.is_empty()) {
                empty.push(format!("{title}: {expr}"));
            }
        }
        empty
    };
    let filled =
        wait_for("every dashboard panel to have data", Duration::from_secs(60), Duration::from_millis(500), || async {
            empty_panels().await.is_empty().then_some(())
        })
        .await;
    if let Err(e) = filled {
        panic!("{e}; panels without data:\n{}", empty_panels().await.join("\n"));
    }
    let exhausted = prom.query("max(carbide_exhausted_reprovision_retry_count)").await.unwrap();
    assert_eq!(exhausted["result"][0]["value"][1], "1", "{exhausted}");

    // The compliance panels' series, as Prometheus stored them: `bad` spent its budget with its
    // BMC (first in the ordering) and BIOS still old; `good`'s BIOS is at the default.
    let compliance = [
        (r#"max(hostfw_component_hosts{model="PowerEdge R760",component="bmc",status="exhausted"})"#, "1"),
        (r#"max(hostfw_component_hosts{model="PowerEdge R760",component="uefi",status="exhausted"})"#, "1"),
        (r#"max(hostfw_component_version_hosts{model="PowerEdge R760",component="uefi",version="3.0"})"#, "1"),
        (r#"max(hostfw_component_desired_version_info{model="PowerEdge R760",component="bmc",version="2.0"})"#, "1"),
    ];
    for (expr, want) in compliance {
        site.wait_for(&format!("{expr} = {want}"), Duration::from_secs(30), || async {
            let data = prom.query(expr).await.ok()?;
            (data["result"][0]["value"][1] == want).then_some(())
        })
        .await;
    }
    for series in ["hostfw_component_hosts", "hostfw_component_version_hosts", "hostfw_component_desired_version_info"]
    {
        assert!(queries.iter().any(|(_, expr)| expr.contains(series)), "a dashboard panel shows {series}");
    }
    site.shutdown().await;
}
