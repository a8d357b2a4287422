//! The site workflows a worker keeps alive: the Machine Update Manager, the Site Explorer and the
//! Site Notifier (webhook deliveries) (one each per namespace and task queue; their workflow IDs make them singletons, so every
//! worker replica may run `keep_running`: it starts them, with backoff while Temporal refuses or
//! is away, and starts again one that was terminated, failed or ended; `readiness` is what
//! `/readyz` says of them), and the catalog watch that wakes the scheduler when
//! the firmware directory or the runtime catalog changes; and, at start, the push of the site's
//! current settings to host workflows that wait on them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hostfw_activities::{site_link, CatalogSource};
use hostfw_model::{error_chain, SiteConfig};
use hostfw_workflows::machine_update_manager::ManagerInput;
use hostfw_workflows::names::{MACHINE_UPDATE_MANAGER_ID, SITE_EXPLORER_ID, SITE_NOTIFIER_ID};
use hostfw_workflows::site_explorer::ExplorerInput;
use hostfw_workflows::site_notifier::NotifierInput;
use hostfw_workflows::{MachineUpdateManagerWorkflow, SiteExplorerWorkflow, SiteNotifierWorkflow};
use temporalio_client::errors::{WorkflowInteractionError, WorkflowStartError};
use temporalio_client::{
    Client, UntypedWorkflow, WorkflowDescribeOptions, WorkflowExecutionStatus, WorkflowIdConflictPolicy,
    WorkflowIdReusePolicy, WorkflowStartOptions,
};

use crate::tuning::{SITE_WORKFLOWS_CHECK_EVERY, SITE_WORKFLOW_CALL_TIMEOUT, STARTUP_RETRY_FIRST, STARTUP_RETRY_MAX};

/// How often the catalog's inputs are checked for a change.
pub const CATALOG_WATCH_EVERY: Duration = Duration::from_secs(2);

/// One of the site workflows: what an operator calls it and its (singleton) workflow ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteWorkflow {
    /// For log lines and `/readyz`: "machine update manager", "site explorer".
    pub what: &'static str,
    /// Its workflow ID.
    pub id: &'static str,
}

/// The Machine Update Manager (the site scheduler).
pub const MANAGER: SiteWorkflow = SiteWorkflow { what: "machine update manager", id: MACHINE_UPDATE_MANAGER_ID };
/// The Site Explorer (the inventory crawl).
pub const EXPLORER: SiteWorkflow = SiteWorkflow { what: "site explorer", id: SITE_EXPLORER_ID };
/// The Site Notifier (webhook deliveries).
pub const NOTIFIER: SiteWorkflow = SiteWorkflow { what: "site notifier", id: SITE_NOTIFIER_ID };
/// All of them, in the order they are started and reported.
pub const SITE_WORKFLOWS: [SiteWorkflow; 3] = [MANAGER, EXPLORER, NOTIFIER];

/// What this worker's keeper last failed to do for each site workflow (empty: nothing failed),
/// for `/readyz`. Cheap to clone; clones share the state.
#[derive(Debug, Clone, Default)]
pub struct KeeperStatus(Arc<Mutex<BTreeMap<&'static str, String>>>);

impl KeeperStatus {
    fn set(&self, wf: SiteWorkflow, problem: Option<String>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match problem {
            Some(p) => map.insert(wf.id, p),
            None => map.remove(wf.id),
        };
    }

    /// The last failed attempt to start `wf`, if the latest attempt failed.
    pub fn problem(&self, wf: SiteWorkflow) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(wf.id).cloned()
    }
}

/// What Temporal says of a site workflow's latest run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteWorkflowState {
    /// It runs (or has just continued as new).
    Running,
    /// It was never started in this namespace.
    NotStarted,
    /// Its latest run ended: how (`TERMINATED`, `FAILED`, ...).
    Closed(String),
}

/// Describe `wf`'s latest run (one `DescribeWorkflowExecution` call).
pub async fn state_of(client: &Client, wf: SiteWorkflow) -> Result<SiteWorkflowState, WorkflowInteractionError> {
    let handle = client.get_workflow_handle::<UntypedWorkflow>(wf.id.to_string());
    match handle.describe(WorkflowDescribeOptions::default()).await {
        Ok(d) => Ok(match d.status() {
            WorkflowExecutionStatus::Running | WorkflowExecutionStatus::ContinuedAsNew => SiteWorkflowState::Running,
            other => SiteWorkflowState::Closed(status_name(other)),
        }),
        Err(WorkflowInteractionError::NotFound(_)) => Ok(SiteWorkflowState::NotStarted),
        Err(e) => Err(e),
    }
}

fn status_name(status: WorkflowExecutionStatus) -> String {
    format!("{status:?}").to_uppercase()
}

/// What [`ensure_running`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ensured {
    /// It was running already.
    Running,
    /// It was not running (`was`: never started, or how its last run ended) and runs now (this
    /// worker or another one started it).
    Started { was: SiteWorkflowState },
}

