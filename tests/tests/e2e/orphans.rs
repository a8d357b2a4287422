//! End-to-end: a script orphaned by a SIGKILLed worker never overlaps its own rerun (issue 11,
//! finding 8). The real `hostfw-worker` binary runs a Core-local script that sleeps before it
//! flashes; the worker is killed with SIGKILL mid-script and restarted at once. The script lives
//! on in its own process group; the dead worker's attempt times out on its heartbeat, the host
//! retries, and the rerun finds the script's lock in the site database: it waits for the orphan to
//! end, does not start the script again, and the workflow judges the orphan by the inventory.
//!
//! Also Scout (finding 9): the real `scout` binary is SIGKILLed while its upgrade script runs and
//! started again; the retried activity (same task id) finds the task's record, waits for the
//! orphaned script and reports an interrupted task instead of running the script again.
//!
//! Needs the binaries: `cargo build -p hostfw-worker -p hostfw-scout --bins` (or
//! `HOSTFW_WORKER_BIN`; `scout` is looked for beside the worker binary).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hostfw_tests::fixtures::{dgx_h100, multipart_flash_script, sr630_script};
use hostfw_tests::{activity_records, history_contains, ChildWorker, Site, SiteSpec, SiteToml};
use hostfw_workflows::HostOutcome;

const ACT_RUN_SCRIPT: &str = "hostfw.firmware.run_script";

const FLEET: &str = r#"
[defaults]
task_seconds = 1.0
upload_style = "multipart"
task_style = "spec"

[[host]]
id = "orphan"
vendor = "Lenovo"
model = "SR630"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "BIOS", version = "1.0" } ]
"#;

/// Records `start <pid> <ns>` and `end <pid> <ns> <exit>` in `<site>/runs.log`, sleeps 30 s (longer than the heartbeat timeout plus the retry interval), then
/// flashes the BIOS through the BMC's multipart push and follows the task. It writes only to files
/// (its stdout pipe dies with the worker).
fn slow_flash() -> String {
    multipart_flash_script(
        "echo \"start $$ $(date +%s%N)\" >>\"$site/runs.log\"\n\
         finish() { echo \"end $$ $(date +%s%N) $1\" >>\"$site/runs.log\"; exit \"$1\"; }\n\
         sleep 30",
        200,
    )
}

