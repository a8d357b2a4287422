//! `hostfw.manager.pass`: one pass of the site scheduler.
//!
//! Reads the site view (`deps.site_view`: only what changed since the last pass), asks
//! `gates::plan` which hosts start, and gives each of them a request
//! (initiator `Automated`) and a `HostReprovision` workflow: every request first, fenced by the
//! gate fence read before the view (`hostfw_store::GateFence`), then the workflows. When another
//! write moved the fence meanwhile the rest of the plan waits and the next pass runs at once. A
//! host that cannot be started is reported and its request rolled back; the pass goes on with the
//! others. It must not apply any gate itself.

use std::collections::BTreeMap;

use hostfw_model::gates::{self, FirmwareStatus};
use hostfw_model::time_text::rfc3339_utc;
use hostfw_store::{now_ms, StoreError, MANAGER_PASSES_TOTAL, PASS_FAILED, PASS_SUCCEEDED};
use hostfw_workflows::{PassRequest, PassSummary, StartFailure};
use temporalio_common::ActivityError;

use crate::site::site_link::{claim, start_claimed, Guard, StartError, INITIATOR_AUTOMATED};
use crate::tunables::ORPHAN_CHECK_EVERY;
use crate::{error, Deps};

/// One pass, counted in `manager_passes_total{succeeded|failed}` (the metrics endpoint's
/// `hostfw_manager_passes_total`; a failed count is only logged when the database is down too).
pub async fn pass(deps: &Deps, input: PassRequest) -> Result<PassSummary, ActivityError> {
    let result = run_pass(deps, input).await;
    let label = if result.is_ok() { PASS_SUCCEEDED } else { PASS_FAILED };
    if let Err(e) = deps.store.counter_add(MANAGER_PASSES_TOTAL, label, 1).await {
        tracing::warn!(error = %hostfw_model::error_chain(&e), result = label, "could not count the scheduler pass");
    }
    result
}

