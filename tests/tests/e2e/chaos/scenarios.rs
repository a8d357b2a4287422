//! The chaos suite's smaller scenarios (issue 11), each on its own site: the Temporal server
//! SIGKILLed, two workers with one killed repeatedly, flashes longer than the heartbeat timeout
//! with the worker killed mid-task, a Temporal outage while hosts wait for upload slots, a
//! Core-local script killed with its worker. (PostgreSQL: `postgres.rs`.) Each returns its row.

use std::time::{Duration, Instant};

use super::measure::{judge, wait_settled, Expect, Rng, Row};
use hostfw_tests::fixtures::{multipart_flash_script, r760, sr630_script};
use hostfw_tests::{ChildWorker, HostModel, Site, SiteSpec, SiteToml};

pub const IMAGES: &[(&str, &str, &str)] =
    &[("dell/bmc.bin", "^BMC$", "2.0"), ("dell/bios.bin", "^BIOS$", "3.0"), ("lenovo/uefi-3.0.bin", "^BIOS$", "3.0")];

/// Every new scenario's retry budget: enough for a few interrupted attempts per host; a host that
/// spends it is lost.
const MAX_RETRIES: u32 = 5;
/// Shorter than the BMC tasks of the long-flash scenario and than the outages.
const HEARTBEAT: &str = "5s";

pub fn r760_targets() -> Vec<(String, String)> {
    vec![("BMC".into(), "2.0".into()), ("BIOS".into(), "3.0".into())]
}

/// bmc-sim fleet TOML: `ids` as Dell R760s (BMC and BIOS at 1.0), the four upload/task styles in
/// turn; `defaults`: lines of its `[defaults]` table.
pub fn r760_fleet(ids: &[String], defaults: &str) -> String {
    let styles = [
        ("multipart", "dell", "Immediate"),
        ("multipart", "spec", "OnReset"),
        ("httppush", "bmcweb", "Immediate"),
        ("simpleupdate", "sushy", "OnReset"),
    ];
    let mut fleet = format!("[defaults]\n{defaults}\n");
    for (n, id) in ids.iter().enumerate() {
        let (upload, task, apply) = styles[n % styles.len()];
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             upload_style = \"{upload}\"\ntask_style = \"{task}\"\napply_time = \"{apply}\"\n\
             firmware = [ {{ id = \"BMC\", version = \"1.0\" }}, {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    fleet
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:02}")).collect()
}

fn expect_r760(ids: &[String]) -> Expect {
    let mut expect = Expect { max_retries: MAX_RETRIES, ..Expect::default() };
    for id in ids {
        expect.targets.insert(id.clone(), r760_targets());
    }
    expect
}

/// The site of a scenario: the Manager rolls out every host; the worker runs as a child process
/// (killable); the dev server keeps its state in a file (restartable, killable).
/// `max_uploads` site-wide upload slots; the host workflows' retry budget and heartbeat timeout
/// are [`host_settings`].
pub fn spec(fleet: &str, max_uploads: i64) -> SiteSpec<'_> {
    SiteSpec {
        fleet,
        config: host_settings(SiteToml::default())
            .catalog(&r760().into())
            .max_uploads(max_uploads)
            .manager(30, "10s")
            .explorer_interval("10s")
            .site_workflows(true),
        images: IMAGES,
        external_worker: true,
        temporal_db: true,
        ..SiteSpec::default()
    }
}

/// The host workflows of every scenario: heartbeat timeout [`HEARTBEAT`], retry budget
/// [`MAX_RETRIES`], one reactivation.
pub fn host_settings(config: SiteToml) -> SiteToml {
    config.heartbeat_timeout(HEARTBEAT).max_retries(MAX_RETRIES.into()).host_reprovision("max_reactivations", 1)
}

/// `spec` with one more host model in its catalog.
fn with_model<'a>(spec: SiteSpec<'a>, model: &HostModel) -> SiteSpec<'a> {
    SiteSpec { config: spec.config.model(model), ..spec }
}

/// Wait for the end, judge, print the worker log if the row is bad, stop everything.
pub async fn finish(site: Site, workers: Vec<ChildWorker>, expect: &Expect, name: &str, started: Instant) -> Row {
    wait_settled(&site, expect, Duration::from_secs(420)).await;
    let row = judge(&site, expect, name, started).await;
    if !row.ok() {
        for w in &workers {
            eprintln!("{}", w.log_tail(60));
        }
    }
    drop(workers);
    site.shutdown().await;
    row
}

