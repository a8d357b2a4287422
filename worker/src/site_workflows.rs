//! The site workflows a worker keeps alive: the Machine Update Manager and the Site Explorer
//! (one each per namespace and task queue; their workflow IDs make them singletons, so every
//! worker replica may call `ensure_started`), and the catalog watch that wakes the scheduler when
//! the firmware directory or the runtime catalog changes; and, at start, the push of the site's
//! current settings to host workflows that wait on them.

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

/// Tell every host workflow that waits on a site setting (for its tenant's approval, or in
/// FailedFirmwareUpgrade for its retry interval or budget) to read the settings again: this
/// worker's config may differ from the one the request was made under (issue: a period
/// configured later must release hosts already waiting). Best effort, logged.
pub async fn push_settings_to_waiting_hosts(client: &Client) {
    use futures::StreamExt;
    let query = format!(
        "WorkflowType = 'HostReprovision' AND ExecutionStatus = 'Running' AND {} IN ('{}', '{}')",
        hostfw_workflows::search_attributes::SUBSTATE.name(),
        hostfw_model::HostSubstate::WaitingForApproval,
        hostfw_model::HostSubstate::FailedFirmwareUpgrade,
    );
    let mut list = client.list_workflows(query, temporalio_client::WorkflowListOptions::builder().build());
    let mut told = 0u32;
    while let Some(w) = list.next().await {
        let w = match w {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!(error = %e, "could not list the host workflows waiting on settings");
                return;
            }
        };
        let handle = client.get_workflow_handle::<hostfw_workflows::HostReprovisionWorkflow>(w.id().to_string());
        let signal = handle
            .signal(
                hostfw_workflows::HostReprovisionWorkflow::settings_changed,
                "worker start".to_string(),
                temporalio_client::WorkflowSignalOptions::default(),
            )
            .await;
        match signal {
            Ok(()) => told += 1,
            Err(e) => tracing::debug!(workflow = %w.id(), error = %e, "could not push the settings"),
        }
    }
    if told > 0 {
        tracing::info!(workflows = told, "told waiting host workflows to read the site settings again");
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
