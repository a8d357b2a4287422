//! `hostfw-worker`: the Temporal worker of a hostfw site.
//!
//! Reads the site config, opens the site database, loads the firmware catalog, serves firmware
//! artifacts for BMCs and Prometheus metrics (`[worker] metrics_listen`), connects to Temporal and
//! runs the workflows and activities until SIGTERM or Ctrl-C, then lets running tasks finish.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use hostfw_activities::{ActivitySettings, Deps};
use hostfw_model::SiteConfig;
use hostfw_store::Store;
use hostfw_worker::{connect, run_worker_with_telemetry, serve_artifacts, serve_metrics, start_sdk_metrics};
use tracing_subscriber::EnvFilter;

#[derive(Parser, Debug)]
#[command(name = "hostfw-worker", version, about = "Run the hostfw Temporal worker")]
struct Args {
    /// Site config file.
    #[arg(long, env = "HOSTFW_CONFIG", default_value = "config/site.toml")]
    config: PathBuf,
}

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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let args = Args::parse();
    let site = SiteConfig::load(&args.config)?;
    let settings = ActivitySettings::from_site(&site);
    let store = Store::open_site(&site).await.with_context(|| format!("site database {}", site.site.database_url))?;
    let (artifact_addr, _server) = serve_artifacts(
        settings.artifact_root.clone(),
        settings.scout_scripts_dir.clone(),
        &site.worker.artifact_listen,
        settings.artifact_urls(store.site_key()),
    )
    .await
    .context("starting the artifact server")?;
    tracing::info!(%artifact_addr, root = %settings.artifact_root.display(), "serving firmware artifacts");
    let client = connect(&site, "hostfw-worker").await?;
    let deps = Deps::open(&site, store, Some(client.clone())).await?;
    let sdk_metrics = start_sdk_metrics()?;
    let (metrics_addr, _metrics) = serve_metrics(&site.worker.metrics_listen, deps.clone(), Some(sdk_metrics.addr))
        .await
        .context("starting the metrics server")?;
    tracing::info!(%metrics_addr, "serving Prometheus metrics at /metrics");
    tracing::info!(task_queue = %site.temporal.task_queue, "worker running");
    let telemetry = Some(sdk_metrics.telemetry);
    run_worker_with_telemetry(client, &site.temporal.task_queue, deps, shutdown_signal(), telemetry).await?;
    tracing::info!("worker stopped");
    Ok(())
}