async fn run_pass(deps: &Deps, input: PassRequest) -> Result<PassSummary, ActivityError> {
    let Some(client) = deps.temporal.as_ref() else {
        return Err(error::bad_input("this worker has no Temporal client: it cannot start host workflows"));
    };
    let catalog = deps.catalog.current().await.map_err(error::catalog)?;
    // One config for the whole pass, even if a live reload lands meanwhile.
    let site = deps.site.current();
    // The site database's clock: the canary soak compares it with attempt times it recorded.
    let now = deps.store.db_now_ms().await.map_err(error::store)?;
    // Requests' times are this process's clock's: compared with it. Before the fence is read:
    // listing the running workflows can take seconds on a large site, and nothing in it is
    // part of this pass's decision.
    adopt_orphans(deps, client, now_ms()).await;
    // The gate fence before the view: a request, pause, freeze, failure, maintenance entry,
    // window or catalog change that lands after this read moves it, and this pass's requests
    // are then refused (`gate_fence`): no host starts from a view made stale meanwhile.
    let mut fence = deps.store.gate_fence().await.map_err(error::store)?;
    let (view, refresh) = deps.site_view.read(&deps.store, &catalog, &site, now).await.map_err(error::store)?;
    tracing::debug!(?refresh, "machine update manager: site view read");
    let plan = gates::plan(&view.input);
    // The canary waves' record (host count frozen, wave reached) before any host starts: a pass
    // that cannot write it starts nothing, so no wave is ever opened without being on record.
    let marks = gates::wave_marks(&view.input, &plan);
    // Held by the gate fence too: a resume (or any other write) since the view was read drops
    // them all, and the whole plan waits for the next pass, at once.
    let mut stale: Option<(String, usize)> = None;
    let resumed = match deps.store.target_waves_mark(&marks, &fence).await {
        Ok(resumed) => resumed,
        Err(StoreError::GateMoved { .. }) => {
            stale = Some(("the canary wave marks".to_string(), plan.start.len()));
            Vec::new()
        }
        Err(e) => return Err(error::store(e)),
    };
    for m in marks.iter().filter(|m| stale.is_none() && !resumed.contains(&m.target)) {
        tracing::info!(rollout_target = %m.target, wave = m.record.wave, hosts = m.record.hosts, "machine update manager: canary wave on record");
    }
    for t in &resumed {
        tracing::info!(rollout_target = %t, "machine update manager: the target was resumed since the site view was read; its hosts start from its first wave in the next pass");
    }
    if plan.ceiling.limit == 0 {
        tracing::warn!(how = %plan.ceiling.how, "machine update manager: the ceiling is 0, no automatic update starts");
    }
    let mut started = Vec::new();
    let mut start_failures = Vec::new();
    // Every request first, close to the read, then the workflows.
    let mut claimed = Vec::new();
    for (n, id) in plan.start.iter().enumerate() {
        if stale.is_some() {
            break;
        }
        // A host of a target resumed since the view was read waits for a pass that saw the resume.
        if view.input.hosts.iter().any(|h| h.machine_id == *id && h.targets.iter().any(|t| resumed.contains(t))) {
            continue;
        }
        let message = drift_message(&view.input.hosts, id);
        match claim(&site, &deps.store, id, INITIATOR_AUTOMATED, Some(message.clone()), Guard::Gates(&mut fence)).await
        {
            Ok(()) => claimed.push((id, message)),
            // Another writer moved the gate fence since the view was read: this host and the
            // rest of the plan wait for a pass that sees what changed (at once, below).
            Err(StartError::Store(StoreError::GateMoved { .. })) => {
                stale = Some((id.clone(), plan.start.len() - n));
                break;
            }
            // A freeze set since the view was read: the site database refused the request.
            Err(StartError::Store(StoreError::Frozen { freeze_id, .. })) => {
                tracing::info!(machine_id = %id, freeze_id, "machine update manager: frozen since the site view was read; the host waits");
            }
            // Another pass, worker or direct request filled the host's failure domain since the
            // view was read: the site database refused the request, exactly as the cap says.
            Err(StartError::Store(StoreError::LabelCapReached { key, value, .. })) => {
                tracing::info!(machine_id = %id, label = %format!("{key}={value}"), "machine update manager: failure-domain cap reached since the site view was read; the host waits");
            }
            Err(e) => {
                tracing::warn!(machine_id = %id, error = %hostfw_model::error_chain(&e), "machine update manager could not start a host");
                start_failures.push(StartFailure { machine_id: id.clone(), error: hostfw_model::error_chain(&e) });
            }
        }
    }
    if let Some((at, waiting)) = &stale {
        tracing::info!(at = %at, hosts_waiting = waiting, "machine update manager: the site changed since the site view was read (gate fence moved); the rest of the plan waits for the next pass, at once");
    }
    for (id, message) in claimed {
        match start_claimed(&site, &deps.store, client, id, INITIATOR_AUTOMATED, Some(message)).await {
            Ok(_) => started.push(id.clone()),
            Err(e) => {
                tracing::warn!(machine_id = %id, error = %hostfw_model::error_chain(&e), "machine update manager could not start a host");
                start_failures.push(StartFailure { machine_id: id.clone(), error: hostfw_model::error_chain(&e) });
            }
        }
    }
    let mut waiting: BTreeMap<String, u32> = BTreeMap::new();
    for s in &plan.skipped {
        *waiting.entry(s.reason.kind().to_string()).or_default() += 1;
    }
    tracing::info!(
        reasons = %input.reasons.join("; "),
        ceiling = plan.ceiling.limit,
        in_flight = plan.in_flight,
        started = started.len(),
        started_hosts = %started.join(","),
        waiting = plan.skipped.len(),
        "machine update manager pass"
    );
    let run_interval_secs = site.machine_updater.machine_update_run_interval.as_secs().max(1);
    // A window opening or a canary wave's soak ending: run again then, not one interval later.
    // The reason goes with the timer, so the pass it starts says what opened.
    let next_wake = plan
        .next_window_open_ms
        .map(|at| (at, format!("an update window opened at {}", rfc3339_utc(at))))
        .into_iter()
        .chain(plan.next_wave_open_ms.map(|at| (at, format!("a canary wave's soak ended at {}", rfc3339_utc(at)))))
        .chain(stale.map(|(_, waiting)| {
            (now, format!("the site changed while the last pass made its requests ({waiting} planned hosts wait)"))
        }))
        .min_by_key(|(at, _)| *at);
    let next_wake_secs =
        next_wake.as_ref().map(|(at, _)| u64::try_from((at - now).max(0)).unwrap_or(0).div_ceil(1000).max(1));
    let next_wake_reason = next_wake.map(|(_, why)| why);
    Ok(PassSummary {
        total: plan.fleet.total,
        unhealthy: plan.fleet.unhealthy,
        ceiling: plan.ceiling.limit,
        ceiling_how: plan.ceiling.how.clone(),
        in_flight: plan.in_flight,
        compliant: plan.compliant,
        started,
        start_failures,
        waiting: waiting.into_iter().collect(),
        run_interval_secs,
        next_wake_secs,
        next_wake_reason,
        event_driven: site.machine_updater.event_driven,
        brakes: (view.input.brakes.freezes.iter().map(|f| f.describe()))
            .chain(view.input.brakes.pauses.iter().map(|p| p.describe()))
            .collect(),
    })
}

