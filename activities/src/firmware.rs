//! The Redfish install route: precheck, upload one artifact, follow the BMC's task.

use std::time::Duration;

use hostfw_model::{TargetsKeyword, UploadRouteName, UploadTargets};
use hostfw_redfish::{TaskPoll, TaskRef, UploadRequest, UploadRoute, WaitOptions};
use hostfw_workflows::{Precheck, SlotLease, TaskHandle, TaskResult, UploadInput, UploadResult, WaitTaskInput};
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;
use tokio::sync::watch;

use crate::artifacts;
use crate::bmc;
use crate::error;
use crate::Deps;

use crate::heartbeat::{with_heartbeat, HEARTBEAT_EVERY};

/// True when the matching members verify at the target (`hostfw_model::verify_matching`: a
/// version not reported is never the target).
fn at_target(report: &hostfw_model::InventoryReport, precheck: &Precheck) -> bool {
    hostfw_model::verify_matching(report, &precheck.matcher, &precheck.target_version)
        == hostfw_model::Verification::AllAtTarget
}

/// Lease of a site-wide upload slot; renewed every [`SLOT_RENEW_EVERY`] while the upload and the
/// BMC's task run (a BMC that fetches the image itself, SimpleUpdate, transfers during the task).
const SLOT_LEASE_MS: i64 = 60_000;
const SLOT_RENEW_EVERY: Duration = HEARTBEAT_EVERY;
/// Pause between tries for a free slot.
const SLOT_POLL: Duration = Duration::from_millis(250);

/// Take one of the site's `max_uploads` slots, heartbeating while waiting for one.
async fn acquire_slot(deps: &Deps, ctx: &ActivityContext, holder: &str) -> Result<u32, ActivityError> {
    // Heartbeat every HEARTBEAT_EVERY like every other long step (every 20 polls, 5 s, was as
    // long as a short heartbeat timeout: a live worker's upload timed out while it waited).
    let beat_every = (HEARTBEAT_EVERY.as_millis() / SLOT_POLL.as_millis()).max(1) as u32;
    let mut waited = 0u32;
    loop {
        if let Some(slot) = deps
            .store
            .upload_slot_acquire(holder, deps.settings.max_uploads, SLOT_LEASE_MS)
            .await
            .map_err(error::store)?
        {
            return Ok(slot);
        }
        if waited % beat_every == 0 {
            let _ = ctx.record_heartbeat(format!("waiting for one of {} upload slots", deps.settings.max_uploads)).await;
        }
        if ctx.is_cancelled() {
            return Err(ActivityError::cancelled());
        }
        waited += 1;
        tokio::time::sleep(SLOT_POLL).await;
    }
}

/// Precheck ("already at target?"), then push one artifact through the best route the BMC offers,
/// holding a site-wide upload slot from before the transfer until the BMC's task ends (released
/// by [`wait_task`], or here when there is no task to follow).
pub async fn upload(deps: &Deps, ctx: &ActivityContext, input: UploadInput) -> Result<UploadResult, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    // The precheck reads the whole inventory: on a slow BMC that outlasts a short heartbeat
    // timeout, and an attempt timed out meanwhile would go on to upload beside its retry.
    let read = async { client.explore().await.map_err(error::redfish) };
    let report = with_heartbeat(ctx, "precheck: reading the Redfish inventory", read).await?;
    if let Some(precheck) = &input.precheck {
        if at_target(&report, precheck) {
            // A lost earlier attempt of this upload may still hold a slot: give it back now.
            let holder = slot_holder(ctx, &input);
            let _ = deps.store.upload_slot_release_holder(&holder).await;
            tracing::info!(machine = %machine.id, component = %input.component,
                version = %input.target_version, "already at target; nothing uploaded");
            return Ok(UploadResult::AlreadyAtTarget);
        }
        if input.artifact_count == 1 && report.staged_at(&precheck.matcher, &precheck.target_version) {
            // An earlier attempt's image reached the BMC (its worker died before it learned so):
            // flashing it again would install it twice. It only needs its activation. (A
            // multi-artifact entry cannot tell from the inventory which parts arrived: it uploads.)
            let holder = slot_holder(ctx, &input);
            let _ = deps.store.upload_slot_release_holder(&holder).await;
            tracing::info!(machine = %machine.id, component = %input.component,
                version = %input.target_version, "already staged on the BMC; nothing uploaded");
            return Ok(UploadResult::AlreadyStaged);
        }
    }
    let artifact = artifacts::resolve(&deps.settings, &input.artifact)?;
    // The component's upload quirks (catalog `upload`), for the model the BMC reports.
    let catalog = deps.catalog.current().await.map_err(error::catalog)?;
    let model = catalog.find(&report.vendor, &report.model);
    let component = model.and_then(|m| m.components.get(&input.component));
    let setting = component.and_then(|c| c.upload.clone()).unwrap_or_default();
    let matched = || -> Vec<String> {
        let Some(c) = component else { return Vec::new() };
        report
            .members
            .iter()
            .filter(|m| c.current_version_reported_as.is_match(&m.id))
            .map(|m| m.odata_id.clone())
            .collect()
    };
    let targets = match (&setting.targets, &input.precheck, input.install_only_specified) {
        (Some(UploadTargets::List(list)), _, _) => list.clone(),
        (Some(UploadTargets::Keyword(TargetsKeyword::Matched)), _, _) => matched(),
        (None, Some(p), true) => report
            .members
            .iter()
            .filter(|m| p.matcher.is_match(&m.id))
            .map(|m| m.odata_id.clone())
            .collect(),
        _ => Vec::new(),
    };
    let request = UploadRequest {
        file: artifact.path.clone(),
        image_uri: artifact.url.clone(),
        targets,
        apply_time: None,
        force_route: setting.route.map(|r| match r {
            UploadRouteName::Multipart => UploadRoute::Multipart,
            UploadRouteName::Httppush => UploadRoute::HttpPush,
            UploadRouteName::Simpleupdate => UploadRoute::SimpleUpdate,
        }),
        extra_parts: setting.multipart_parts.into_iter().collect(),
    };
    let holder = slot_holder(ctx, &input);
    let slot = acquire_slot(deps, ctx, &holder).await?;
    let push = client.upload(&request);
    tokio::pin!(push);
    let mut renew = tokio::time::interval(SLOT_RENEW_EVERY);
    let result = loop {
        tokio::select! {
            r = &mut push => break r,
            _ = renew.tick() => {
                let _ = deps.store.upload_slot_renew(slot, &holder, SLOT_LEASE_MS).await;
                let _ = ctx.record_heartbeat(format!("uploading in slot {slot}")).await;
            }
        }
    };
    let accepted = match result {
        Ok(a) if a.task.is_some() => a,
        other => {
            release_slot(deps, slot, &holder).await;
            other.map_err(error::redfish)?
        }
    };
    tracing::info!(machine = %machine.id, component = %input.component, route = ?accepted.route,
        artifact = %artifact.path.display(), "image accepted by the BMC");
    Ok(UploadResult::Accepted {
        route: format!("{:?}", accepted.route),
        task: accepted.task.map(|t| TaskHandle {
            monitor_uri: t.monitor_uri,
            task_uri: t.task_uri,
            slot: Some(SlotLease { slot, holder: holder.clone() }),
        }),
    })
}

