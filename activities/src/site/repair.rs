//! Repair: every way the site database and Temporal can disagree about a host, found and fixed
//! in one place (`hostfw doctor`, and the scheduler pass for the one case it repairs by itself).
//!
//! A request is the site's promise that a host is being updated; its `HostReprovision` workflow
//! keeps that promise. What can break it, and the fix:
//! - a request whose workflow is not running (failed, terminated by hand, lost with a namespace,
//!   or never started): the workflow is started again and resumes from fresh inventory (protect is
//!   idempotent and the host's steady state is derived from its instance);
//! - a host left protected (state HostReprovision, or the `host-fw-update` health report) with no
//!   request: nothing will ever restore it, so it is restored to its steady state (Assigned when
//!   it carries an instance, Ready otherwise) and the health report removed;
//! - a running workflow with no request: explained, not fixed (its request was deleted by hand, or
//!   it was started outside hostfw); the operator decides whether to let it finish;
//! - a tenant approval stored on a request whose workflow still waits for approval: the
//!   workflow is told again;
//! - an upload slot whose live lease belongs to a workflow that completed or failed (its release
//!   was lost, e.g. to a site-database restart, and the lease would hold for the whole BMC task
//!   bound): the slot is given back, fenced by its generation so a newer holder keeps its own.
//!   A slot of a terminated or cancelled workflow is left to its lease: the BMC may still be
//!   flashing what it uploaded.
//!
//! Every fix first re-reads the finding's truth ([`recheck`]) and does nothing when it no longer
//! holds. It must not decide anything about drift or gates, and never touches a host whose
//! workflow runs, except to signal it.

use std::collections::{BTreeMap, BTreeSet};

use futures::StreamExt;
use hostfw_model::{HostState, HostSubstate};
use hostfw_store::{now_ms, Store, StoreError};
use hostfw_workflows::{host_reprovision_workflow_id, HostReprovisionWorkflow};
use temporalio_client::errors::WorkflowInteractionError;
use temporalio_client::{
    Client, WorkflowDescribeOptions, WorkflowExecutionStatus, WorkflowListOptions, WorkflowQueryOptions,
    WorkflowSignalOptions,
};

use crate::host::host_state::HEALTH_SOURCE;
use crate::site::site_link::{adopt_request, StartError};
pub use crate::tunables::DOCTOR_SETTLE_MS;
pub use crate::tunables::SETTLE_MS;
use crate::Deps;

/// One disagreement between the site database and Temporal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The request's workflow is not running: `workflow` says what Temporal knows of it.
    RequestWithoutWorkflow { machine_id: String, started: bool, workflow: String },
    /// The host is protected but nothing will restore it.
    ProtectedWithoutRequest { machine_id: String, state: HostState, health_report: bool, instance: bool },
    /// A workflow runs for a host that has no request.
    WorkflowWithoutRequest { machine_id: String, workflow_id: String },
    /// The tenant's approval is stored but the workflow still waits for it.
    ApprovalNotHeard { machine_id: String },
    /// A live upload-slot lease held for a workflow that completed or failed.
    SlotAfterWorkflow { machine_id: String, slot: u32, holder: String, generation: i64, workflow: String },
}

impl Finding {
    pub fn machine_id(&self) -> &str {
        match self {
            Finding::RequestWithoutWorkflow { machine_id, .. }
            | Finding::ProtectedWithoutRequest { machine_id, .. }
            | Finding::WorkflowWithoutRequest { machine_id, .. }
            | Finding::ApprovalNotHeard { machine_id }
            | Finding::SlotAfterWorkflow { machine_id, .. } => machine_id,
        }
    }