/// Starts again the workflow of every request whose workflow is not running: its maker died
/// between writing the request and starting the workflow, or the workflow closed without
/// finishing the request (failed, terminated by hand, lost with its namespace). The workflow
/// resumes from fresh inventory (`repair`). A workflow that runs (e.g. an assigned host waiting
/// for its tenant) is left alone. Also gives back the upload slots of workflows that completed
/// or failed with a live lease (a release lost to a site-database restart).
/// Runs at most once per [`ORPHAN_CHECK_EVERY`] in this process: event-driven passes follow
/// every host's end, and the check lists every running host workflow.
async fn adopt_orphans(deps: &Deps, client: &temporalio_client::Client, now: i64) {
    if !deps.orphan_check.due(std::time::Instant::now(), ORPHAN_CHECK_EVERY) {
        return;
    }
    let found = match async {
        let mut found =
            crate::site::repair::requests_without_workflow(&deps.store, client, now, crate::site::repair::SETTLE_MS)
                .await?;
        found.extend(crate::site::repair::slots_after_workflow(&deps.store, client).await?);
        Ok::<_, crate::site::repair::RepairError>(found)
    }
    .await
    {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(error = %hostfw_model::error_chain(&e), "machine update manager could not check requests against their workflows");
            return;
        }
    };
    for finding in &found {
        match crate::site::repair::fix(deps, client, finding, "the machine update manager").await {
            Ok(done) => {
                tracing::warn!(machine_id = %finding.machine_id(), problem = %finding.problem(), %done, "repaired")
            }
            Err(e) => {
                tracing::warn!(machine_id = %finding.machine_id(), error = %hostfw_model::error_chain(&e), "could not repair a request")
            }
        }
    }
}

/// "drift: bmc, uefi" for the request's message.
fn drift_message(hosts: &[gates::HostView], id: &str) -> String {
    let differing = hosts.iter().find(|h| h.machine_id == id).and_then(|h| match &h.firmware {
        FirmwareStatus::Drifted { differing, .. } => Some(differing.iter().map(|c| c.to_string()).collect::<Vec<_>>()),
        _ => None,
    });
    match differing {
        Some(list) if !list.is_empty() => {
            format!("scheduled by the machine update manager: {} differ", list.join(", "))
        }
        _ => "scheduled by the machine update manager".to_string(),
    }
}
