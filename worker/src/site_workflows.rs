//! The site workflows a worker keeps alive: the Machine Update Manager and the Site Explorer
//! (one each per namespace and task queue; their workflow IDs make them singletons, so every
//! worker replica may call `ensure_started`), and the catalog watch that wakes the scheduler when
//! the firmware directory or the runtime catalog changes.

use std::sync::Arc;
use std::time::Duration;

use hostfw_activities::{site_link, CatalogSource};
use hostfw_model::SiteConfig;
use hostfw_workflows::machine_update_manager::ManagerInput;
use hostfw_workflows::names::{MACHINE_UPDATE_MANAGER_ID, SITE_EXPLORER_ID};
use hostfw_workflows::site_explorer::ExplorerInput;
use hostfw_workflows::{MachineUpdateManagerWorkflow, SiteExplorerWorkflow};
use temporalio_client::errors::WorkflowStartError;
use temporalio_client::{Client, WorkflowIdConflictPolicy, WorkflowStartOptions};

/// How often the catalog's inputs are checked for a change.
pub const CATALOG_WATCH_EVERY: Duration = Duration::from_secs(2);

/// Start the two site workflows unless they run already. Failures are logged, not fatal: the
/// worker still serves host workflows, and the next worker start tries again.
pub async fn ensure_started(client: &Client, site: &SiteConfig) {
    let queue = site.temporal.task_queue.clone();
    let manager = WorkflowStartOptions::new(queue.clone(), MACHINE_UPDATE_MANAGER_ID.to_string())
        .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
        .static_summary(format!("site scheduler of {}", site.site.name))
        .build();
    report(
        "machine update manager",
        client.start_workflow(MachineUpdateManagerWorkflow::run, ManagerInput::default(), manager).await.map(|_| ()),
    );
    let explorer = WorkflowStartOptions::new(queue, SITE_EXPLORER_ID.to_string())
        .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
        .static_summary(format!("inventory crawl of {}", site.site.name))
        .build();
    report(
        "site explorer",
        client.start_workflow(SiteExplorerWorkflow::run, ExplorerInput::default(), explorer).await.map(|_| ()),
    );
}

fn report(what: &str, result: Result<(), WorkflowStartError>) {
    match result {
        Ok(()) | Err(WorkflowStartError::AlreadyStarted { .. }) => tracing::info!("{what} is running"),
        Err(e) => tracing::error!(error = %e, "could not start the {what}"),
    }
}

/// Until `stopped` turns true: reload the catalog when its inputs change and wake the scheduler
/// (seed: the desired snapshot refreshes when the runtime configuration or the firmware directory
/// changes).
pub async fn watch_catalog(client: &Client, catalog: &CatalogSource, mut stopped: tokio::sync::watch::Receiver<bool>) {
    let mut last = catalog.current().await.ok();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(CATALOG_WATCH_EVERY) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
        let Ok(now) = catalog.current().await else { continue };
        if last.as_ref().is_some_and(|l| !Arc::ptr_eq(l, &now)) {
            site_link::wake_manager(client, "the catalog changed").await;
        }
        last = Some(now);
    }
}