/// One slot holder per workflow, component and artifact: a retried upload finds its own slot again.
fn slot_holder(ctx: &ActivityContext, input: &UploadInput) -> String {
    format!(
        "{}/{}/{}",
        ctx.info().workflow_id.clone().unwrap_or_else(|| input.machine_id.clone()),
        input.component,
        input.artifact_index
    )
}

async fn release_slot(deps: &Deps, slot: u32, holder: &str) {
    if let Err(e) = deps.store.upload_slot_release(slot, holder).await {
        tracing::warn!(slot, holder, error = %e, "releasing the upload slot failed; its lease expires");
    }
}

fn describe(poll: &TaskPoll) -> String {
    match poll {
        TaskPoll::Running { state, percent, .. } => match percent {
            Some(p) => format!("{state} {p}%"),
            None => state.clone(),
        },
        TaskPoll::Done(outcome) => format!("{:?}", outcome.state),
        TaskPoll::Vanished => "vanished".to_string(),
    }
}

/// Follow the task until it ends, heartbeating the last progress seen.
pub async fn wait_task(
    deps: &Deps,
    ctx: &ActivityContext,
    input: WaitTaskInput,
) -> Result<TaskResult, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    let task = TaskRef { monitor_uri: input.task.monitor_uri.clone(), task_uri: input.task.task_uri.clone() };
    let options = WaitOptions {
        timeout: deps.settings.task_timeout,
        poll_interval: deps.settings.task_poll_interval,
    };
    let (progress_tx, progress_rx) = watch::channel(String::from("submitted"));
    let wait = client.wait_task(&task, options, move |poll| {
        let _ = progress_tx.send(describe(poll));
    });
    tokio::pin!(wait);
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    let lease = input.task.slot.clone();
    let outcome = loop {
        tokio::select! {
            result = &mut wait => break result,
            _ = beat.tick() => {
                let progress = progress_rx.borrow().clone();
                let _ = ctx.record_heartbeat(progress).await;
                if let Some(l) = &lease {
                    let _ = deps.store.upload_slot_renew(l.slot, &l.holder, SLOT_LEASE_MS).await;
                }
            }
            _ = ctx.cancelled() => return Err(ActivityError::cancelled()),
        }
    };
    // The transfer is over whatever the outcome; a failed poll leaves the lease to expire so a
    // retried wait (another worker) still holds it meanwhile.
    let outcome = match outcome {
        Ok(o) => {
            if let Some(l) = &lease {
                release_slot(deps, l.slot, &l.holder).await;
            }
            o
        }
        Err(e) => return Err(error::redfish(e)),
    };
    Ok(TaskResult {
        succeeded: outcome.succeeded(),
        state: format!("{:?}", outcome.state),
        messages: outcome.messages.clone(),
    })
}
