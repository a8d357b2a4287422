//! The activities' link to the site's Temporal namespace: waking the site scheduler and starting
//! a host's reprovisioning (request row + `HostReprovision` workflow) the way the CLI does.
//!
//! Owns the one request-then-start sequence: the request row is written first and the workflow
//! started second; if the start fails the row is removed again, so nothing is half-written. A
//! process that dies between the two leaves a request without a workflow: `adopt_request` starts
//! it (the scheduler does so each pass). The workflow ID is the per-host lock. It must not choose
//! hosts (that is the scheduler's gates).

use hostfw_model::SiteConfig;
use hostfw_store::{GateFence, NewRequest, RequestCreate, Store};
use hostfw_workflows::host_reprovision::{HostReprovisionInput, ReprovisionSettings};
use hostfw_workflows::names::MACHINE_UPDATE_MANAGER_ID;
use hostfw_workflows::{
    host_reprovision_workflow_id, search_attributes as sa, HostReprovisionWorkflow, MachineUpdateManagerWorkflow,
};
use temporalio_client::errors::WorkflowStartError;
use temporalio_client::{Client, WorkflowIdConflictPolicy, WorkflowSignalOptions, WorkflowStartOptions};
use temporalio_common::search_attributes::SearchAttributes;

/// Initiator recorded on requests the scheduler creates (NICo's name).
pub const INITIATOR_AUTOMATED: &str = "Automated";