/// The Temporal server killed with SIGKILL twice mid-rollout and started again on its database.
pub async fn temporal_sigkill(rng: &mut Rng) -> Row {
    let name = "Temporal server SIGKILLed twice (20 hosts)";
    let ids = ids("tk", 20);
    let fleet = r760_fleet(&ids, "task_seconds = 2.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    let mut site = Site::start(spec(&fleet, 6)).await.expect("site starts");
    let expect = expect_r760(&ids);
    let started = Instant::now();
    let worker = ChildWorker::start(&site).await;
    for n in 1..=2 {
        tokio::time::sleep(rng.millis(3_000, 9_000)).await;
        eprintln!("chaos: SIGKILL of the Temporal server {n}/2 at {:.1}s", started.elapsed().as_secs_f64());
        site.kill_temporal_9().await;
        tokio::time::sleep(rng.millis(500, 3_000)).await;
        site.start_temporal().await;
    }
    finish(site, vec![worker], &expect, name, started).await
}

/// Two workers on the task queue; one of them SIGKILLed six times and restarted.
pub async fn two_workers_one_killed(rng: &mut Rng) -> Row {
    let name = "two workers, one SIGKILLed 6 times (20 hosts)";
    let ids = ids("tw", 20);
    let fleet = r760_fleet(&ids, "task_seconds = 2.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    let site = Site::start(spec(&fleet, 6)).await.expect("site starts");
    let expect = expect_r760(&ids);
    let started = Instant::now();
    let steady = ChildWorker::start(&site).await;
    let mut victim = ChildWorker::start_extra(&site, "b").await;
    for kill in 1..=6 {
        tokio::time::sleep(rng.millis(2_000, 6_000)).await;
        eprintln!("chaos: kill {kill}/6 of worker b at {:.1}s", started.elapsed().as_secs_f64());
        victim.kill_9();
        tokio::time::sleep(rng.millis(100, 1_500)).await;
        victim.restart().await;
    }
    finish(site, vec![steady, victim], &expect, name, started).await
}

/// BMC tasks of 12 s (the heartbeat timeout is 5 s); the worker is SIGKILLed three times while
/// a BMC is flashing, and restarted: the retried upload must follow the running task.
pub async fn long_flash_worker_killed(rng: &mut Rng) -> Row {
    let name = "flash 12 s > heartbeat 5 s, worker SIGKILLed mid-task 3 times (12 hosts)";
    let ids = ids("lf", 12);
    let fleet = r760_fleet(&ids, "task_seconds = 12.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    let site = Site::start(spec(&fleet, 6)).await.expect("site starts");
    let expect = expect_r760(&ids);
    let started = Instant::now();
    let mut worker = ChildWorker::start(&site).await;
    for kill in 1..=3 {
        site.wait_for("a BMC flashing", Duration::from_secs(180), || async {
            (site.fleet.uploads_in_flight() > 0).then_some(())
        })
        .await;
        tokio::time::sleep(rng.millis(0, 3_000)).await;
        eprintln!(
            "chaos: kill {kill}/3 with {} BMC task(s) running at {:.1}s",
            site.fleet.uploads_in_flight(),
            started.elapsed().as_secs_f64()
        );
        worker.kill_9();
        tokio::time::sleep(rng.millis(100, 2_000)).await;
        worker.restart().await;
        // Let the restarted worker make progress before the next kill.
        tokio::time::sleep(rng.millis(6_000, 12_000)).await;
    }
    finish(site, vec![worker], &expect, name, started).await
}

/// `max_uploads = 2`: while both slots are taken and other hosts wait for one, the Temporal server
/// is stopped for 8-14 s (longer than the 5 s heartbeat timeout) and started again; twice.
pub async fn temporal_outage_while_waiting_for_slots(rng: &mut Rng) -> Row {
    let name = "Temporal down 8-14 s (> heartbeat) while hosts wait for 2 upload slots, twice (12 hosts)";
    let ids = ids("ou", 12);
    let fleet = r760_fleet(&ids, "task_seconds = 3.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    let mut site = Site::start(spec(&fleet, 2)).await.expect("site starts");
    let expect = expect_r760(&ids);
    let started = Instant::now();
    let worker = ChildWorker::start(&site).await;
    for n in 1..=2 {
        site.wait_for("both upload slots taken", Duration::from_secs(180), || async {
            (site.store.upload_slots_in_use(2).await.ok()? == 2).then_some(())
        })
        .await;
        let outage = rng.millis(8_000, 14_000);
        eprintln!("chaos: Temporal outage {n}/2 of {outage:?} at {:.1}s", started.elapsed().as_secs_f64());
        site.stop_temporal().await;
        // The outage itself: its length is the point, not a wait for a condition.
        tokio::time::sleep(outage).await;
        site.start_temporal().await;
        tokio::time::sleep(rng.millis(2_000, 6_000)).await;
    }
    let most = site.fleet.stats().max_concurrent_uploads;
    let mut row = finish(site, vec![worker], &expect, name, started).await;
    row.notes.push(format!("most BMC update tasks at once: {most} (max_uploads = 2)"));
    if most > 2 {
        row.violations.push(format!("{most} BMC update tasks ran at once under max_uploads = 2"));
    }
    row
}

/// Records `start <bmc> <pid>` / `end <bmc> <pid> <exit>` in `<site>/runs.log`, sleeps 4-12 s
/// (by BMC, so the runs end at different moments), then
/// flashes the BIOS through the BMC's multipart push and follows the task (as in orphans.rs).
fn slow_flash() -> String {
    multipart_flash_script(
        "echo \"start $BMC_URL $$\" >>\"$site/runs.log\"\n\
         finish() { echo \"end $BMC_URL $$ $1\" >>\"$site/runs.log\"; exit \"$1\"; }\n\
         sleep $((4 + $(printf '%s' \"$BMC_URL\" | cksum | cut -d' ' -f1) % 9))",
        300,
    )
}

/// Most runs of the script at once for one BMC, from `runs.log`.
fn most_overlapping(log: &str) -> usize {
    let mut running = std::collections::BTreeMap::<&str, usize>::new();
    let mut most = 0;
    for line in log.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["start", bmc, ..] => {
                let n = running.entry(bmc).or_default();
                *n += 1;
                most = most.max(*n);
            }
            ["end", bmc, ..] => *running.entry(bmc).or_default() -= 1,
            _ => {}
        }
    }
    most
}

/// 6 Lenovo hosts whose BIOS goes through a Core-local script (4-12 s, then a flash) beside 6 Dell
/// hosts; the worker is SIGKILLed three times while a script runs (the script is orphaned).
pub async fn core_script_killed_with_worker(rng: &mut Rng) -> Row {
    let name = "Core-local script killed with its worker, up to 3 times (6 script + 6 Redfish hosts)";
    let dell = ids("cd", 6);
    let lenovo = ids("cl", 6);
    let mut fleet = r760_fleet(&dell, "task_seconds = 1.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    for id in &lenovo {
        fleet.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Lenovo\"\nmodel = \"SR630\"\nbmc_address = \"127.0.0.1:0\"\n\
             upload_style = \"multipart\"\ntask_style = \"spec\"\nfirmware = [ {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    let script = slow_flash();
    let files = [("firmware/scripts/slow-flash.sh", script.as_str())];
    let site =
        Site::start(SiteSpec { files: &files, ..with_model(spec(&fleet, 6), &sr630_script("scripts/slow-flash.sh")) })
            .await
            .expect("site starts");
    let mut expect = expect_r760(&dell);
    for id in &lenovo {
        expect.targets.insert(id.clone(), vec![("BIOS".into(), "3.0".into())]);
    }
    let runs = site.dir.path().join("runs.log");
    let read_runs = || std::fs::read_to_string(&runs).unwrap_or_default();
    let started = Instant::now();
    let mut worker = ChildWorker::start(&site).await;
    let running = |log: &str| {
        let count = |w: &str| log.lines().filter(|l| l.starts_with(w)).count();
        count("start") > count("end ")
    };
    let mut kills = 0;
    for kill in 1..=3 {
        // Kill only while a script runs (each kill orphans it); once every script has ended there
        // is nothing left to orphan.
        let deadline = Instant::now() + Duration::from_secs(90);
        while !running(&read_runs()) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if !running(&read_runs()) {
            break;
        }
        tokio::time::sleep(rng.millis(0, 1_500)).await;
        eprintln!("chaos: kill {kill}/3 mid-script at {:.1}s", started.elapsed().as_secs_f64());
        worker.kill_9();
        kills += 1;
        tokio::time::sleep(rng.millis(100, 1_500)).await;
        worker.restart().await;
    }
    // The runs log lives in the site directory, removed with the site: read it first.
    wait_settled(&site, &expect, Duration::from_secs(420)).await;
    let log = read_runs();
    let mut row = finish(site, vec![worker], &expect, name, started).await;
    let starts = log.lines().filter(|l| l.starts_with("start")).count();
    let most = most_overlapping(&log);
    row.notes.push(format!(
        "worker SIGKILLed {kills} times while a script ran; script runs: {starts} for {} hosts; most at once for one BMC: {most}",
        lenovo.len()
    ));
    if kills == 0 {
        row.violations.push("no script was running to be killed".into());
    }
    if most > 1 {
        row.violations.push(format!("two runs of the script overlapped on one BMC:\n{log}"));
    }
    row
}
