//! The `hostfw-worker` binary at start: it waits for a Temporal server that is not up yet (one
//! WARN per attempt, still alive, `/healthz` 200 and `/readyz` 503 meanwhile) and becomes ready
//! once the server starts on that port (`--health-check` agrees); it waits for an unreachable
//! site database the same way without logging its password; a fresh site's created database and
//! missing firmware directory are each a WARN naming the path; SIGTERM during a wait, or once
//! running, exits 0; a config error prints one `error:` line and exits 2 even with
//! `RUST_BACKTRACE=1`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hostfw_tests::temporal::{DevServer, DevServerOptions};
use hostfw_tests::tools::{free_port, worker_bin};
use hostfw_tests::wait::wait_for;
use hostfw_tests::SiteToml;
use tempfile::TempDir;

const RETRY_LINE: &str = "Temporal is not reachable yet; retrying";

/// The worker binary on `config`, its output in `log`.
fn spawn_worker(config: &Path, log: &Path) -> Child {
    let out = std::fs::File::create(log).expect("log file");
    Command::new(worker_bin())
        .args(["--config", config.to_str().expect("utf-8 path")])
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .env_remove("TEMPORAL_ADDRESS")
        .stdout(out.try_clone().expect("log file"))
        .stderr(out)
        .spawn()
        .expect("hostfw-worker starts")
}