/// Most runs of the script that were running at the same time, from `runs.log`; and how many
/// started.
fn overlap(log: &str) -> (usize, usize) {
    let (mut running, mut most, mut starts) = (0usize, 0usize, 0usize);
    for line in log.lines() {
        match line.split_whitespace().next() {
            Some("start") => {
                running += 1;
                starts += 1;
                most = most.max(running);
            }
            Some("end") => running = running.saturating_sub(1),
            _ => {}
        }
    }
    (most, starts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_script_the_rerun_waits_for_the_orphan_and_does_not_overlap_it() {
    let script = slow_flash();
    let files = [("firmware/scripts/slow-flash.sh", script.as_str())];
    let site = Site::start(SiteSpec {
        fleet: FLEET,
        config: SiteToml::default()
            .model(&sr630_script("scripts/slow-flash.sh"))
            .heartbeat_timeout("5s")
            .max_retries(5),
        images: &[("lenovo/uefi-3.0.bin", "^BIOS$", "3.0")],
        files: &files,
        external_worker: true,
        ..SiteSpec::default()
    })
    .await
    .expect("site starts");
    let mut worker = ChildWorker::start(&site).await;
    let runs = site.dir.path().join("runs.log");
    let read_runs = || std::fs::read_to_string(&runs).unwrap_or_default();

    site.cli(&["host", "reprovision", "set", "--id", "orphan"]).await.unwrap();
    site.wait_for("the script to start", Duration::from_secs(60), || async {
        read_runs().contains("start").then_some(())
    })
    .await;
    worker.kill_9();
    worker.restart().await;

    let outcome = site.host_result("orphan").await.expect("workflow completes");
    let log = read_runs();
    let script_log = std::fs::read_to_string(site.dir.path().join("script.log")).unwrap_or_default();
    eprintln!("runs.log:\n{log}");
    for h in site.store.history_list("orphan", 100).await.unwrap().iter().rev() {
        eprintln!("history: {h:?}");
    }
    let (most, starts) = overlap(&log);
    assert_eq!(most, 1, "two runs of the script overlapped:\n{log}\n{}", worker.log_tail(40));
    assert_eq!(starts, 1, "the rerun started the script again although the orphan had installed it:\n{log}");
    assert!(
        log.contains("end ") && log.trim_end().ends_with(" 0"),
        "the orphan finished its flash:\n{log}\n{script_log}"
    );
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.fleet.versions("orphan"), vec![("BIOS".to_string(), "3.0".to_string())]);
    assert_eq!(site.fleet.stats().per_host["orphan"].installs.get("BIOS"), Some(&1), "flashed once");

    // The rerun said why it did not run the script, and the worker's log says so too.
    let history = site.history_json("orphan").await;
    let records = activity_records(&history, ACT_RUN_SCRIPT);
    assert_eq!(records.len(), 2, "the interrupted run and the rerun that waited: {records:#?}");
    assert!(history_contains(&history, "EarlierScriptRun"), "the rerun's failure type is in the history");
    assert!(history_contains(&history, "an earlier run of scripts/slow-flash.sh"), "the rerun names the orphan");
    assert!(worker.log().contains("not running"), "{}", worker.log_tail(40));
    site.shutdown().await;
}

const SCOUT_FLEET: &str = r#"
[[host]]
id = "dgx-1"
vendor = "Nvidia"
model = "DGX H100"
bmc_address = "127.0.0.1:0"
firmware = [ { id = "NIC_0", version = "28.39" } ]
"#;

/// Records its runs in `{SITE}/runs.log` like the Core-local script above, sleeps 25 s, then
/// flashes the NIC through the simulated host's local flash interface. Output only to files: its
/// stdout pipe dies with the agent.
const SLOW_SCOUT_SCRIPT: &str = r#"#!/bin/sh
set -u
exec >>"{SITE}/scout-script.log" 2>&1
echo "start $$ $(date +%s%N)" >>"{SITE}/runs.log"
sleep 25
curl -sSf --data-binary @"$DOWNLOAD_DIR/nic.bin" "$(cat "{SITE}/simhosts/$MACHINE_ID")/sim/host-flash"
rc=$?
echo "end $$ $(date +%s%N) $rc" >>"{SITE}/runs.log"
exit $rc
"#;

/// The `scout` binary as a child process serving one machine, with its own state directory; its
/// output goes to `<dir>/scout-<n>.log`.
struct ScoutProcess {
    bin: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    child: Option<std::process::Child>,
    starts: usize,
}

impl ScoutProcess {
    fn start(site: &Site, machine: &str) -> ScoutProcess {
        let worker = std::env::var("HOSTFW_WORKER_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/hostfw-worker"));
        let bin = worker.with_file_name("scout");
        assert!(bin.is_file(), "the scout binary is missing at {}: cargo build -p hostfw-scout --bins", bin.display());
        let address = site.site.temporal.address.to_string();
        let address = address.trim_start_matches("http://").trim_end_matches('/').to_string();
        let state = site.dir.path().join("scout-state");
        let args = vec![
            "--machine".into(),
            machine.into(),
            "--temporal-address".into(),
            address,
            "--state-dir".into(),
            state.display().to_string(),
            "--trusted-key".into(),
            hostfw_tests::site::scout_keys_dir(site.dir.path()).join("scout-signing.pub").display().to_string(),
        ];
        let mut p = ScoutProcess { bin, args, dir: site.dir.path().to_path_buf(), child: None, starts: 0 };
        p.spawn();
        p
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join(format!("scout-{}.log", self.starts))
    }

    fn spawn(&mut self) {
        self.starts += 1;
        let log = std::fs::File::create(self.log_path()).unwrap();
        let child = std::process::Command::new(&self.bin)
            .args(&self.args)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("TEMPORAL_ADDRESS")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(self.log_path()).unwrap_or_default().contains("serving") {
            assert!(Instant::now() < deadline, "scout did not start:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn kill_9(&mut self) {
        let mut child = self.child.take().expect("scout runs");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    fn log(&self) -> String {
        (1..=self.starts)
            .map(|n| std::fs::read_to_string(self.dir.join(format!("scout-{n}.log"))).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for ScoutProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scout_killed_mid_script_and_restarted_runs_the_script_once() {
    let files = [
        ("scout/nvidia/dgx_h100/nic/upgrade.sh", SLOW_SCOUT_SCRIPT),
        (
            "scout/nvidia/dgx_h100/nic/metadata.toml",
            "execution_timeout_seconds = 120\nartifact_download_timeout_seconds = 30\n",
        ),
    ];
    let site = Site::start(SiteSpec {
        fleet: SCOUT_FLEET,
        config: SiteToml::default().model(&dgx_h100()).heartbeat_timeout("10s").max_retries(5),
        images: &[("dgx/nic.bin", "^NIC_0$", "28.43")],
        files: &files,
        ..SiteSpec::default()
    })
    .await
    .expect("site starts");
    let simhosts = site.dir.path().join("simhosts");
    std::fs::create_dir_all(&simhosts).unwrap();
    std::fs::write(simhosts.join("dgx-1"), &site.fleet.host("dgx-1").unwrap().base_url).unwrap();
    let mut scout = ScoutProcess::start(&site, "dgx-1");
    let runs = site.dir.path().join("runs.log");
    let read_runs = || std::fs::read_to_string(&runs).unwrap_or_default();

    site.cli(&["host", "reprovision", "set", "--id", "dgx-1"]).await.unwrap();
    site.wait_for("the Scout script to start", Duration::from_secs(60), || async {
        read_runs().contains("start").then_some(())
    })
    .await;
    scout.kill_9();
    scout.spawn();

    let outcome = site.host_result("dgx-1").await.expect("workflow completes");
    let log = read_runs();
    for h in site.store.history_list("dgx-1", 100).await.unwrap().iter().rev() {
        eprintln!("history: {h:?}");
    }
    let (most, starts) = overlap(&log);
    assert_eq!(most, 1, "two runs of the Scout script overlapped:\n{log}\n{}", scout.log());
    assert_eq!(starts, 1, "the retried task ran the script again:\n{log}\n{}", scout.log());
    assert!(matches!(outcome, HostOutcome::Compliant { .. }), "{outcome:?}");
    assert_eq!(site.fleet.stats().per_host["dgx-1"].installs.get("NIC_0"), Some(&1), "flashed once");
    let history = site.store.history_list("dgx-1", 100).await.unwrap();
    assert!(
        history.iter().any(|h| h.message.contains("interrupted: the Scout agent")),
        "the retry reported the interrupted task: {history:?}"
    );
    site.shutdown().await;
}
