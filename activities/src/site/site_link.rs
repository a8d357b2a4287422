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
use hostfw_workflows::host_reprovision::{HostReprovisionInput, PowerDrainWaits, ReprovisionSettings};
use hostfw_workflows::names::MACHINE_UPDATE_MANAGER_ID;
use hostfw_workflows::waits::BmcWaits;
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

/// Host workflow settings from the site config.
pub fn reprovision_settings(site: &SiteConfig) -> ReprovisionSettings {
    let hr = &site.host_reprovision;
    let fg = &site.firmware_global;
    ReprovisionSettings {
        verify_poll_interval_secs: hr.verify_poll_interval.as_secs().max(1),
        verify_max_polls: hr.verify_max_polls,
        task_timeout_secs: site.redfish.task_timeout.as_secs().max(1),
        bmc_healthy_reads: hr.bmc_healthy_reads,
        retry_interval_secs: fg.host_firmware_upgrade_retry_interval.as_secs().max(1),
        max_retries: hr.max_retries,
        max_reactivations: hr.max_reactivations,
        max_upload_retries: hr.max_upload_retries,
        requires_manual_upgrade: fg.requires_manual_upgrade,
        hgx_reboot_delay_secs: fg.hgx_bmc_gpu_reboot_delay.as_secs(),
        power_drain: PowerDrainWaits {
            after_off_secs: hr.power_drain_off_wait.as_secs(),
            after_cycle_secs: hr.power_drain_cycle_wait.as_secs(),
            after_on_secs: hr.power_drain_on_wait.as_secs(),
        },
        pre_update_wait_secs: hr.pre_update_wait.as_secs(),
        script_timeout_secs: hr.script_timeout.as_secs().max(1),
        autoreboot_period: site.machine_updater.instance_autoreboot_period,
        heartbeat_timeout_secs: hr.heartbeat_timeout.as_secs().max(5),
        bmc_waits: bmc_waits(site),
        lean_history: hr.lean_history,
    }
}

/// The waits inside the BMC activities, from the site config; the workflow derives those
/// activities' timeouts from them and hands them to the activities.
pub fn bmc_waits(site: &SiteConfig) -> BmcWaits {
    let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let hr = &site.host_reprovision;
    BmcWaits {
        request_timeout_ms: ms(site.redfish.timeout),
        inventory_concurrency: site.redfish.inventory_concurrency,
        reset_task_within_ms: ms(site.redfish.reset_task_timeout),
        reachable_within_ms: ms(hr.bmc_reachable_within),
        power_state_within_ms: ms(hr.power_state_within),
        goes_down_within_ms: ms(hr.bmc_goes_down_within),
        task_poll_interval_ms: ms(hr.task_poll_interval),
    }
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
    let settings = reprovision_settings(site);
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_configured_waits_reach_the_workflow_settings() {
        let text = "[site]\nname = \"x\"\n[redfish]\ntimeout = \"7s\"\ninventory_concurrency = 3\nreset_task_timeout = \"90s\"\n\
                    [host_reprovision]\ntask_poll_interval = \"250ms\"\nbmc_reachable_within = \"20m\"\n\
                    power_state_within = \"15m\"\nbmc_goes_down_within = \"45s\"\n";
        let site = SiteConfig::from_toml_str(text, Path::new("/etc/hostfw/site.toml")).expect("loads");
        let w = reprovision_settings(&site).bmc_waits;
        assert_eq!(
            w,
            BmcWaits {
                request_timeout_ms: 7_000,
                inventory_concurrency: 3,
                reset_task_within_ms: 90_000,
                reachable_within_ms: 1_200_000,
                power_state_within_ms: 900_000,
                goes_down_within_ms: 45_000,
                task_poll_interval_ms: 250,
            }
        );
        let defaults = SiteConfig::from_toml_str("[site]\nname = \"x\"\n", Path::new("/etc/hostfw/site.toml")).unwrap();
        assert_eq!(reprovision_settings(&defaults).bmc_waits, BmcWaits::default(), "defaults agree on both sides");
    }
}
