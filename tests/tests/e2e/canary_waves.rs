//! End-to-end: canary waves (`[machine_updater] canary_waves`, `canary_soak`) on a real Temporal
//! dev server, bmc-sim and the real `hostfw-worker` binary. Six Dell R760s and three Supermicro
//! hosts take a BIOS update with waves of one host, 50 % and all, and a soak of 4 s; x4 is
//! labelled `canary=true`. Every update task of the Supermicro image fails (an injected bad
//! image on one model).
//!
//! - The R760 target goes wave by wave: x4 first, alone; the next two hosts only once it finished
//!   and the soak passed; the last three only once those finished and the soak passed again
//!   (read from the hosts' state history, so no timing is guessed). The worker is killed with
//!   SIGKILL during the first soak and started again: the wave is read from the site database.
//! - `plan` shows the wave and when the next opens while the soak runs.
//! - The Supermicro canary fails: its wave ended over the error budget's share, so the target is
//!   paused (plan names the failed host and why; `hostfw_target_paused` is 1) and its two other
//!   hosts never start, while the R760s finish.
//! - Each target's waves are on record in the site database (host count frozen at the first
//!   wave, wave reached).

use std::time::Duration;

use hostfw_bmc_sim::Fault;
use hostfw_model::gates::WaveRecord;
use hostfw_model::HostState;
use hostfw_tests::fixtures::{bios_fleet, r760_bios, smc_bios};
use hostfw_tests::{free_port, Catalog, ChildWorker, Site, SiteSpec, SiteToml};

const IMAGES: &[(&str, &str, &str)] = &[("dell/bios.bin", "^BIOS$", "3.0")];
const SOAK_MS: i64 = 4_000;
const R760: [&str; 6] = ["x1", "x2", "x3", "x4", "x5", "x6"];

fn fleet() -> String {
    let smc = ["g1", "g2", "g3"].map(|id| (id, "Supermicro", "SYS-821GE-TNHR"));
    let r760 = R760.map(|id| (id, "Dell", "PowerEdge R760"));
    bios_fleet(&[smc.as_slice(), r760.as_slice()].concat())
}

fn catalog() -> Catalog {
    Catalog::of([r760_bios(), smc_bios()])
}

fn compliant(site: &Site, id: &str) -> bool {
    site.fleet.versions(id).iter().any(|(member, v)| member == "BIOS" && v == "3.0")
}

/// When `id`'s update run began (its first HostReprovision entry) and ended (back to Ready), from
/// the site database's state history.
async fn run_span(site: &Site, id: &str) -> (i64, i64) {
    let history = site.store.history_list(id, 200).await.unwrap();
    let start = history.iter().filter(|h| h.state == HostState::HostReprovision).map(|h| h.at_ms).min();
    let end = history.iter().filter(|h| h.state == HostState::Ready && h.seq > 1).map(|h| h.at_ms).max();
    (
        start.unwrap_or_else(|| panic!("{id} never started: {history:?}")),
        end.unwrap_or_else(|| panic!("{id} never ended")),
    )
}

