//! Host bookkeeping in the site database: protect before an update, record substates, restore
//! after, and the site-wide update counters (started, completed, failed, retries) those steps
//! advance, each at most once per request step. No Redfish here.

use hostfw_model::{HostState, HostSubstate};
use hostfw_store::{
    now_ms, HealthReport, FIRMWARE_UPDATES_TOTAL, HOST_REPROVISION_RETRIES_TOTAL, PHASE_COMPLETED, PHASE_FAILED,
    PHASE_STARTED,
};
use hostfw_workflows::{HostContext, ProtectInput, RestoreInput, RetryLimits, RetryRecord, SubstateUpdate};
use temporalio_common::ActivityError;

use crate::bmc;
use crate::error;
use crate::Deps;

/// Source of the health report that marks a host under firmware update (seed: `host-fw-update`).
pub const HEALTH_SOURCE: &str = "host-fw-update";
/// Alert id of that report.
pub const HEALTH_ALERT: &str = "HostUpdateInProgress";

/// Protect: request marked started, then state `HostReprovision` and health report
/// `host-fw-update` (no allocation, no external alerting). Idempotent: a retry finds the same
/// rows and rewrites them.
///
/// Marking the request started comes first and is the commit point against `host reprovision
/// clear` (which deletes only an unstarted request): the database orders the two, so either the
/// clear wins and protect finds no request (`cleared`, nothing touched: the workflow ends
/// without updating), or protect wins and the clear is refused as "already started".
pub async fn protect(deps: &Deps, input: ProtectInput) -> Result<HostContext, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    // A retry after a crash finds the host already in HostReprovision: its steady state is then
    // Assigned when it carries an instance, Ready otherwise.
    let prior_state = machine.state.steady(machine.instance_id.is_some());
    let store = &deps.store;
    let Some(request) = store.request_get(&machine.id).await.map_err(error::store)? else {
        return Ok(cleared(machine.id, machine.bmc_address.to_string(), prior_state));
    };
    if request.started_at_ms.is_none() {
        match store.request_mark_started(&machine.id, now_ms()).await {
            Ok(()) => count(deps, FIRMWARE_UPDATES_TOTAL, PHASE_STARTED).await,
            // Cleared between the read and the mark.
            Err(hostfw_store::StoreError::NotFound { .. }) => {
                return Ok(cleared(machine.id, machine.bmc_address.to_string(), prior_state));
            }
            Err(e) => return Err(error::store(e)),
        }
    }
    // Who approved an assigned host's request, and when: the tenant's command recorded itself;
    // an approval it did not record (the autoreboot period) is recorded here, as the update starts.
    if let Some(how) = &input.approval {
        // "approved by alice" → "alice"; "inside the instance autoreboot period (…)" → "the …".
        let by = how.strip_prefix("approved by ").or_else(|| how.strip_prefix("inside ")).unwrap_or(how);
        store.approval_record(&machine.id, request.requested_at_ms, by, now_ms()).await.map_err(error::store)?;
    }
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
    store
        .machine_set_state(
            &machine.id,
            HostState::HostReprovision,
            Some(HostSubstate::Protecting),
            &match &input.approval {
                Some(how) => format!("reprovisioning started by {} ({how})", input.initiator),
                None => format!("reprovisioning started by {}", input.initiator),
            },
        )
        .await
        .map_err(error::store)?;
    Ok(HostContext {
        machine_id: machine.id,
        bmc_address: machine.bmc_address.to_string(),
        prior_state,
        cleared: false,
    })
}

/// The request was cleared before the update started: nothing was touched.
fn cleared(machine_id: String, bmc_address: String, prior_state: HostState) -> HostContext {
    tracing::info!(machine_id = %machine_id, "the request was cleared before the update started; nothing done");
    HostContext { machine_id, bmc_address, prior_state, cleared: true }
}

/// The substate `record_retry` sets.
const FAILED: HostSubstate = HostSubstate::FailedFirmwareUpgrade;

/// Record a substate and a history entry, and log it: one line per host per substate change,
/// ERROR for a failed attempt.
pub async fn record_substate(deps: &Deps, input: SubstateUpdate, workflow_id: &str) -> Result<(), ActivityError> {
    log_substate(&input, workflow_id);
    deps.store
        .machine_set_state(&input.machine_id, input.state, Some(input.substate), &input.message)
        .await
        .map_err(error::store)
}

/// Write the substate records an activity carries (the lean history shape), oldest first, before
/// its work. A retried attempt whose first attempt wrote them finds the last one on top of the
/// host's history and writes nothing again.
pub async fn record_carried(
    deps: &Deps,
    records: &[SubstateUpdate],
    workflow_id: &str,
    attempt: u32,
) -> Result<(), ActivityError> {
    let Some(last) = records.last() else { return Ok(()) };
    if attempt > 1 {
        let top = deps.store.history_list(&last.machine_id, 1).await.map_err(error::store)?;
        if top.first().is_some_and(|h| h.substate == Some(last.substate) && h.message == last.message) {
            return Ok(());
        }
    }
    for record in records {
        record_substate(deps, record.clone(), workflow_id).await?;
    }
    Ok(())
}

