//! Security end to end: after a scheduler-driven rollout in which the Core-local script route ran
//! with the BMC login in its environment, the BMC password appears in no workflow history (every
//! workflow of the namespace, as `temporal workflow show` prints it), no worker log line, no
//! metric, and no CLI output. (A Scout artifact with a wrong digest is never executed:
//! `scout/tests/it/downloads.rs`.)

use std::process::Command;
use std::time::Duration;

use hostfw_tests::fixtures::{dell_bios_flash_script, r760};
use hostfw_tests::{temporal_cli, ChildWorker, Firmware, HostModel, Site, SiteSpec, SiteToml};

const PASSWORD: &str = "S3cur1ty-Canary-7781-do-not-leak";

/// The R760 with its BIOS flashed by a Core-local script.
fn catalog() -> HostModel {
    r760().component("uefi", "^BIOS$", [Firmware::script("3.0", "scripts/flash-bios.sh")])
}

// A legacy Core-local script: it pushes the image through the BMC's Redfish API with the login
// from its environment, and (carelessly) echoes it, as real vendor scripts sometimes do.
fn flash_script() -> String {
    dell_bios_flash_script(true)
}

fn fleet() -> String {
    let mut fleet = format!(
        "[defaults]\nusername = \"root\"\npassword = \"{PASSWORD}\"\ntask_seconds = 0.3\nreset_seconds = 0.2\n\
         manager_reset_seconds = 0.3\nupload_style = \"multipart\"\ntask_style = \"dell\"\napply_time = \"Immediate\"\n"
    );
    for id in ["s1", "s2", "s3"] {
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BMC\", version = \"1.0\" }}, {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

fn temporal(site: &Site, args: &[&str]) -> String {
    let address = site.site.temporal.address.trim_start_matches("http://").to_string();
    let out = Command::new(temporal_cli())
        .args(args)
        .args(["--address", &address, "--namespace", &site.site.temporal.namespace, "--output", "json"])
        .output()
        .expect("temporal CLI runs");
    assert!(out.status.success(), "temporal {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bmc_password_never_leaves_the_credential_store() {
    let fleet = fleet();
    let script = flash_script();
    let files = [("firmware/scripts/flash-bios.sh", script.as_str())];
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default().model(&catalog()).manager(2, "1h").explorer_interval("1h").site_workflows(true),
        images: &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0")],
        files: &files,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let worker = ChildWorker::start(&site).await;
    site.wait_for("every host compliant", Duration::from_secs(180), || async {
        for id in ["s1", "s2", "s3"] {
            let at_target =
                site.fleet.versions(id) == vec![("BMC".into(), "2.0".into()), ("BIOS".into(), "3.0".into())];
            if !at_target || site.store.request_get(id).await.ok()?.is_some() {
                return None;
            }
        }
        Some(())
    })
    .await;
    let history = site.store.history_list("s1", 100).await.unwrap();
    assert!(
        history.iter().any(|h| h.substate == Some(hostfw_model::HostSubstate::WaitingForScript)),
        "the script route ran: {history:?}"
    );

    // Every workflow of the namespace: hosts, the scheduler, the crawl.
    let list: serde_json::Value = serde_json::from_str(&temporal(&site, &["workflow", "list", "--limit", "1000"]))
        .or_else(|_| {
            // Older CLIs print one JSON object per line.
            let rows: Vec<serde_json::Value> = temporal(&site, &["workflow", "list", "--limit", "1000"])
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            Ok::<_, serde_json::Error>(serde_json::Value::Array(rows))
        })
        .unwrap();
    let ids: Vec<String> = list
        .as_array()
        .expect("a list of workflows")
        .iter()
        .filter_map(|w| {
            w["execution"]["workflowId"].as_str().or(w["execution"]["workflow_id"].as_str()).map(str::to_string)
        })
        .collect();
    for expected in ["host-reprovision/s1", "machine-update-manager", "site-explorer"] {
        assert!(ids.iter().any(|i| i == expected), "{expected} in {ids:?}");
    }
    for id in &ids {
        let shown = temporal(&site, &["workflow", "show", "--workflow-id", id]);
        assert!(shown.len() > 100, "{id}: history printed");
        assert!(!shown.contains(PASSWORD), "the BMC password is in the history of {id}");
    }

    let log = worker.log();
    assert!(log.contains("worker running"), "the worker's log was captured");
    assert!(!log.contains(PASSWORD), "the BMC password is in the worker log");

    // Metrics: the address the worker logged.
    let addr = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|l| l["metrics_addr"].as_str().map(str::to_string))
        .expect("the worker logged its metrics address");
    let metrics = reqwest::get(format!("http://{addr}/metrics")).await.unwrap().text().await.unwrap();
    assert!(metrics.contains("carbide_firmware_updates_total"), "{metrics}");
    assert!(!metrics.contains(PASSWORD), "the BMC password is in the metrics");

    // CLI output, tables and JSON.
    let bmc = site.store.machine_get("s1").await.unwrap().unwrap().bmc_address.to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["machine", "list"],
        vec!["machine", "show", "s1", "--history-count", "100"],
        vec!["managed-host", "show", "s1", "--history-count", "100"],
        vec!["site-explorer", "get-report", "managed-host", &bmc],
        vec!["host", "reprovision", "list"],
        vec!["plan"],
        vec!["audit"],
        vec!["firmware", "show"],
    ];
    for args in &commands {
        for json in [false, true] {
            let mut full: Vec<&str> = if json { vec!["--format", "json"] } else { Vec::new() };
            full.extend(args.iter().copied());
            let printed = site.cli(&full).await.unwrap_or_else(|e| panic!("{full:?}: {e:#}"));
            assert!(!printed.contains(PASSWORD), "the BMC password is in the output of {full:?}");
        }
    }
    drop(worker);
    site.shutdown().await;
}
