//! `hostfw-worker`: the Temporal worker of a hostfw site.
//!
//! Reads the site config, serves Prometheus metrics and the probes `/healthz` and `/readyz`
//! (`[worker] metrics_listen`) and firmware artifacts for BMCs, waits for Temporal and the site
//! database (retrying with backoff: `startup`), loads the firmware catalog and runs the workflows
//! and activities until SIGTERM or Ctrl-C, then lets running tasks finish.
//!
//! `--health-check URL` probes a running worker instead (exit 0 when the URL answers 2xx).
//!
//! SIGHUP, or `hostfw config reload` from anywhere (a request in the site database), re-reads the
//! site config: live keys take effect at once, a change to a key that needs a restart or a file
//! that does not load is refused whole (`live_config`).
//!
//! Errors print as one line `error: <cause chain>` (never a backtrace), with exit code 2 for a bad
//! config (the site config, the Temporal address or environment settings, the firmware catalog)
//! and 1 for anything else. A stop requested while waiting for a dependency exits 0.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use hostfw_activities::catalog_source::CatalogUnavailable;
use hostfw_activities::{ActivitySettings, Deps};
use hostfw_connect::ConnectError;
use hostfw_model::{error_chain, SiteConfig};
use hostfw_worker::live_config::{self, LiveConfig};
use hostfw_worker::site_workflows::KeeperStatus;
use hostfw_worker::startup::{self, StartupError};
use hostfw_worker::{run_worker_with_telemetry, serve_artifacts, start_sdk_metrics, MetricsServer};
use tokio::sync::watch;

#[derive(Parser, Debug)]
#[command(name = "hostfw-worker", version, about = "Run the hostfw Temporal worker")]
struct Args {
    /// Site config file.
    #[arg(long, env = "HOSTFW_CONFIG", default_value = "config/site.toml")]
    config: PathBuf,
    /// Log line format: `text`, `json`, or `auto` (text on a terminal, JSON otherwise).
    #[arg(long, env = "HOSTFW_LOG_FORMAT", value_enum, default_value_t = hostfw_logging::LogFormat::Auto)]
    log_format: hostfw_logging::LogFormat,
    /// Check a running worker instead of starting one: GET this URL (e.g.
    /// http://127.0.0.1:9464/readyz), exit 0 on a 2xx answer, 1 otherwise (container healthchecks).
    #[arg(long, value_name = "URL")]
    health_check: Option<String>,
}

/// Why the worker stopped with an error, which decides the exit code.
enum Failure {
    /// The configuration is wrong: exit 2.
    Config(anyhow::Error),
    /// Anything else: exit 1.
    Runtime(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Runtime(e.into())
    }
}

/// Resolves once SIGTERM or Ctrl-C arrives.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// A stop flag that turns true on SIGTERM or Ctrl-C (listening from now on).
fn stop_flag() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = tx.send(true);
    });
    rx
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    hostfw_logging::init(args.log_format, hostfw_logging::filter("RUST_LOG", "info"), hostfw_logging::Stream::Stdout);
    if let Some(url) = &args.health_check {
        return match hostfw_worker::health::probe(url).await {
            Ok(body) => {
                print!("{body}");
                ExitCode::SUCCESS
            }
            Err(problem) => {
                eprintln!("unhealthy: {problem}");
                ExitCode::from(1)
            }
        };
    }
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Config(e)) => {
            eprintln!("error: {}", error_chain(e.as_ref()));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("error: {}", error_chain(e.as_ref()));
            ExitCode::from(1)
        }
    }
}

/// The worker-upgrade test's emulation of an older build (`versions::emulate_build_through`):
/// the number of the newest workflow change the emulated build has. Never set at a site.
const EMULATE_BUILD_ENV: &str = "HOSTFW_EMULATE_BUILD_THROUGH_CHANGE";