/// Restore: back to the prior state, request cleared, health report removed, in that order so
/// that a host never looks allocatable while its request still exists.
pub async fn restore(deps: &Deps, input: RestoreInput) -> Result<(), ActivityError> {
    let store = &deps.store;
    match &input.abort {
        None => {
            store.machine_set_state(&input.machine_id, input.state, None, &input.message).await.map_err(error::store)?
        }
        Some(order) => {
            // The record of an abort says what this run flashed (the workflow's message) and what
            // still differs from the catalog, as the last inventory read says.
            let message = format!("{}; {}", input.message, still_differing(deps, &input.machine_id).await);
            if order.to_maintenance {
                let reason = format!("aborted by {}: {}", order.by, order.reason);
                store
                    .machine_enter_repair(&input.machine_id, &reason, &order.by, &message)
                    .await
                    .map_err(error::store)?;
            } else {
                store.machine_set_state(&input.machine_id, input.state, None, &message).await.map_err(error::store)?;
            }
        }
    }
    let request = store.request_get(&input.machine_id).await.map_err(error::store)?;
    let started = request.is_some_and(|r| r.started_at_ms.is_some());
    // The run's attempts end now: a canary wave waits for them (before the request goes, so a
    // pass never sees the host out of flight with its attempt still open).
    store.target_finish(&input.machine_id).await.map_err(error::store)?;
    let deleted = store.request_delete(&input.machine_id).await.map_err(error::store)?;
    // Counted once per started request: a retried restore finds the request gone, and a request
    // cleared before it started never counted as started either.
    if started && deleted {
        count(deps, FIRMWARE_UPDATES_TOTAL, PHASE_COMPLETED).await;
    }
    store.health_report_remove(&input.machine_id, HEALTH_SOURCE).await.map_err(error::store)?;
    // A slot of the site ceiling is free: the scheduler refills it now, not one interval later.
    if let Some(client) = deps.temporal.as_ref() {
        crate::site::site_link::wake_manager(client, &format!("host {} finished", input.machine_id)).await;
    }
    Ok(())
}

/// How long the record of an abort waits for a fresh inventory read (the restore is a short
/// bookkeeping activity, 30 s; a dead BMC must not make it time out).
const ABORT_INVENTORY_READ: std::time::Duration = std::time::Duration::from_secs(10);

/// What still differs from the effective catalog, for the record of an abort: by a fresh
/// inventory read when the BMC answers within [`ABORT_INVENTORY_READ`] (stored as the host's
/// report, like every refresh), else by the last stored report or its failure.
async fn still_differing(deps: &Deps, machine_id: &str) -> String {
    if let Ok(Some(machine)) = deps.store.machine_get(machine_id).await {
        let read = crate::host::inventory::explore_machine(deps, &machine);
        if tokio::time::timeout(ABORT_INVENTORY_READ, read).await.is_err() {
            tracing::warn!(
                machine_id,
                "abort: the BMC did not answer the inventory read in time; using the stored report"
            );
        }
    }
    let report = match deps.store.report_for_machine(machine_id).await {
        Ok(Some(r)) => r,
        Ok(None) => return "no inventory on record to compare with the catalog".into(),
        Err(e) => return format!("the inventory could not be read ({})", hostfw_model::error_chain(&e)),
    };
    let catalog = match deps.catalog.current().await {
        Ok(c) => c,
        Err(e) => return format!("the catalog could not be read ({})", hostfw_model::error_chain(&e)),
    };
    let inventory = report.report.as_ref();
    let status = hostfw_model::firmware_status(
        &catalog,
        inventory.map(|i| i.vendor.as_str()),
        inventory.map(|i| i.model.as_str()),
        inventory,
        report.error.as_deref(),
    );
    match status {
        hostfw_model::FirmwareStatus::Compliant => "nothing differs from the catalog now".into(),
        hostfw_model::FirmwareStatus::Drifted { differing, unmatched, .. }
            if !differing.is_empty() || !unmatched.is_empty() =>
        {
            let mut names: Vec<String> = differing.iter().map(|c| c.to_string()).collect();
            names.extend(unmatched.iter().map(|u| format!("{} (no inventory match)", u.component)));
            format!("still differing from the catalog: {}", names.join(", "))
        }
        hostfw_model::FirmwareStatus::Drifted { .. } => "nothing differs from the catalog now".into(),
        hostfw_model::FirmwareStatus::NotExplored => "no inventory on record to compare with the catalog".into(),
        hostfw_model::FirmwareStatus::ExploreFailed { error } => format!("the last inventory read failed ({error})"),
        hostfw_model::FirmwareStatus::NoCatalogEntry { vendor, model } => {
            format!("no catalog entry for {vendor} {model} to compare with")
        }
        hostfw_model::FirmwareStatus::VersionNotReported { .. } => {
            "nothing differs from the catalog now (some components report no version)".into()
        }
    }
}