/// `GET http://<addr><path>`: status and body, or None when nothing answers.
async fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let response =
        reqwest::Client::new().get(format!("http://{addr}{path}")).timeout(Duration::from_secs(5)).send().await.ok()?;
    let status = response.status().as_u16();
    Some((status, response.text().await.unwrap_or_default()))
}

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_for_temporal_then_becomes_ready() {
    let mut server = DevServer::start(DevServerOptions::default()).await.expect("dev server");
    server.stop().await;
    let dir = TempDir::new().unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    let toml = SiteToml::new("startup").temporal_port(server.port()).set("worker", "metrics_listen", metrics.as_str());
    let (config, _) = toml.write(dir.path()).expect("site config");
    let log = dir.path().join("worker.log");
    let mut child = spawn_worker(&config, &log);

    let every = Duration::from_millis(100);
    wait_for("two retry lines in the worker log", Duration::from_secs(30), every, || async {
        (log_of(&log).matches(RETRY_LINE).count() >= 2).then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
    assert!(child.try_wait().unwrap().is_none(), "the worker gave up:\n{}", log_of(&log));
    let text = log_of(&log);
    let line = text.lines().find(|l| l.contains(RETRY_LINE)).expect("a retry line");
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains(&format!("127.0.0.1:{}", server.port())), "the address is named: {line}");
    assert!(line.contains("Connection refused"), "the cause is named: {line}");
    assert_eq!(get(&metrics, "/healthz").await.map(|r| r.0), Some(200));
    let (status, body) = get(&metrics, "/readyz").await.expect("/readyz answers while waiting");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("waiting for Temporal"), "{body}");

    server.start_again().await;
    let ready = wait_for("/readyz 200", Duration::from_secs(60), Duration::from_millis(200), || async {
        get(&metrics, "/readyz").await.filter(|(status, _)| *status == 200)
    })
    .await;
    let text = log_of(&log);
    ready.unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(text.contains("connected to Temporal"), "{text}");
    assert!(child.try_wait().unwrap().is_none());
    // A fresh site: the created database and the missing firmware directory are said, by path.
    let created = text.lines().find(|l| l.contains("created a new, empty site database at")).expect("created WARN");
    assert!(
        created.contains("WARN") && created.contains(&dir.path().join("site.db").display().to_string()),
        "{created}"
    );
    let firmware = dir.path().join("firmware").display().to_string();
    let no_models = text.lines().find(|l| l.contains("adds no host models") || l.contains("does not exist: it adds"));
    let no_models = no_models.unwrap_or_else(|| panic!("no firmware directory WARN:\n{text}"));
    assert!(no_models.contains("WARN") && no_models.contains(&firmware), "{no_models}");
    let page = hostfw_tests::metrics_page::without_site(&get(&metrics, "/metrics").await.expect("/metrics").1);
    assert!(page.contains("hostfw_build_info{version=\""), "{page}");
    assert!(page.contains("hostfw_metrics_scrape_error 0"), "{page}");
    let probe = |path: &str| {
        Command::new(worker_bin())
            .args(["--health-check", &format!("http://{metrics}{path}")])
            .output()
            .expect("hostfw-worker --health-check runs")
    };
    let out = probe("/readyz");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ready\n");

    // Temporal gone again: not ready, with the reason; still alive.
    server.stop().await;
    let (status, body) =
        wait_for("/readyz 503 after Temporal stopped", Duration::from_secs(30), Duration::from_millis(200), || async {
            get(&metrics, "/readyz").await.filter(|(status, _)| *status == 503)
        })
        .await
        .unwrap();
    assert_eq!(status, 503);
    assert!(body.starts_with("not ready: Temporal: "), "{body}");
    let out = probe("/readyz");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("unhealthy: ") && stderr.contains("503"), "{stderr}");
    assert_eq!(probe("/healthz").status.code(), Some(0));

    // Temporal back: ready again without a restart; SIGTERM then stops the worker cleanly.
    server.start_again().await;
    wait_for("/readyz 200 again", Duration::from_secs(60), Duration::from_millis(200), || async {
        get(&metrics, "/readyz").await.filter(|(status, _)| *status == 200)
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
    assert!(child.try_wait().unwrap().is_none());
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let child = std::sync::Mutex::new(child);
    let exit = wait_for("the worker to exit after SIGTERM", Duration::from_secs(60), every, || {
        let exited = child.lock().unwrap().try_wait().unwrap();
        async move { exited }
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
    assert_eq!(exit.code(), Some(0), "{}", log_of(&log));
    assert!(log_of(&log).contains("worker stopped"), "{}", log_of(&log));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_waiting_exits_cleanly() {
    let dir = TempDir::new().unwrap();
    let toml = SiteToml::new("startup-stop").temporal_port(free_port());
    let (config, _) = toml.write(dir.path()).expect("site config");
    let log = dir.path().join("worker.log");
    let mut child = spawn_worker(&config, &log);
    wait_for("a retry line in the worker log", Duration::from_secs(30), Duration::from_millis(100), || async {
        log_of(&log).contains(RETRY_LINE).then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || child.wait()).await.unwrap().unwrap();
    assert_eq!(exit.code(), Some(0), "{}", log_of(&log));
    assert!(log_of(&log).contains("stopped while waiting for Temporal"), "{}", log_of(&log));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_for_the_site_database_without_logging_its_password() {
    let server = DevServer::start(DevServerOptions::default()).await.expect("dev server");
    let dir = TempDir::new().unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    // PostgreSQL on a port where nothing listens.
    let db_port = free_port();
    let password = "pw-that-must-not-be-logged-5521";
    let toml = SiteToml::new("startup-db")
        .temporal_port(server.port())
        .database_url(&format!("postgres://hostfw:{password}@127.0.0.1:{db_port}/hostfw"))
        .set("worker", "metrics_listen", metrics.as_str());
    let (config, _) = toml.write(dir.path()).expect("site config");
    let log = dir.path().join("worker.log");
    let mut child = spawn_worker(&config, &log);
    let db_retry = "the site database is not reachable yet; retrying";
    // One attempt at an unreachable PostgreSQL lasts the pool's acquire timeout (30 s).
    wait_for("a database retry line", Duration::from_secs(60), Duration::from_millis(100), || async {
        log_of(&log).contains(db_retry).then_some(())
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
    let text = log_of(&log);
    // The site database comes first (its site key signs the artifact links), then Temporal.
    assert!(!text.contains("connected to Temporal"), "{text}");
    let line = text.lines().find(|l| l.contains(db_retry)).unwrap();
    assert!(line.contains("WARN") && line.contains(&format!("127.0.0.1:{db_port}")), "{line}");
    assert!(!text.contains(password), "the database password is in the log:\n{text}");
    let (status, body) = get(&metrics, "/readyz").await.expect("/readyz answers");
    assert_eq!(status, 503, "{body}");
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || child.wait()).await.unwrap().unwrap();
    assert_eq!(exit.code(), Some(0), "{}", log_of(&log));
    assert!(log_of(&log).contains("stopped while waiting for the site database"), "{}", log_of(&log));
}

#[test]
fn a_config_error_is_one_line_and_exit_code_2() {
    let dir = TempDir::new().unwrap();
    let config = dir.path().join("site.toml");
    // Literal TOML: the test is about a misspelled key in the text.
    std::fs::write(&config, "[site]\nname = \"typo\"\ndatabse_url = \"sqlite://x.db\"\n").unwrap();
    let out = Command::new(worker_bin())
        .args(["--config", config.to_str().unwrap()])
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("hostfw-worker runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line, no backtrace:\n{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(lines[0].contains("site.toml") && lines[0].contains("databse_url"), "names file and key: {stderr}");
    assert!(!stderr.contains("Stack backtrace"), "{stderr}");

    // A runtime failure (the metrics port is taken) exits 1.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let toml = SiteToml::new("runtime").set("worker", "metrics_listen", taken.local_addr().unwrap().to_string());
    let (config, _) = toml.write(dir.path()).unwrap();
    let out = Command::new(worker_bin())
        .args(["--config", config.to_str().unwrap()])
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("hostfw-worker runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("error: metrics server cannot listen on"), "{stderr}");
    assert!(!stderr.contains("Stack backtrace"), "{stderr}");
}

/// A worker that keeps the site workflows starts the manager and the explorer, and starts the
/// manager again after an operator terminated it; meanwhile `/readyz` is 503 naming the manager
/// and how its run ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_manager_is_started_again_and_readyz_says_why() {
    use temporalio_client::{
        UntypedWorkflow, WorkflowDescribeOptions, WorkflowExecutionStatus, WorkflowTerminateOptions,
    };

    let server = DevServer::start(DevServerOptions::default()).await.expect("dev server");
    let dir = TempDir::new().unwrap();
    let metrics = format!("127.0.0.1:{}", free_port());
    let toml = SiteToml::new("keeper").temporal_port(server.port()).site_workflows(true).set(
        "worker",
        "metrics_listen",
        metrics.as_str(),
    );
    let (config, _) = toml.write(dir.path()).expect("site config");
    let log = dir.path().join("worker.log");
    let mut child = spawn_worker(&config, &log);
    let ready = || async { get(&metrics, "/readyz").await.filter(|(status, _)| *status == 200) };
    wait_for(
        "/readyz 200 with both site workflows running",
        Duration::from_secs(60),
        Duration::from_millis(100),
        ready,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));

    let handle = server.client().get_workflow_handle::<UntypedWorkflow>("machine-update-manager".to_string());
    let run_id = |d: &temporalio_client::WorkflowExecutionDescription| {
        d.raw_description.workflow_execution_info.as_ref().and_then(|i| i.execution.as_ref()).map(|e| e.run_id.clone())
    };
    // The keeper checks every few seconds: terminate until /readyz is seen saying so before the
    // keeper's next check (one try suffices unless that check falls right after the terminate).
    let mut seen = None;
    for _ in 0..5 {
        let before = handle.describe(WorkflowDescribeOptions::default()).await.expect("manager described");
        assert_eq!(before.status(), WorkflowExecutionStatus::Running);
        handle
            .terminate(WorkflowTerminateOptions::builder().reason("an operator, by hand").build())
            .await
            .expect("manager terminated");
        let (status, body) = get(&metrics, "/readyz").await.expect("/readyz answers");
        // It runs again, as a new run.
        let again =
            wait_for("the manager running again", Duration::from_secs(60), Duration::from_millis(100), || async {
                let d = handle.describe(WorkflowDescribeOptions::default()).await.ok()?;
                (d.status() == WorkflowExecutionStatus::Running && run_id(&d) != run_id(&before)).then_some(())
            })
            .await;
        again.unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
        if status == 503 {
            seen = Some(body);
            break;
        }
    }
    let body = seen.unwrap_or_else(|| panic!("/readyz never said the manager was not running\n{}", log_of(&log)));
    assert!(
        body.starts_with(
            "not ready: site workflows: machine update manager: not running: its last run ended TERMINATED; \
                          the worker starts it again"
        ),
        "{body}"
    );
    assert!(!body.contains("site explorer"), "the explorer runs: {body}");
    wait_for("/readyz 200 again", Duration::from_secs(60), Duration::from_millis(100), ready)
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", log_of(&log)));
    let text = log_of(&log);
    let line =
        text.lines().find(|l| l.contains("started it again")).unwrap_or_else(|| panic!("no restart line:\n{text}"));
    assert!(line.contains("WARN") && line.contains("machine update manager") && line.contains("TERMINATED"), "{line}");
    let _ = child.kill();
    let _ = child.wait();
}