    /// Short name of the kind, for tables and JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Finding::RequestWithoutWorkflow { .. } => "request-without-workflow",
            Finding::ProtectedWithoutRequest { .. } => "protected-without-request",
            Finding::WorkflowWithoutRequest { .. } => "workflow-without-request",
            Finding::ApprovalNotHeard { .. } => "approval-not-heard",
            Finding::SlotAfterWorkflow { .. } => "slot-after-workflow",
        }
    }

    /// What is wrong, in one line.
    pub fn problem(&self) -> String {
        match self {
            Finding::RequestWithoutWorkflow { started, workflow, .. } => format!(
                "has a {} reprovisioning request but its workflow is {workflow}: nothing will finish it",
                if *started { "started" } else { "pending" }
            ),
            Finding::ProtectedWithoutRequest { state, health_report, .. } => format!(
                "is protected (state {state}{}) but has no request: nothing will restore it",
                if *health_report { ", host-fw-update health report" } else { "" }
            ),
            Finding::WorkflowWithoutRequest { workflow_id, .. } => {
                format!("has a running workflow {workflow_id} but no request")
            }
            Finding::ApprovalNotHeard { .. } => {
                "has its tenant's approval stored, but its workflow still waits for approval".to_string()
            }
            Finding::SlotAfterWorkflow { slot, holder, workflow, .. } => {
                format!("holds upload slot {slot} ({holder}) but its workflow is {workflow}: no other host can use it")
            }
        }
    }

    /// What `--fix` does, or why it does nothing.
    pub fn remedy(&self) -> String {
        match self {
            Finding::RequestWithoutWorkflow { .. } => {
                "start the workflow again; it resumes from fresh inventory".to_string()
            }
            Finding::ProtectedWithoutRequest { instance, .. } => format!(
                "restore the host to {} and remove the health report",
                HostState::HostReprovision.steady(*instance)
            ),
            Finding::WorkflowWithoutRequest { workflow_id, .. } => format!(
                "not fixed automatically: let it finish, or stop it with `temporal workflow terminate --workflow-id {workflow_id}`"
            ),
            Finding::ApprovalNotHeard { .. } => "signal the approval to the workflow again".to_string(),
            Finding::SlotAfterWorkflow { slot, .. } => format!("give upload slot {slot} back"),
        }
    }

    /// Whether `--fix` changes anything for it.
    pub fn fixable(&self) -> bool {
        !matches!(self, Finding::WorkflowWithoutRequest { .. })
    }
}

