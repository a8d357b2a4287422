//! Building the activity dependencies and running the Temporal worker.

use std::future::Future;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use hostfw_activities::{ActivitySettings, Deps, HostActivitiesImpl};
use hostfw_model::{Catalog, SiteConfig};
use hostfw_store::Store;
use hostfw_workflows::HostReprovisionWorkflow;
use temporalio_client::Client;
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
    }
}

/// Open the site database and load the catalog: everything the activities touch.
pub async fn build_deps(site: &SiteConfig, settings: ActivitySettings) -> anyhow::Result<Deps> {
    let catalog = Catalog::load(site).map_err(|e| anyhow!("{e}"))?;
    let store = Store::connect(&site.site.database_url)
        .await
        .with_context(|| format!("site database {}", site.site.database_url))?;
    Ok(Deps { store, catalog: Arc::new(catalog), settings })
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
    let runtime =
        Runtime::from_current_tokio(RuntimeOptions::default()).map_err(|e| anyhow!("Temporal runtime: {e}"))?;
    let options = WorkerOptions::new(task_queue)
        .register_workflow::<HostReprovisionWorkflow>()
        .map_err(|e| anyhow!("registering workflows: {e}"))?
        .register_activities(HostActivitiesImpl::new(deps))
        .build();
    let mut worker = Worker::new(&runtime, client, options).map_err(|e| anyhow!("creating the worker: {e}"))?;
    let stop = worker.shutdown_handle();
    let watcher = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing running tasks");
        stop();
    };
    let (result, ()) = futures::join!(worker.run(), watcher);
    result.map_err(|e| anyhow!("worker stopped: {e}"))
}
