//! Running Scout: one Temporal activity worker per served machine, each polling that machine's
//! task queue (`scout/<machine-id>`) for Scout activities only, all driven on the current task and
//! stopped together.

use std::collections::HashSet;
use std::future::Future;

use anyhow::{anyhow, bail};
use futures::future::{join_all, select, Either};
use hostfw_workflows::scout::scout_task_queue;
use temporalio_client::Client;
use temporalio_sdk::runtime::RuntimeOptions;
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

use crate::activity::ScoutActivitiesImpl;
use crate::settings::{ScoutSettings, GRACEFUL_SHUTDOWN_PERIOD};

/// Serve `machine_ids` with the default settings until `shutdown` resolves, then let running
/// tasks finish (up to the graceful shutdown period) and return.
///
/// The SDK's worker future is not `Send`: await this on the task that owns it (no `tokio::spawn`).
pub async fn run_agent(
    client: Client,
    machine_ids: Vec<String>,
    shutdown: impl Future<Output = ()> + 'static,
) -> anyhow::Result<()> {
    run_agent_with(client, machine_ids, ScoutSettings::default(), shutdown).await
}

/// [`run_agent`] with explicit settings. If one machine's worker stops with an error, all stop
/// and the error is returned.
pub async fn run_agent_with(
    client: Client,
    machine_ids: Vec<String>,
    settings: ScoutSettings,
    shutdown: impl Future<Output = ()> + 'static,
) -> anyhow::Result<()> {
    if machine_ids.is_empty() {
        bail!("scout needs at least one machine id to serve");
    }
    let mut seen = HashSet::new();
    if let Some(dup) = machine_ids.iter().find(|id| !seen.insert(id.as_str())) {
        bail!("machine id {dup:?} is given twice");
    }
    match (&settings.trusted_key, settings.allow_unsigned) {
        (Some(key), _) => tracing::info!(key = key.id(), "only packages signed by the trusted key run"),
        (None, true) => tracing::warn!(
            "allow_unsigned is set and no trusted key: unsigned Scout packages WILL run (development only)"
        ),
        (None, false) => {
            tracing::error!("no trusted package signing key (--trusted-key): every upgrade task will be refused")
        }
    }
    let runtime =
        Runtime::from_current_tokio(RuntimeOptions::default()).map_err(|e| anyhow!("Temporal runtime: {e}"))?;
    let mut workers = Vec::with_capacity(machine_ids.len());
    for id in &machine_ids {
        let activities = ScoutActivitiesImpl::new(id.clone(), settings.clone())?;
        let options = WorkerOptions::new(scout_task_queue(id))
            .register_activities(activities)
            .graceful_shutdown_period(GRACEFUL_SHUTDOWN_PERIOD)
            .build();
        let worker = Worker::new(&runtime, client.clone(), options)
            .map_err(|e| anyhow!("creating the worker for machine {id}: {e}"))?;
        workers.push(worker);
    }
    let stops: Vec<_> = workers.iter().map(Worker::shutdown_handle).collect();
    let stop_all = || stops.iter().for_each(|stop| stop());

    for id in &machine_ids {
        tracing::info!(machine_id = %id, task_queue = %scout_task_queue(id), "serving");
    }
    let runs = join_all(workers.iter_mut().map(|worker| async {
        let task_queue = worker.task_queue().to_string();
        let result = worker.run().await;
        if let Err(e) = &result {
            tracing::error!(%task_queue, error = %e, "worker stopped with an error; stopping all");
            stop_all();
        }
        result.map_err(|e| anyhow!("worker on {task_queue}: {e}"))
    }));
    let watcher = async {
        shutdown.await;
        tracing::info!("shutting down: letting running upgrades finish");
        stop_all();
    };
    futures::pin_mut!(runs, watcher);
    let results = match select(runs, watcher).await {
        Either::Left((results, _)) => results,
        Either::Right(((), runs)) => runs.await,
    };
    results.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
    Ok(())
}