/// Why a repair step could not be done. `Display` names the step; the cause is the source
/// (render with `hostfw_model::error_chain`).
#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    #[error("site database")]
    Store(#[from] StoreError),
    #[error("asking Temporal about the workflow of {machine_id}")]
    Describe {
        machine_id: String,
        #[source]
        source: WorkflowInteractionError,
    },
    #[error("listing the running workflows")]
    List(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("starting the workflow again")]
    Start(#[from] StartError),
    #[error("signalling the workflow of {machine_id}")]
    Signal {
        machine_id: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// What Temporal says of a host's workflow.
async fn workflow_status(client: &Client, machine_id: &str) -> Result<Option<WorkflowExecutionStatus>, RepairError> {
    let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
    match handle.describe(WorkflowDescribeOptions::default()).await {
        Ok(d) => Ok(Some(d.status())),
        Err(WorkflowInteractionError::NotFound(_)) => Ok(None),
        Err(source) => Err(RepairError::Describe { machine_id: machine_id.to_string(), source }),
    }
}

/// Machine ids of the running `HostReprovision` workflows (visibility; may lag a little).
async fn running_workflows(client: &Client) -> Result<BTreeMap<String, String>, RepairError> {
    let mut list = client.list_workflows(
        "WorkflowType = 'HostReprovision' AND ExecutionStatus = 'Running'",
        WorkflowListOptions::builder().build(),
    );
    let mut running = BTreeMap::new();
    while let Some(w) = list.next().await {
        let w = w.map_err(|e| RepairError::List(Box::new(e)))?;
        let id = w.id().to_string();
        if let Some(machine) = id.strip_prefix(&host_reprovision_workflow_id("")) {
            running.insert(machine.to_string(), id.clone());
        }
    }
    Ok(running)
}

/// Requests older than `settle_ms` whose workflow is not running (confirmed one by one, since
/// visibility may lag).
pub async fn requests_without_workflow(
    store: &Store,
    client: &Client,
    now: i64,
    settle_ms: i64,
) -> Result<Vec<Finding>, RepairError> {
    let requests = store.request_list().await?;
    let settled: Vec<_> = requests.iter().filter(|r| now - r.requested_at_ms > settle_ms).collect();
    if settled.is_empty() {
        // Nothing old enough to judge: no need to ask Temporal.
        return Ok(Vec::new());
    }
    let running = running_workflows(client).await?;
    let mut found = Vec::new();
    for r in settled.into_iter().filter(|r| !running.contains_key(&r.machine_id)) {
        let status = workflow_status(client, &r.machine_id).await?;
        let workflow = match status {
            Some(WorkflowExecutionStatus::Running) => continue,
            Some(s) => format!("closed ({s:?})"),
            None => "not found".to_string(),
        };
        found.push(Finding::RequestWithoutWorkflow {
            machine_id: r.machine_id.clone(),
            started: r.started_at_ms.is_some(),
            workflow,
        });
    }
    Ok(found)
}

/// The workflow id an upload-slot holder names: holders are `<workflow id>/<component>/<artifact index>`.
fn holder_workflow(holder: &str) -> Option<&str> {
    let mut parts = holder.rsplitn(3, '/');
    let (_index, _component) = (parts.next()?, parts.next()?);
    parts.next()
}

/// Whether a closed workflow's slot can be given back now: its activities are over (it completed
/// or failed). A terminated, cancelled or timed-out workflow may have left a BMC flashing what
/// it uploaded; its slot keeps its lease.
fn slot_free_after(status: WorkflowExecutionStatus) -> bool {
    matches!(status, WorkflowExecutionStatus::Completed | WorkflowExecutionStatus::Failed)
}

/// Live upload-slot leases whose holder's workflow completed or failed.
pub async fn slots_after_workflow(store: &Store, client: &Client) -> Result<Vec<Finding>, RepairError> {
    let now = store.db_now_ms().await?;
    let prefix = host_reprovision_workflow_id("");
    let mut found = Vec::new();
    for held in store.upload_slots_held().await?.into_iter().filter(|h| h.expires_at_ms >= now) {
        let Some(machine_id) = holder_workflow(&held.holder).and_then(|w| w.strip_prefix(prefix.as_str())) else {
            continue;
        };
        match workflow_status(client, machine_id).await? {
            Some(status) if slot_free_after(status) => found.push(Finding::SlotAfterWorkflow {
                machine_id: machine_id.to_string(),
                slot: held.slot,
                holder: held.holder.clone(),
                generation: held.generation,
                workflow: format!("closed ({status:?})"),
            }),
            _ => {}
        }
    }
    Ok(found)
}

/// Every disagreement, by machine id (requests younger than `settle_ms` are not judged).
pub async fn find(store: &Store, client: &Client, settle_ms: i64) -> Result<Vec<Finding>, RepairError> {
    let now = now_ms();
    let mut found = requests_without_workflow(store, client, now, settle_ms).await?;
    let requests = store.request_list().await?;
    let requested: BTreeSet<&str> = requests.iter().map(|r| r.machine_id.as_str()).collect();
    let reports = store.health_report_list().await?;
    let reported: BTreeSet<&str> =
        reports.iter().filter(|h| h.source == HEALTH_SOURCE).map(|h| h.machine_id.as_str()).collect();
    let running = running_workflows(client).await?;
    for m in store.machine_list().await? {
        if requested.contains(m.id.as_str()) {
            continue;
        }
        let protected = m.state == HostState::HostReprovision;
        let health_report = reported.contains(m.id.as_str());
        if let Some(workflow_id) = running.get(&m.id) {
            found.push(Finding::WorkflowWithoutRequest { machine_id: m.id.clone(), workflow_id: workflow_id.clone() });
        } else if protected || health_report {
            found.push(Finding::ProtectedWithoutRequest {
                machine_id: m.id.clone(),
                state: m.state,
                health_report,
                instance: m.instance_id.is_some(),
            });
        }
    }
    for r in requests.iter().filter(|r| r.user_approval && running.contains_key(&r.machine_id)) {
        let handle = client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(&r.machine_id));
        if let Ok(status) = handle.query(HostReprovisionWorkflow::status, (), WorkflowQueryOptions::default()).await {
            if status.substate == HostSubstate::WaitingForApproval {
                found.push(Finding::ApprovalNotHeard { machine_id: r.machine_id.clone() });
            }
        }
    }
    found.extend(slots_after_workflow(store, client).await?);
    found.sort_by(|a, b| (a.machine_id(), a.kind()).cmp(&(b.machine_id(), b.kind())));
    Ok(found)
}

/// What [`fix`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fixed {
    /// The remedy was applied: what was done.
    Done(String),
    /// The finding no longer held when it was re-checked (the state changed between listing and
    /// fixing): nothing was done, and why.
    NoLongerHolds(String),
}

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fixed::Done(done) => f.write_str(done),
            Fixed::NoLongerHolds(why) => write!(f, "skipped, no longer true: {why}; nothing was done"),
        }
    }
}