async fn run(args: Args) -> Result<(), Failure> {
    let site = SiteConfig::load(&args.config).map_err(|e| Failure::Config(e.into()))?;
    if let Ok(text) = std::env::var(EMULATE_BUILD_ENV) {
        let n: u32 = text
            .parse()
            .map_err(|_| Failure::Config(anyhow::anyhow!("{EMULATE_BUILD_ENV}={text:?} is not a change number")))?;
        hostfw_workflows::versions::emulate_build_through(n);
        tracing::warn!("{EMULATE_BUILD_ENV}: behaving as the build whose newest workflow change is {n}");
    }
    let newest = hostfw_workflows::versions::newest();
    match site.worker.workflow_changes_through {
        Some(through) if through < newest => tracing::info!(
            newest,
            through,
            "workflow changes after {through} stay inactive in new runs until `[worker] workflow_changes_through` \
             is raised or removed"
        ),
        _ => tracing::info!(newest, "workflow changes: this build has changes 1..={newest}, all active"),
    }
    let mut stop = stop_flag();
    // From the start, so a SIGHUP while the worker waits for its dependencies does not kill it
    // (the default action); it is answered once the worker runs.
    let hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .inspect_err(|e| tracing::warn!(error = %e, "cannot listen for SIGHUP; `hostfw config reload` still reloads"))
        .ok();
    let metrics = MetricsServer::start(&site.worker.metrics_listen, &site.site.name).await?;
    tracing::info!(metrics_addr = %metrics.addr, "serving Prometheus metrics at /metrics, probes at /healthz and /readyz");
    let settings = ActivitySettings::from_site(&site);
    // The site database first: its site key signs the artifact links.
    let store = match startup::open_store(&site, &mut stop).await {
        Ok(store) => store,
        Err(StartupError::Stopped { what }) => return stopped(what),
        Err(StartupError::Fatal(e)) => return Err(e.into()),
    };
    let (artifact_addr, _server) = serve_artifacts(
        settings.artifact_root.clone(),
        settings.scout_scripts_dir.clone(),
        &site.worker.artifact_listen,
        settings.artifact_urls(store.site_key()),
    )
    .await
    .context("starting the artifact server")?;
    tracing::info!(%artifact_addr, root = %settings.artifact_root.display(), "serving firmware artifacts");

    let client = match startup::connect_temporal(&site, "hostfw-worker", &mut stop).await {
        Ok(client) => client,
        Err(StartupError::Stopped { what }) => return stopped(what),
        Err(StartupError::Fatal(e @ (ConnectError::BadAddress { .. } | ConnectError::Environment { .. }))) => {
            return Err(Failure::Config(e.into()))
        }
        Err(StartupError::Fatal(e)) => return Err(e.into()),
    };
    let deps = match Deps::open(&site, store, Some(client.clone())).await {
        Ok(deps) => deps,
        Err(e @ CatalogUnavailable::Invalid(_)) => return Err(Failure::Config(e.into())),
        Err(e) => return Err(e.into()),
    };
    // The hostfw API in-process (`[api] enabled`): operators, tenants and integrations reach the
    // site through it. A listener that cannot bind stops the worker with the reason.
    let _api = if site.api.enabled {
        let api = hostfw_api::ApiServer::start(std::sync::Arc::new(site.clone()), deps.store.clone())
            .await
            .context("starting the hostfw API ([api])")?;
        tracing::info!(api_addr = %api.addr, url = %format!("{}/v1", api.url()), "serving the hostfw API");
        Some(api)
    } else {
        None
    };
    let sdk_metrics = start_sdk_metrics()?;
    let keeper = KeeperStatus::default();
    if site.worker.site_workflows {
        metrics.watch_site_workflows(keeper.clone());
    }
    metrics.attach(deps.clone(), Some(sdk_metrics.addr));
    let live = LiveConfig::new(args.config.clone(), &deps, live_config::identity());
    tracing::info!(worker = live.identity(), config = %args.config.display(), "SIGHUP or `hostfw config reload` re-reads the site config");
    tokio::spawn(live.run(hangup, stop.clone()));
    tracing::info!(task_queue = %site.temporal.task_queue, "worker running");
    let telemetry = Some(sdk_metrics.telemetry);
    let shutdown = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    run_worker_with_telemetry(client, &site.temporal.task_queue, deps, shutdown, telemetry, keeper).await?;
    tracing::info!("worker stopped");
    Ok(())
}

fn stopped(what: &str) -> Result<(), Failure> {
    tracing::info!("stopped while waiting for {what}");
    Ok(())
}