/// Start `wf` unless it runs. Every worker may call this at once: the workflow ID conflict policy
/// `UseExisting` makes all but one start a no-op, and the reuse policy `AllowDuplicate` lets a
/// terminated, failed or ended run be replaced by a new one.
pub async fn ensure_running(client: &Client, site: &SiteConfig, wf: SiteWorkflow) -> Result<Ensured, String> {
    let state = state_of(client, wf).await.map_err(|e| format!("cannot read its state: {}", error_chain(&e)))?;
    if state == SiteWorkflowState::Running {
        return Ok(Ensured::Running);
    }
    let options = |summary: String| {
        WorkflowStartOptions::new(site.temporal.task_queue.clone(), wf.id.to_string())
            .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
            .id_reuse_policy(WorkflowIdReusePolicy::AllowDuplicate)
            .static_summary(summary)
            .build()
    };
    let started = if wf == MANAGER {
        let opts = options(format!("site scheduler of {}", site.site.name));
        client.start_workflow(MachineUpdateManagerWorkflow::run, ManagerInput::default(), opts).await.map(|_| ())
    } else if wf == EXPLORER {
        let opts = options(format!("inventory crawl of {}", site.site.name));
        client.start_workflow(SiteExplorerWorkflow::run, ExplorerInput::default(), opts).await.map(|_| ())
    } else {
        let opts = options(format!("webhook notifications of {}", site.site.name));
        client.start_workflow(SiteNotifierWorkflow::run, NotifierInput::default(), opts).await.map(|_| ())
    };
    match started {
        Ok(()) | Err(WorkflowStartError::AlreadyStarted { .. }) => Ok(Ensured::Started { was: state }),
        Err(e) => Err(format!("could not start it: {}", error_chain(&e))),
    }
}

/// Until `stopped` turns true: keep every site workflow running. Every
/// `tuning::SITE_WORKFLOWS_CHECK_EVERY` each one's latest run is described and, when it is not
/// running (never started, terminated by hand, failed, ended), started again; while Temporal
/// refuses or is away the attempts back off (`STARTUP_RETRY_FIRST` doubling to
/// `STARTUP_RETRY_MAX`). Each failure is a WARN and the latest one is kept in `status` for
/// `/readyz`.
pub async fn keep_running(
    client: &Client,
    site: &SiteConfig,
    status: &KeeperStatus,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let mut backoff = STARTUP_RETRY_FIRST;
    let mut first = true;
    loop {
        let mut failed = false;
        for wf in SITE_WORKFLOWS {
            let attempt = tokio::time::timeout(SITE_WORKFLOW_CALL_TIMEOUT, ensure_running(client, site, wf))
                .await
                .unwrap_or_else(|_| Err(format!("Temporal did not answer within {SITE_WORKFLOW_CALL_TIMEOUT:?}")));
            match attempt {
                Ok(Ensured::Running) if first => tracing::info!("{} is running", wf.what),
                Ok(Ensured::Running) => {}
                Ok(Ensured::Started { was: SiteWorkflowState::NotStarted }) => {
                    tracing::info!("{} is running", wf.what)
                }
                Ok(Ensured::Started { was }) => {
                    let how = match was {
                        SiteWorkflowState::Closed(how) => how,
                        other => format!("{other:?}"),
                    };
                    tracing::warn!(workflow_id = wf.id, ended = %how, "the {} had ended ({how}); started it again", wf.what)
                }
                Err(problem) => {
                    failed = true;
                    tracing::warn!(workflow_id = wf.id, retry_in = ?backoff, "the {} is not running and {problem}; retrying", wf.what);
                    status.set(wf, Some(problem));
                    continue;
                }
            }
            status.set(wf, None);
        }
        first = false;
        let wait = if failed {
            let wait = backoff;
            backoff = (backoff * 2).min(STARTUP_RETRY_MAX);
            wait
        } else {
            backoff = STARTUP_RETRY_FIRST;
            SITE_WORKFLOWS_CHECK_EVERY
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
    }
}

/// `/readyz`'s view of the site workflows: `Err` names each one that does not run and why
/// (its state, and the keeper's last failed start if any). All are described at once.
pub async fn readiness(client: &Client, status: &KeeperStatus) -> Result<(), String> {
    let states =
        futures::future::join_all(SITE_WORKFLOWS.map(|wf| async move { (wf, state_of(client, wf).await) })).await;
    let mut problems = Vec::new();
    for (wf, state) in states {
        let why = match state {
            Ok(SiteWorkflowState::Running) => continue,
            Ok(SiteWorkflowState::NotStarted) => "not started yet".to_string(),
            Ok(SiteWorkflowState::Closed(how)) => format!("not running: its last run ended {how}"),
            Err(e) => format!("cannot read its state: {}", error_chain(&e)),
        };
        let last = status.problem(wf).map(|p| format!(" (last attempt: {p})")).unwrap_or_default();
        problems.push(format!("{}: {why}; the worker starts it again{last}", wf.what));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
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
