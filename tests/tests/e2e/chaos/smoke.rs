//! The chaos smoke that runs in `make test` (issue 26 item 8), so CI catches the class `make
//! chaos` found: worker SIGKILLs mid-activation under the default error budget. 12 hosts whose
//! activations keep the host off for seconds, the worker killed 5 times while they run, and a
//! retry budget of zero: a lost worker is the infrastructure's fault, so every host must end
//! compliant on its first attempt, no target may record a failed host, and nothing is lost,
//! stuck or installed twice. (Before the fix, activations whose attempts all lost their worker
//! failed with "activation: activity Heartbeat timeout" and counted as the host's failure.)

use std::time::{Duration, Instant};

use super::measure::{judge, wait_settled, Expect, Rng};
use super::scenarios::{r760_fleet, r760_targets, IMAGES};
use hostfw_tests::fixtures::r760;
use hostfw_tests::{ChildWorker, Site, SiteSpec, SiteToml};

const HOSTS: usize = 12;
const KILLS: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smoke_worker_kills_mid_activation_spend_no_retry_and_no_error_budget() {
    let ids: Vec<String> = (0..HOSTS).map(|i| format!("sm{i:02}")).collect();
    let fleet = r760_fleet(&ids, "task_seconds = 0.5\nreset_seconds = 8.0\nmanager_reset_seconds = 4.0");
    // The default error budget ([machine_updater] error_budget_*), no retry: any failure counted
    // against a host exhausts it and shows.
    let config = SiteToml::default()
        .catalog(&r760().into())
        .heartbeat_timeout("5s")
        .max_retries(0)
        .max_uploads(HOSTS as i64)
        .manager(HOSTS as i64, "10s")
        .explorer_interval("10s")
        .site_workflows(true);
    let site = Site::start(SiteSpec {
        fleet: &fleet,
        config,
        images: IMAGES,
        external_worker: true,
        temporal_db: true,
        ..SiteSpec::default()
    })
    .await
    .expect("site starts");
    let mut expect = Expect { max_retries: 0, ..Expect::default() };
    for id in &ids {
        expect.targets.insert(id.clone(), r760_targets());
    }
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    eprintln!("chaos smoke seed: {seed}");
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut worker = ChildWorker::start(&site).await;
    for kill in 1..=KILLS {
        // Kills a little more than a heartbeat timeout apart: an activation that lost its worker
        // is retried on the restarted one just in time to lose it again, so some activations
        // lose every attempt (the class this smoke is for). Each kill lands while an activation
        // is under way.
        if kill > 1 {
            tokio::time::sleep(rng.millis(5_500, 7_000)).await;
        }
        site.wait_for("an activation under way", Duration::from_secs(120), || async {
            let mut running = false;
            for id in &ids {
                if site.substate(id).await.as_deref() == Some("ResetForNewFirmware") {
                    running = true;
                    break;
                }
            }
            running.then_some(())
        })
        .await;
        eprintln!("chaos smoke: kill {kill}/{KILLS} at {:.1}s", started.elapsed().as_secs_f64());
        worker.kill_9();
        tokio::time::sleep(rng.millis(100, 1_000)).await;
        worker.restart().await;
    }
    wait_settled(&site, &expect, Duration::from_secs(420)).await;
    let mut row = judge(&site, &expect, "chaos smoke", started).await;
    for r in site.store.target_records().await.expect("target records") {
        if !r.failures.is_empty() {
            row.violations.push(format!("target {:?} recorded failed hosts: {:?}", r.target, r.failures));
        }
    }
    if !row.ok() {
        eprintln!("{}", worker.log_tail(80));
    }
    drop(worker);
    site.shutdown().await;
    assert!(row.ok(), "chaos smoke (seed {seed}): {row:#?}");
}
