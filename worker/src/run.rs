//! Running the Temporal worker over activity dependencies built by `hostfw_activities::Deps::open`.

use std::future::Future;
use std::sync::Arc;

use anyhow::anyhow;
use hostfw_activities::{Deps, HostActivitiesImpl, SiteActivitiesImpl};
use hostfw_workflows::{
    versions, HostReprovisionWorkflow, MachineUpdateManagerWorkflow, SiteExplorerWorkflow, SiteNotifierWorkflow,
};
use temporalio_client::Client;
use temporalio_common::telemetry::TelemetryOptions;
use temporalio_sdk::runtime::RuntimeOptions;
use temporalio_sdk::{PatchActivationCallback, Runtime, Worker, WorkerOptions};

use crate::site_workflows::KeeperStatus;

/// When a workflow change not yet recorded in a run may activate there: under the current site
/// config's `[worker] workflow_changes_through` (a live key), read each time
/// (`versions::activates`). Replay never asks: it follows the history.
fn change_activation(deps: &Deps) -> PatchActivationCallback {
    let site = deps.site.clone();
    Arc::new(move |asked| versions::activates(&asked.patch_id, site.current().worker.workflow_changes_through))
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
    run_worker_with_telemetry(client, task_queue, deps, shutdown, None, KeeperStatus::default()).await
}

/// [`run_worker`] with the SDK's telemetry options (e.g. its Prometheus exporter from
/// [`crate::start_sdk_metrics`]); `None` is the SDK's default (no metrics). With
/// `[worker] site_workflows`, the site workflows are kept running (`site_workflows::keep_running`)
/// and `keeper` holds what went wrong doing so, for `/readyz`.
pub async fn run_worker_with_telemetry(
    client: Client,
    task_queue: &str,
    deps: Deps,
    shutdown: impl Future<Output = ()> + 'static,
    telemetry: Option<TelemetryOptions>,
    keeper: KeeperStatus,
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
        .and_then(|o| o.register_workflow::<SiteNotifierWorkflow>())
        .map_err(|e| anyhow!("registering workflows: {e}"))?
        .register_activities(HostActivitiesImpl::new(deps.clone()))
        .register_activities(SiteActivitiesImpl::new(deps.clone()))
        .patch_activation_callback(change_activation(&deps))
        .build();
    let mut worker = Worker::new(&runtime, client.clone(), options).map_err(|e| anyhow!("creating the worker: {e}"))?;
    let stop = worker.shutdown_handle();
    let stopped_rx = deps.stopping.subscribe();
    let stopping = deps.stopping.clone();
    let watcher = async move {
        shutdown.await;
        tracing::info!("shutting down: finishing running tasks");
        // The site tasks and the activities that only wait (the notifier's round) end now; a
        // flash runs to its end.
        stopping.begin();
        stop();
    };
    let site_tasks = async {
        crate::site_workflows::push_settings_to_waiting_hosts(&client).await;
        // `[worker]` and `[temporal]` need a restart: the config the worker started with.
        let site = deps.site.current();
        if site.worker.site_workflows {
            let keep = crate::site_workflows::keep_running(&client, &site, &keeper, stopped_rx.clone());
            let watch = crate::site_workflows::watch_catalog(&client, &deps.catalog, stopped_rx);
            futures::join!(keep, watch);
        }
    };
    let (result, (), ()) = futures::join!(worker.run(), watcher, site_tasks);
    result.map_err(|e| anyhow!("worker stopped: {e}"))
}