/// Whether `finding` still holds, read again now: `None` when it does, else what changed. A
/// finding listed a moment ago may have resolved itself since (a workflow restarted by the
/// scheduler, a request cleared or made, an approval heard); acting on it then would do harm
/// (restoring a host a new update just protected, starting a second run).
pub async fn recheck(store: &Store, client: &Client, finding: &Finding) -> Result<Option<String>, RepairError> {
    let machine_id = finding.machine_id();
    let request = store.request_get(machine_id).await?;
    let running = || async {
        Ok::<_, RepairError>(workflow_status(client, machine_id).await? == Some(WorkflowExecutionStatus::Running))
    };
    Ok(match finding {
        Finding::RequestWithoutWorkflow { .. } => {
            if request.is_none() {
                Some("the request is gone".to_string())
            } else if running().await? {
                Some("its workflow runs now".to_string())
            } else {
                None
            }
        }
        Finding::ProtectedWithoutRequest { .. } => {
            let protected = store.machine_get(machine_id).await?.is_some_and(|m| m.state == HostState::HostReprovision);
            let reported = store.health_reports_for(machine_id).await?.iter().any(|h| h.source == HEALTH_SOURCE);
            if request.is_some() {
                Some("it has a reprovisioning request now".to_string())
            } else if !protected && !reported {
                Some("it is no longer protected".to_string())
            } else if running().await? {
                Some("a workflow runs for it now".to_string())
            } else {
                None
            }
        }
        Finding::WorkflowWithoutRequest { .. } => None,
        Finding::ApprovalNotHeard { .. } => {
            if !request.as_ref().is_some_and(|r| r.user_approval) {
                Some("no approval is stored on a request any more".to_string())
            } else {
                let handle =
                    client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
                match handle.query(HostReprovisionWorkflow::status, (), WorkflowQueryOptions::default()).await {
                    Ok(status) if status.substate == HostSubstate::WaitingForApproval => None,
                    Ok(_) => Some("its workflow no longer waits for approval".to_string()),
                    Err(_) => Some("its workflow does not answer (not running any more?)".to_string()),
                }
            }
        }
        Finding::SlotAfterWorkflow { slot, holder, generation, .. } => {
            let now = store.db_now_ms().await?;
            let same = store.upload_slots_held().await?.into_iter().any(|h| {
                h.slot == *slot && &h.holder == holder && h.generation == *generation && h.expires_at_ms >= now
            });
            if !same {
                Some("the slot was released or taken by another holder".to_string())
            } else if !workflow_status(client, machine_id).await?.is_some_and(slot_free_after) {
                Some("its workflow runs again (or was not judged finished)".to_string())
            } else {
                None
            }
        }
    })
}

/// Apply the remedy of `finding` after [`recheck`]ing it; returns what was done, or why
/// nothing was.
pub async fn fix(deps: &Deps, client: &Client, finding: &Finding, actor: &str) -> Result<Fixed, RepairError> {
    if let Some(changed) = recheck(&deps.store, client, finding).await? {
        return Ok(Fixed::NoLongerHolds(changed));
    }
    apply(deps, client, finding, actor).await.map(Fixed::Done)
}

async fn apply(deps: &Deps, client: &Client, finding: &Finding, actor: &str) -> Result<String, RepairError> {
    let store = &deps.store;
    match finding {
        Finding::RequestWithoutWorkflow { machine_id, .. } => {
            let Some(request) = store.request_get(machine_id).await? else {
                return Ok("the request is gone meanwhile: nothing to do".to_string());
            };
            let id = adopt_request(&deps.site.current(), store, client, &request).await?;
            Ok(format!("workflow {id} started again"))
        }
        Finding::ProtectedWithoutRequest { machine_id, instance, .. } => {
            let state = HostState::HostReprovision.steady(*instance);
            let message = format!("repaired by {actor}: protected without a request, restored to {state}");
            store.machine_set_state(machine_id, state, None, &message).await?;
            store.health_report_remove(machine_id, HEALTH_SOURCE).await?;
            Ok(format!("restored to {state}, health report removed"))
        }
        Finding::WorkflowWithoutRequest { .. } => Ok("left alone".to_string()),
        Finding::ApprovalNotHeard { machine_id } => {
            client
                .get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id))
                .signal(HostReprovisionWorkflow::approve_updates, actor.to_string(), WorkflowSignalOptions::default())
                .await
                .map_err(|e| RepairError::Signal { machine_id: machine_id.clone(), source: Box::new(e) })?;
            Ok("approval signalled again".to_string())
        }
        Finding::SlotAfterWorkflow { slot, holder, generation, .. } => {
            // Fenced: a newer grant of the slot (another generation) is left alone.
            let grant = hostfw_store::SlotGrant { slot: *slot, generation: *generation };
            store.upload_slot_release(grant, holder).await?;
            Ok(format!("upload slot {slot} given back"))
        }
    }
}
