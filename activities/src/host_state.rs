//! Host bookkeeping in the site database: protect before an update, record substates, restore
//! after. No Redfish here.

use hostfw_model::HostState;
use hostfw_store::{now_ms, HealthReport};
use hostfw_workflows::{HostContext, ProtectInput, RestoreInput, RetryRecord, SubstateUpdate};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::Deps;

/// Source of the health report that marks a host under firmware update (seed: `host-fw-update`).
pub const HEALTH_SOURCE: &str = "host-fw-update";
/// Alert id of that report.
pub const HEALTH_ALERT: &str = "HostUpdateInProgress";

/// Protect: state `HostReprovision`, health report `host-fw-update` (no allocation, no external
/// alerting), request marked started. Idempotent: a retry finds the same rows and rewrites them.
pub async fn protect(deps: &Deps, input: ProtectInput) -> Result<HostContext, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    // A retry after a crash finds the host already in HostReprovision: its steady state is then
    // Assigned when it carries an instance, Ready otherwise.
    let prior_state = if machine.state == HostState::HostReprovision.to_string() {
        if machine.instance_id.is_some() { HostState::Assigned } else { HostState::Ready }.to_string()
    } else {
        machine.state.clone()
    };
    let store = &deps.store;
    store
        .health_report_put(&HealthReport {
            machine_id: machine.id.clone(),
            source: HEALTH_SOURCE.to_string(),
            alert_id: HEALTH_ALERT.to_string(),
            message: "Host firmware update".to_string(),
            classifications: vec!["PreventAllocations".to_string(), "SuppressExternalAlerting".to_string()],
        })
        .await
        .map_err(error::store)?;
    if let Some(request) = store.request_get(&machine.id).await.map_err(error::store)? {
        if request.started_at_ms.is_none() {
            store.request_mark_started(&machine.id, now_ms()).await.map_err(error::store)?;
        }
    }
    store
        .machine_set_state(
            &machine.id,
            &HostState::HostReprovision.to_string(),
            Some("Protecting"),
            &format!("reprovisioning started by {}", input.initiator),
        )
        .await
        .map_err(error::store)?;
    Ok(HostContext { machine_id: machine.id, bmc_address: machine.bmc_address, prior_state })
}

/// Record a substate and a history entry.
pub async fn record_substate(deps: &Deps, input: SubstateUpdate) -> Result<(), ActivityError> {
    deps.store
        .machine_set_state(&input.machine_id, &input.state, Some(&input.substate), &input.message)
        .await
        .map_err(error::store)
}

/// Restore: back to the prior state, request cleared, health report removed, in that order so
/// that a host never looks allocatable while its request still exists.
pub async fn restore(deps: &Deps, input: RestoreInput) -> Result<(), ActivityError> {
    let store = &deps.store;
    store.machine_set_state(&input.machine_id, &input.state, None, &input.message).await.map_err(error::store)?;
    store.request_delete(&input.machine_id).await.map_err(error::store)?;
    store.health_report_remove(&input.machine_id, HEALTH_SOURCE).await.map_err(error::store)?;
    Ok(())
}

/// Persist the retry count on the host's request, with a history entry saying why.
pub async fn record_retry(deps: &Deps, input: RetryRecord) -> Result<(), ActivityError> {
    let store = &deps.store;
    if store.request_get(&input.machine_id).await.map_err(error::store)?.is_some() {
        store.request_set_retry_count(&input.machine_id, input.retry_count).await.map_err(error::store)?;
    }
    store
        .machine_set_state(
            &input.machine_id,
            &HostState::HostReprovision.to_string(),
            Some("FailedFirmwareUpgrade"),
            &input.message,
        )
        .await
        .map_err(error::store)
}
