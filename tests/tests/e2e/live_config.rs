//! Live configuration on the real `hostfw-worker` binary (issue 27 items 6 and 8):
//! - every `/metrics` sample carries `site="live"`;
//! - a live key (the ceiling) changed in the config file and a SIGHUP: the worker records the
//!   answer `applied` naming the key, and `/metrics` shows the new ceiling, without a restart;
//! - a change to a key that needs a restart (the task queue), beside a live one: refused whole,
//!   recorded with the key's name and "needs a restart", logged, the running ceiling kept;
//! - a file that does not load (a bad duration beside a good ceiling): refused whole with the
//!   error naming the key, nothing applied;
//! - the stored-request path (`hostfw config reload`'s document, `config_reload::reload`): the
//!   request reaches the running worker through the site database, it answers `applied`, and the
//!   report lists it as live and answered, audited with the CLI's actor.

use std::path::Path;
use std::time::Duration;

use hostfw_store::{ReloadAnswer, ReloadOutcome, ReloadRequest, Store, AUDIT_CONFIG_RELOAD};
use hostfw_tests::metrics_page;
use hostfw_tests::temporal::{DevServer, DevServerOptions};
use hostfw_tests::{free_port, wait_for, worker_bin, ChildWorker, SiteToml};
use tempfile::TempDir;

const CEILING: &str = "carbide_concurrent_machine_updates_available";
const CEILING_KEY: &str = "machine_updater.max_concurrent_machine_updates_absolute";

fn config(temporal_port: u16, metrics: &str, ceiling: i64) -> SiteToml {
    SiteToml::new("live")
        .temporal_port(temporal_port)
        .set("worker", "metrics_listen", metrics)
        .machine_updater("max_concurrent_machine_updates_absolute", ceiling)
}

/// The ceiling `/metrics` shows now.
async fn ceiling(metrics: &str) -> Option<String> {
    let page = metrics_page::scrape(metrics).await;
    page.lines().find_map(|l| l.strip_prefix(&format!("{CEILING} ")).map(str::to_string))
}

async fn await_ceiling(metrics: &str, want: &str, worker: &ChildWorker) {
    wait_for(
        &format!("/metrics to show the ceiling {want}"),
        Duration::from_secs(30),
        Duration::from_millis(200),
        || async { (ceiling(metrics).await.as_deref() == Some(want)).then_some(()) },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", worker.log_tail(40)));
}

fn hangup(worker: &ChildWorker) {
    let pid = worker.pid().expect("the worker runs");
    let status = std::process::Command::new("kill").args(["-HUP", &pid.to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill -HUP {pid}");
}

/// The first request after `after` with the worker's answer, once recorded.
async fn answer_after(store: &Store, after: i64, worker: &ChildWorker) -> (ReloadRequest, ReloadAnswer) {
    wait_for("the worker's answer to the reload", Duration::from_secs(30), Duration::from_millis(200), || async {
        let request = store.config_reload_get(after + 1).await.ok()??;
        let answer = store.config_reload_answers(request.id).await.ok()?.into_iter().next()?;
        Some((request, answer))
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", worker.log_tail(40)))
}

fn write(dir: &Path, toml: &SiteToml) {
    std::fs::write(dir.join("site.toml"), toml.render()).expect("site.toml written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_and_stored_requests_reload_live_keys_and_refuse_the_rest() {
    let server = DevServer::start(DevServerOptions::default()).await.expect("dev server");
    let dir = TempDir::new().unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    let port = server.port();
    let (path, site) = config(port, &metrics, 2).write(dir.path()).expect("site config");
    let worker = ChildWorker::start_config(worker_bin(), &path, dir.path()).await.unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open_site(&site).await.expect("site database");
    let pid = worker.pid().expect("the worker runs");

    // Item 8: the site's name on every sample (metrics_page checks each one).
    await_ceiling(&metrics, "2", &worker).await;
    let raw = reqwest::get(format!("http://{metrics}/metrics")).await.unwrap().text().await.unwrap();
    assert!(raw.contains(&format!("{CEILING}{{site=\"live\"}} 2")), "{raw}");

    // A live key and SIGHUP: applied at once, recorded as the signal's request.
    write(dir.path(), &config(port, &metrics, 7));
    let before = store.config_reload_last_id().await.unwrap();
    hangup(&worker);
    let (request, answer) = answer_after(&store, before, &worker).await;
    assert_eq!(request.actor, "signal:SIGHUP");
    assert!(answer.worker.ends_with(&format!("/{pid}")), "{answer:?}");
    assert_eq!(request.worker.as_deref(), Some(answer.worker.as_str()), "a SIGHUP is for that worker alone");
    assert_eq!((answer.outcome, answer.keys.clone()), (ReloadOutcome::Applied, vec![CEILING_KEY.to_string()]));
    await_ceiling(&metrics, "7", &worker).await;
    let identity = answer.worker;

    // A key that needs a restart beside a live one: refused whole, the running config kept.
    write(dir.path(), &config(port, &metrics, 9).set("temporal", "task_queue", "another-queue"));
    let before = store.config_reload_last_id().await.unwrap();
    hangup(&worker);
    let (_, answer) = answer_after(&store, before, &worker).await;
    assert_eq!(answer.outcome, ReloadOutcome::Refused, "{answer:?}");
    assert_eq!(answer.keys, ["temporal.task_queue"]);
    assert_eq!(answer.problem.as_deref(), Some("needs a restart"));
    assert!(worker.log().contains("temporal.task_queue needs a restart"), "{}", worker.log_tail(20));
    assert_eq!(ceiling(&metrics).await.as_deref(), Some("7"), "nothing of a refused file is applied");

    // A file that does not load: refused whole with its error.
    write(dir.path(), &config(port, &metrics, 11).machine_updater("canary_soak", "soon"));
    let before = store.config_reload_last_id().await.unwrap();
    hangup(&worker);
    let (_, answer) = answer_after(&store, before, &worker).await;
    assert_eq!(answer.outcome, ReloadOutcome::Invalid, "{answer:?}");
    let problem = answer.problem.unwrap_or_default();
    assert!(problem.contains("canary_soak"), "the error names the key: {problem}");
    assert_eq!(ceiling(&metrics).await.as_deref(), Some("7"), "nothing of a broken file is applied");

    // The stored request (`hostfw config reload`): through the site database to the worker.
    write(dir.path(), &config(port, &metrics, 4));
    let report = hostfw_starter::config_reload::reload(&store, "cli:e2e", Duration::from_secs(30)).await.unwrap();
    assert!(report.ok, "{report:#?}\n{}", worker.log_tail(40));
    assert_eq!(report.live_workers, std::slice::from_ref(&identity));
    assert!(report.silent.is_empty());
    assert_eq!(report.answers.len(), 1);
    assert_eq!(report.answers[0].worker, identity);
    assert_eq!(
        (report.answers[0].outcome, report.answers[0].keys.clone()),
        (ReloadOutcome::Applied, vec![CEILING_KEY.to_string()])
    );
    await_ceiling(&metrics, "4", &worker).await;
    let audit = store.audit_list(20).await.unwrap();
    assert!(
        audit.iter().any(|e| e.actor == "cli:e2e" && e.action == AUDIT_CONFIG_RELOAD && e.target == "all workers"),
        "{audit:#?}"
    );
    drop(worker);
}