/// Why a request could not be made.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("machine {0} is not registered (see `hostfw machine list`)")]
    UnknownMachine(String),
    #[error(
        "host {machine} already has a reprovisioning request (initiator {initiator}, {started}); refusing a second one"
    )]
    AlreadyRequested { machine: String, initiator: String, started: &'static str },
    #[error("a reprovisioning workflow is already running for host {machine} ({workflow_id}); refusing a second one")]
    AlreadyRunning { machine: String, workflow_id: String },
    #[error(transparent)]
    Store(#[from] hostfw_store::StoreError),
    #[error("starting the reprovisioning workflow of {machine}: {message}")]
    Temporal { machine: String, message: String },
}

/// What guards a request beyond the failure-domain caps, which hold whoever asks.
#[derive(Debug)]
pub enum Guard<'a> {
    /// The rollout's brakes hold (the scheduler, and an operator who did not pass
    /// `--ignore-rollout-gates`): refused (`StoreError::Frozen`) when a freeze in force covers the
    /// host, and (`StoreError::GateMoved`) when another write moved the gate fence since it was
    /// read, before the view the decision came from; both read in the request's own transaction.
    Gates(&'a mut GateFence),
    /// `--ignore-rollout-gates`, and tools that request hosts on purpose: the caps only.
    CapsOnly,
}

/// Create the request for `machine_id` and start its workflow; returns the workflow ID. The
/// request is refused (`StoreError::LabelCapReached`) when it would exceed a failure-domain cap
/// (`[machine_updater] max_concurrent_per_label`), whoever asks, and as `guard` says.
pub async fn request_and_start(
    site: &SiteConfig,
    store: &Store,
    client: &Client,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
    guard: Guard<'_>,
) -> Result<String, StartError> {
    claim(site, store, machine_id, initiator, message.clone(), guard).await?;
    start_claimed(site, store, client, machine_id, initiator, message).await
}

/// The first half of [`request_and_start`]: the request row only, under the same guards. The
/// caller starts its workflow with [`start_claimed`] (the scheduler claims every host of its
/// plan first, so its requests land close to its read of the site).
pub async fn claim(
    site: &SiteConfig,
    store: &Store,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
    guard: Guard<'_>,
) -> Result<(), StartError> {
    if store.machine_get(machine_id).await?.is_none() {
        return Err(StartError::UnknownMachine(machine_id.to_string()));
    }
    let new = NewRequest {
        machine_id: machine_id.to_string(),
        initiator: initiator.to_string(),
        update_message: message,
        workflow_id: Some(host_reprovision_workflow_id(machine_id)),
    };
    let caps = &site.machine_updater.max_concurrent_per_label;
    let (honour_freezes, fence) = match guard {
        Guard::Gates(fence) => (true, Some(fence)),
        Guard::CapsOnly => (false, None),
    };
    if let RequestCreate::Exists(existing) = store.request_create_guarded(&new, caps, honour_freezes, fence).await? {
        return Err(StartError::AlreadyRequested {
            machine: machine_id.to_string(),
            initiator: existing.initiator,
            started: if existing.started_at_ms.is_some() { "started" } else { "not started" },
        });
    }
    Ok(())
}

/// The second half of [`request_and_start`]: starts the workflow of the request [`claim`] wrote;
/// if it cannot start, the request is removed again (nothing half-written).
pub async fn start_claimed(
    site: &SiteConfig,
    store: &Store,
    client: &Client,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
) -> Result<String, StartError> {
    match start_workflow(site, store, client, machine_id, initiator, message, WorkflowIdConflictPolicy::Fail).await {
        Ok(id) => Ok(id),
        Err(e) => {
            store.request_delete(machine_id).await?;
            Err(e)
        }
    }
}

/// Start the workflow of a request that has none running: a process that wrote the request row
/// and died before the workflow started leaves such an orphan, and nothing else would ever start
/// it (the host counts as requested). A workflow that is running already is left alone.
pub async fn adopt_request(
    site: &SiteConfig,
    store: &Store,
    client: &Client,
    request: &hostfw_store::Request,
) -> Result<String, StartError> {
    let policy = WorkflowIdConflictPolicy::UseExisting;
    start_workflow(site, store, client, &request.machine_id, &request.initiator, request.update_message.clone(), policy)
        .await
}

/// Start `machine_id`'s `HostReprovision` workflow for its stored request.
async fn start_workflow(
    site: &SiteConfig,
    store: &Store,
    client: &Client,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
    policy: WorkflowIdConflictPolicy,
) -> Result<String, StartError> {
    let Some(machine) = store.machine_get(machine_id).await? else {
        return Err(StartError::UnknownMachine(machine_id.to_string()));
    };
    let settings = ReprovisionSettings::from_site(site);
    let assigned = machine.state.is_assigned(machine.instance_id.is_some());
    let workflow_id = host_reprovision_workflow_id(machine_id);
    let input = HostReprovisionInput {
        machine_id: machine_id.to_string(),
        initiator: initiator.to_string(),
        update_message: message.clone(),
        settings,
        assigned,
        instance_id: machine.instance_id.clone(),
        carried: None,
    };
    let summary = match &message {
        Some(m) => format!("firmware reprovisioning of {machine_id}: {m}"),
        None => format!("firmware reprovisioning of {machine_id}"),
    };
    let options = WorkflowStartOptions::new(site.temporal.task_queue.clone(), workflow_id.clone())
        .id_conflict_policy(policy)
        .search_attributes(SearchAttributes::new([sa::MACHINE_ID.value_set(machine_id.to_string())]))
        .static_summary(summary)
        .build();
    match client.start_workflow(HostReprovisionWorkflow::run, input, options).await {
        Ok(_) => Ok(workflow_id),
        Err(WorkflowStartError::AlreadyStarted { .. }) => {
            Err(StartError::AlreadyRunning { machine: machine_id.to_string(), workflow_id })
        }
        Err(other) => Err(StartError::Temporal { machine: machine_id.to_string(), message: other.to_string() }),
    }
}

/// Ask the site scheduler for a pass now. Best effort: a scheduler that is not running (yet)
/// runs a pass when it starts, so a failure is only logged.
pub async fn wake_manager(client: &Client, reason: &str) {
    let handle = client.get_workflow_handle::<MachineUpdateManagerWorkflow>(MACHINE_UPDATE_MANAGER_ID);
    if let Err(e) =
        handle.signal(MachineUpdateManagerWorkflow::wake, reason.to_string(), WorkflowSignalOptions::default()).await
    {
        tracing::debug!(error = %e, reason, "could not wake the machine update manager");
    }
}
