//! The chaos suite's first scenario: a 100-host rollout driven by the Machine Update Manager while
//! the worker is killed with SIGKILL 10 times at random moments and restarted, and the Temporal dev
//! server is restarted (gracefully) once on the same database file; plus a BMC fault matrix on
//! chosen hosts (5xx bursts, answers slower than the Redfish timeout, a task Exception, a version
//! that never changes, a missing inventory entry, malformed JSON, an outage).

use std::time::{Duration, Instant};

use hostfw_bmc_sim::{Fault, HttpErrors};

use super::measure::{judge, wait_settled, Expect, Rng, Row};
use super::scenarios::r760_targets;
use hostfw_tests::fixtures::{r760, R760_IMAGES};
use hostfw_tests::{ChildWorker, Site, SiteSpec, SiteToml};

const HOSTS: usize = 100;
const KILLS: usize = 10;
const MAX_RETRIES: u32 = 2;

/// How a host of the matrix ends.
#[derive(Clone, Copy)]
enum End {
    Compliant,
    /// Failed, retries spent, with this text in the last recorded reason.
    Failed(&'static str),
    /// Released, every matched component at target, the last reason saying which component is
    /// not installable (issue 11 finding 3: an unmatched component is skipped, not retried).
    NotFullyInstallable(&'static str),
}
use End::*;

/// The fault matrix: host id, fault set at the start, and the expected end.
fn matrix() -> Vec<(&'static str, Fault, End)> {
    vec![
        ("f-5xx", Fault { http_errors: Some(HttpErrors { count: 4, status: 503 }), ..Fault::default() }, Compliant),
        ("f-slow", Fault { slow_response_secs: 6.0, ..Fault::default() }, Compliant),
        ("f-exception", Fault { fail_next_tasks: 1, ..Fault::default() }, Compliant),
        ("f-never", Fault { version_never_changes: true, ..Fault::default() }, Failed("never")),
        (
            "f-missing",
            Fault { hide_members: vec!["BIOS".into()], ..Fault::default() },
            NotFullyInstallable("not fully installable: uefi (no inventory entry matches"),
        ),
        ("f-unreachable", Fault::default(), Compliant),
        ("f-malformed", Fault { malformed_json_next: 3, ..Fault::default() }, Compliant),
    ]
}

fn fleet() -> (String, Vec<String>) {
    let mut ids: Vec<String> = matrix().iter().map(|(id, _, _)| id.to_string()).collect();
    ids.extend((ids.len()..HOSTS).map(|n| format!("h{n:03}")));
    let fleet =
        super::scenarios::r760_fleet(&ids, "task_seconds = 1.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    (fleet, ids)
}

pub async fn worker_kills_server_restart_bmc_faults(rng: &mut Rng) -> Row {
    let name = format!("{HOSTS} hosts, {KILLS} worker SIGKILLs, 1 server restart, BMC faults");
    let (fleet, ids) = fleet();
    let mut site = Site::start(SiteSpec {
        fleet: &fleet,
        config: SiteToml::default()
            .catalog(&r760().into())
            .heartbeat_timeout("5s")
            .max_retries(MAX_RETRIES.into())
            // The fault matrix makes some of its hosts fail on purpose (a task Exception, an
            // outage mid-activation, a version that never changes), all on the R760 BMC target:
            // the count rule of the error budget allows one failure per matrix host, so the
            // rollout is not paused by the faults it injects. The percentage rule keeps its
            // default. The worker kills and the server restart are infrastructure: they must
            // record no failure at all (checked below).
            .machine_updater("error_budget_failed_hosts", i64::try_from(matrix().len() + 1).unwrap_or(i64::MAX))
            .host_reprovision("max_reactivations", 1)
            .host_reprovision("verify_max_polls", 5)
            .max_uploads(10)
            .manager(20, "30s")
            .explorer_interval("10s")
            .site_workflows(true),
        images: R760_IMAGES,
        external_worker: true,
        temporal_db: true,
        ..SiteSpec::default()
    })
    .await
    .unwrap();
    let mut expect = Expect { max_retries: MAX_RETRIES, ..Expect::default() };
    for id in &ids {
        expect.targets.insert(id.clone(), r760_targets());
    }
    for (id, fault, end) in matrix() {
        if !fault.is_empty() {
            site.fleet.set_fault(id, fault).unwrap();
        }
        match end {
            Compliant => {}
            Failed(reason) => {
                expect.failures.insert(id.to_string(), reason);
            }
            NotFullyInstallable(reason) => {
                expect.partial.insert(id.to_string(), reason);
                expect.targets.insert(id.to_string(), vec![("BMC".into(), "2.0".into())]);
            }
        }
    }
    let started = Instant::now();
    let mut worker = ChildWorker::start(&site).await;

    let mut unreachable_done = false;
    let mut slow_cleared = false;
    for kill in 1..=KILLS {
        tokio::time::sleep(rng.millis(2_000, 7_000)).await;
        if !unreachable_done && started.elapsed() > Duration::from_secs(8) {
            site.fleet.set_fault("f-unreachable", Fault { unreachable_for_secs: 15.0, ..Fault::default() }).unwrap();
            unreachable_done = true;
        }
        if !slow_cleared && started.elapsed() > Duration::from_secs(25) {
            site.fleet.set_fault("f-slow", Fault::default()).unwrap();
            slow_cleared = true;
        }
        eprintln!("chaos: kill {kill}/{KILLS} at {:.1}s", started.elapsed().as_secs_f64());
        worker.kill_9();
        tokio::time::sleep(rng.millis(100, 1_500)).await;
        if kill == KILLS / 2 {
            eprintln!("chaos: restarting the Temporal dev server at {:.1}s", started.elapsed().as_secs_f64());
            site.restart_temporal().await;
        }
        worker.restart().await;
    }
    if !slow_cleared {
        site.fleet.set_fault("f-slow", Fault::default()).unwrap();
    }
    wait_settled(&site, &expect, Duration::from_secs(600)).await;
    let mut row = judge(&site, &expect, &name, started).await;
    // Only the fault matrix's hosts may have failed: a host outside it that is on record as
    // failed was failed by a worker kill or the server restart (issue 26 item 8).
    let faulty: Vec<&str> = matrix().iter().map(|(id, _, _)| *id).collect();
    for r in site.store.target_records().await.expect("target records") {
        for f in r.failures.iter().filter(|f| !faulty.contains(&f.machine_id.as_str())) {
            row.violations
                .push(format!("{} failed {} by an infrastructure fault: {}", f.machine_id, r.target, f.reason));
        }
    }
    if !row.ok() {
        eprintln!("{}", worker.log_tail(80));
    }
    drop(worker);
    site.shutdown().await;
    row
}
