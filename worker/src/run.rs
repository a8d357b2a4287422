//! Building the activity dependencies and running the Temporal worker.

use std::future::Future;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use hostfw_activities::{ActivitySettings, CatalogSource, Deps, HostActivitiesImpl, SiteActivitiesImpl};
use hostfw_model::SiteConfig;
use hostfw_store::Store;
use hostfw_workflows::{HostReprovisionWorkflow, MachineUpdateManagerWorkflow, SiteExplorerWorkflow};
use temporalio_client::Client;
use temporalio_common::telemetry::TelemetryOptions;
use temporalio_sdk::runtime::RuntimeOptions;
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

/// Activity settings from the site config.
pub fn activity_settings(site: &SiteConfig) -> ActivitySettings {
    ActivitySettings {
        redfish_timeout: site.redfish.timeout,
        task_timeout: site.redfish.task_timeout,
        task_poll_interval: site.host_reprovision.task_poll_interval,
        artifact_root: site.firmware_global.firmware_directory.clone(),
        artifact_base_url: site.worker.artifact_base_url.clone(),
        scout_scripts_dir: site.firmware_global.scout_scripts_directory.clone(),
        max_uploads: site.firmware_global.max_uploads,
        default_credentials: site
            .credentials
            .default_username
            .clone()
            .zip(site.credentials.default_password.clone()),
        redfish_ca_bundle: site.redfish.ca_bundle.clone(),
        redfish_insecure_skip_verify: site.redfish.insecure_skip_verify,
        redfish_max_response_bytes: site.redfish.max_response_bytes,
        redfish_inventory_concurrency: site.redfish.inventory_concurrency,
        redfish_reset_task_timeout: site.redfish.reset_task_timeout,
    }
}

/// Open the site database and load the catalog: everything the activities touch. `temporal` is
/// the worker's client (the scheduler and Site Explorer activities start and wake workflows).
/// A catalog that does not load is an error here, before any work is taken.
pub async fn build_deps(site: &SiteConfig, settings: ActivitySettings, temporal: Option<Client>) -> anyhow::Result<Deps> {
    let store = Store::connect(&site.site.database_url)
        .await
        .with_context(|| format!("site database {}", site.site.database_url))?;
    let site = Arc::new(site.clone());
    let catalog = CatalogSource::new(site.clone(), store.clone());
    catalog.current().await.map_err(|e| anyhow!("{e}"))?;
    Ok(Deps { store, catalog, settings, site, temporal })
}

/// Run a worker on `task_queue` until `shutdown` resolves, then drain and return.
///
/// The SDK's worker future is not `Send`: call this on the thread that owns it (for example
/// inside `tokio::task::LocalSet` or a current-thread runtime).
pub async fn run_worker(
    client: Client,
    task_queue: &str,
    deps: Deps,
    shutdown: impl Future<Output = ()> + 'static,
) -> anyhow::Result<()> {
    run_worker_with_telemetry(client, task_queue, deps, shutdown, None).await
}

/// [`run_worker`] with the SDK's telemetry options (e.g. its Prometheus exporter from
/// [`crate::start_sdk_metrics`]); `None` is the SDK's default (no metrics).
pub async fn run_worker_with_telemetry(
    client: Client,
    task_queue: &str,
    deps: Deps,
    shutdown: impl Future<Output = ()> + 'static,
    telemetry: Option<TelemetryOptions>,
) -> anyhow::Result<()> {
    let runtime_options = match telemetry {
        Some(t) => {
            RuntimeOptions::builder().telemetry_options(t).build().map_err(|e| anyhow!("Temporal runtime: {e}"))?
        }
        None => RuntimeOptions::default(),
    };
    let runtime = Runtime::from_current_tokio(runtime_options).map_err(|e| anyhow!("Temporal runtime: {e}"))?;
    let options = WorkerOptions::new(task_queue)
        .register_workflow::<HostReprovisionWorkflow>()
        .and_then(|o| o.register_workflow::<MachineUpdateManagerWorkflow>())
        .and_then(|o| o.register_workflow::<SiteExplorerWorkflow>())
        .map_err(|e| anyhow!("registering workflows: {e}"))?
        .register_activities(HostActivitiesImpl::new(deps.clone()))
        .register_activities(SiteActivitiesImpl::new(deps.clone()))
        .build();
    let mut worker =
        Worker::new(&runtime, client.clone(), options).map_err(|e| anyhow!("creating the worker: {e}"))?;
    let stop = worker.shutdown_handle();
    let (stopped_tx, stopped_rx) = tokio::sync::watch::channel(false);
    let watcher = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing running tasks");
        let _ = stopped_tx.send(true);
        stop();
    };
    let site_tasks = async {
        crate::site_workflows::push_settings_to_waiting_hosts(&client).await;
        if deps.site.worker.site_workflows {
            crate::site_workflows::ensure_started(&client, &deps.site).await;
            crate::site_workflows::watch_catalog(&client, &deps.catalog, stopped_rx).await;
        }
    };
    let (result, (), ()) = futures::join!(worker.run(), watcher, site_tasks);
    result.map_err(|e| anyhow!("worker stopped: {e}"))
}