/// Persist the retry count on the host's request, with a history entry saying why.
pub async fn record_retry(deps: &Deps, input: RetryRecord, workflow_id: &str) -> Result<(), ActivityError> {
    let store = &deps.store;
    // A retried activity finds its own history entry on top: each record counts once.
    let last = store.history_list(&input.machine_id, 1).await.map_err(error::store)?;
    let recorded = last.first().is_some_and(|h| h.substate == Some(FAILED) && h.message == input.message);
    if !recorded {
        log_retry(&input, workflow_id);
    }
    // The error budget counts the failure against the component being installed (a failure
    // before any component was selected counts against no target). Its reason is the
    // FailedFirmwareUpgrade entry the workflow wrote just before this record.
    let failure = input.exhausted || input.retry_count > 0;
    if let (false, true, Some(component), Some(version)) =
        (recorded, failure, input.component, input.target_version.as_deref())
    {
        let reason =
            last.first().filter(|h| h.substate == Some(FAILED)).map_or(input.message.as_str(), |h| h.message.as_str());
        let budget = hostfw_model::gates::SchedulingPolicy::from_config(&deps.site.current()).error_budget;
        store
            .target_failure_under(&input.machine_id, component, version, reason, Some(&budget))
            .await
            .map_err(error::store)?;
    }
    if store.request_get(&input.machine_id).await.map_err(error::store)?.is_some() {
        store
            .request_record_retry(&input.machine_id, input.retry_count, input.exhausted)
            .await
            .map_err(error::store)?;
    }
    store
        .machine_set_state(&input.machine_id, HostState::HostReprovision, Some(FAILED), &input.message)
        .await
        .map_err(error::store)?;
    // A failed attempt records either the next retry (count > 0) or the spent budget; a reset
    // (count 0, not exhausted) is neither.
    if !recorded && input.exhausted {
        count(deps, FIRMWARE_UPDATES_TOTAL, PHASE_FAILED).await;
    } else if !recorded && input.retry_count > 0 {
        count(deps, FIRMWARE_UPDATES_TOTAL, PHASE_FAILED).await;
        count(deps, HOST_REPROVISION_RETRIES_TOTAL, "").await;
    }
    Ok(())
}

/// Add one to a site-wide counter (metrics). A failure is logged, never fails the activity: the
/// firmware work matters more than its count.
async fn count(deps: &Deps, name: &str, label: &str) {
    if let Err(e) = deps.store.counter_add(name, label, 1).await {
        tracing::warn!(error = %hostfw_model::error_chain(&e), counter = name, label, "could not count for metrics");
    }
}

/// The retry budget and interval of the worker's current site config.
pub fn retry_limits(deps: &Deps) -> Result<RetryLimits, ActivityError> {
    let settings = hostfw_workflows::host_reprovision::ReprovisionSettings::from_site(&deps.site.current());
    Ok(RetryLimits { max_retries: settings.max_retries, retry_interval_secs: settings.retry_interval_secs })
}

/// The log line of a substate change. The fields every host line carries: `machine_id`,
/// `component`, `target_version`, `workflow_id` (empty when not known).
fn log_substate(input: &SubstateUpdate, workflow_id: &str) {
    let component = input.component.map(|c| c.to_string()).unwrap_or_default();
    let target_version = input.target_version.as_deref().unwrap_or_default();
    let (machine_id, substate, detail) = (&input.machine_id, input.substate.as_str(), &input.message);
    if input.substate == FAILED {
        tracing::error!(
            machine_id,
            component,
            target_version,
            workflow_id,
            substate,
            reason = detail,
            "firmware update attempt failed"
        );
    } else {
        tracing::info!(machine_id, component, target_version, workflow_id, substate, detail, "host substate");
    }
}

/// The log line of a retry decision: WARN for a retry to come, ERROR for a spent budget.
fn log_retry(input: &RetryRecord, workflow_id: &str) {
    let component = input.component.map(|c| c.to_string()).unwrap_or_default();
    let target_version = input.target_version.as_deref().unwrap_or_default();
    let (machine_id, retry_count, detail) = (&input.machine_id, input.retry_count, &input.message);
    if input.exhausted {
        tracing::error!(
            machine_id,
            component,
            target_version,
            workflow_id,
            retry_count,
            detail,
            "retry budget exhausted"
        );
    } else if retry_count > 0 {
        tracing::warn!(
            machine_id,
            component,
            target_version,
            workflow_id,
            retry_count,
            detail,
            "firmware update will be retried"
        );
    } else {
        tracing::info!(machine_id, workflow_id, detail, "retry count reset");
    }
}