async fn done(site: &Site, id: &str) -> Option<()> {
    (compliant(site, id) && site.store.request_get(id).await.ok()?.is_none()).then_some(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_goes_wave_by_wave_canary_first_and_a_failed_canary_pauses_its_model() {
    let metrics = format!("127.0.0.1:{}", free_port());
    let fleet = fleet();
    let config = SiteToml::default()
        .catalog(&catalog())
        .manager(10, "1h")
        .site_workflows(true)
        .explorer_interval("1h")
        .max_retries(0)
        .canary_waves(&["1", "50%", "100%"], "4s")
        .set("worker", "metrics_listen", metrics.as_str());
    let site =
        Site::start(SiteSpec { fleet: &fleet, config, images: IMAGES, external_worker: true, ..SiteSpec::default() })
            .await
            .unwrap();
    let mut worker = ChildWorker::start(&site).await;
    for id in ["g1", "g2", "g3"] {
        site.fleet.set_fault(id, Fault { fail_next_tasks: 1000, ..Fault::default() }).unwrap();
    }
    site.cli(&["machine", "label", "x4", "--set", "canary=true"]).await.unwrap();
    site.cli(&["site-explorer", "explore"]).await.unwrap();
    let before = site.cli(&["plan"]).await.unwrap();
    println!("{before}");
    assert!(before.contains("would start (2): x4, g1"), "one host of each model, the canary first: {before}");
    // The operator's change wakes the manager (its interval is an hour): the pass starts them.
    site.cli(&["machine", "auto-update", "--machine", "x4", "--enable"]).await.unwrap();

    // Wave 1: the canary alone. Kill the worker while the soak runs; a new one carries on.
    site.wait_for("the canary x4 to update", Duration::from_secs(120), || done(&site, "x4")).await;
    let soaking = site
        .wait_for("plan to show the soak", Duration::from_secs(30), || async {
            let plan = site.cli(&["plan"]).await.ok()?;
            plan.lines()
                .any(|l| l.starts_with("Dell PowerEdge R760 uefi 3.0") && l.contains("opens at"))
                .then_some(plan)
        })
        .await;
    println!("{soaking}");
    assert!(soaking.contains("CANARY WAVES: 1, 50%, 100% (machine_updater.canary_waves); soak 4s"), "{soaking}");
    let waiting = soaking.lines().find(|l| l.starts_with("x1")).expect("x1 waits");
    assert!(
        waiting.contains("canary wave 1 of 3 of Dell PowerEdge R760 uefi 3.0 is full (1 host in all)"),
        "{waiting}"
    );
    worker.kill_9();
    worker.restart().await;

    for id in R760 {
        site.wait_for(&format!("{id} to update"), Duration::from_secs(180), || done(&site, id)).await;
    }
    let mut spans = Vec::new();
    for id in R760 {
        spans.push((id, run_span(&site, id).await));
    }
    spans.sort_by_key(|(_, (start, _))| *start);
    println!("{spans:?}");
    let (canary, first) = (spans[0].0, spans[0].1);
    assert_eq!(canary, "x4", "the host labelled canary=true goes first: {spans:?}");
    // 50 % of 6: three hosts in all, so two more; then the last three.
    let second = &spans[1..3];
    let third = &spans[3..];
    for (id, (start, _)) in second {
        assert!(*start >= first.1 + SOAK_MS, "{id} started before the canary's soak ended: {spans:?}");
    }
    let second_end = second.iter().map(|(_, (_, end))| *end).max().unwrap();
    for (id, (start, _)) in third {
        assert!(*start >= second_end + SOAK_MS, "{id} started before wave 2 ended and soaked: {spans:?}");
    }

    // The Supermicro canary failed: its target is paused, its other hosts never started.
    let plan = site.cli(&["plan"]).await.unwrap();
    println!("{plan}");
    assert!(
        plan.contains(
            "PAUSED TARGET Supermicro SYS-821GE-TNHR uefi 3.0: canary wave 1 of 3 ended with 1 of 1 hosts failed"
        ),
        "{plan}"
    );
    assert!(plan.lines().any(|l| l.starts_with("g1") && l.contains("task")), "g1's failure and why: {plan}");
    for id in ["g2", "g3"] {
        let line = plan.lines().find(|l| l.starts_with(id)).unwrap_or_else(|| panic!("{id} in {plan}"));
        assert!(line.contains("the error budget of Supermicro SYS-821GE-TNHR uefi 3.0 is spent"), "{line}");
        assert!(site.store.history_list(id, 50).await.unwrap().iter().all(|h| h.state != HostState::HostReprovision));
    }
    let page = hostfw_tests::metrics_page::scrape(&metrics).await;
    let paused =
        "hostfw_target_paused{vendor=\"Supermicro\",model=\"SYS-821GE-TNHR\",component=\"uefi\",version=\"3.0\"} 1";
    assert!(page.lines().any(|l| l == paused), "{page}");
    let held =
        "hostfw_canary_wave{vendor=\"Supermicro\",model=\"SYS-821GE-TNHR\",component=\"uefi\",version=\"3.0\"} 1";
    assert!(page.lines().any(|l| l == held), "the Supermicro target is held at its first wave: {page}");
    assert!(
        !page.lines().any(|l| l.starts_with("hostfw_canary_wave{vendor=\"Dell\"")),
        "a target every host has taken has no wave left: {page}"
    );
    assert!(!plan.lines().any(|l| l.starts_with("Dell PowerEdge R760 uefi 3.0")), "{plan}");
    // The scheduler recorded each target's waves in the site database: the R760s' six hosts,
    // frozen at the first wave, and the last wave reached; the Supermicro target held at its first.
    let records = site.store.target_records().await.unwrap();
    let waves_of = |model: &str| records.iter().find(|r| r.target.model == model).and_then(|r| r.waves);
    assert_eq!(waves_of("PowerEdge R760"), Some(WaveRecord { hosts: 6, wave: 3 }), "{records:?}");
    assert_eq!(waves_of("SYS-821GE-TNHR"), Some(WaveRecord { hosts: 3, wave: 1 }), "{records:?}");
}
