//! The Redfish install route: precheck, upload one artifact, follow the BMC's task. The slot
//! (`upload_slot`), the heartbeat gate (`liveness`) and the running-task check (`running_task`)
//! live in their own files; this one orders them.

use hostfw_model::{TargetsKeyword, UploadRouteName, UploadTargets};
use hostfw_redfish::{RedfishClient, TaskFinal, TaskPoll, TaskRef, UploadRequest, UploadRoute, WaitOptions};
use hostfw_store::SlotGrant;
use hostfw_workflows::{Precheck, SlotLease, TaskHandle, TaskResult, UploadInput, UploadResult, WaitTaskInput};
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;
use tokio::sync::watch;

use crate::artifacts;
use crate::bmc;
use crate::error;
use crate::host::liveness::Liveness;
use crate::host::running_task;
use crate::host::upload_slot::{self, HeldSlot};
use crate::Deps;

use crate::heartbeat::HEARTBEAT_EVERY;

/// True when the matching members verify at the target (`hostfw_model::verify_matching`: a
/// version not reported is never the target).
fn at_target(report: &hostfw_model::InventoryReport, precheck: &Precheck) -> bool {
    hostfw_model::verify_matching(report, &precheck.matcher, &precheck.target_version)
        == hostfw_model::Verification::AllAtTarget
}

/// Precheck ("already at target?", "already staged?", "already being flashed?"), then push one
/// artifact through the best route the BMC offers, holding a site-wide upload slot from before
/// the precheck until the BMC's task ends (released by [`wait_task`], or here when there is no
/// task to follow). Order (issue 11): slot first, precheck right before the POST, then the fence
/// (the slot is still this attempt's) and a heartbeat the server confirms, then the POST.
pub async fn upload(deps: &Deps, ctx: &ActivityContext, input: UploadInput) -> Result<UploadResult, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    let mut liveness = Liveness::new(ctx);
    let holder = slot_holder(ctx, &input);
    let waiting_since = std::time::Instant::now();
    let held = upload_slot::acquire(deps, ctx, &mut liveness, &holder).await?;
    // The substate said "waiting for a slot" until now: say what happens from here on.
    let uploading = format!(
        "uploading {} {} (artifact {}/{}: {}; upload slot {} after {:.1} s)",
        input.component,
        input.target_version,
        input.artifact_index + 1,
        input.artifact_count,
        input.artifact,
        held.lease().slot,
        waiting_since.elapsed().as_secs_f64()
    );
    let substate = hostfw_model::HostSubstate::WaitingForUpload;
    tracing::info!(machine_id = %machine.id, component = %input.component, target_version = %input.target_version,
        substate = substate.as_str(), detail = %uploading, "host substate");
    if let Err(e) = deps
        .store
        .machine_set_state(&machine.id, hostfw_model::HostState::HostReprovision, Some(substate), &uploading)
        .await
    {
        tracing::warn!(machine_id = %machine.id, error = %hostfw_model::error_chain(&e), "could not record the upload start");
    }
    match upload_holding(deps, ctx, &mut liveness, &client, &machine.id, &input, &held).await {
        Ok(Step::Done(result)) => {
            held.release(deps).await;
            Ok(result)
        }
        Ok(Step::FollowTask(result)) => {
            held.hand_over(deps).await;
            Ok(result)
        }
        Err(e) => {
            tracing::warn!(machine_id = %machine.id, component = %input.component, holder = %held.holder,
                error = ?e, "upload attempt failed");
            // A superseded attempt's release is a no-op (fenced); anything else frees the slot.
            held.release(deps).await;
            Err(e)
        }
    }
}

/// What the upload ends with: nothing to follow (release the slot), or a task that keeps it.
enum Step {
    Done(UploadResult),
    FollowTask(UploadResult),
}

async fn upload_holding(
    deps: &Deps,
    ctx: &ActivityContext,
    liveness: &mut Liveness,
    client: &RedfishClient,
    machine_id: &str,
    input: &UploadInput,
    held: &HeldSlot,
) -> Result<Step, ActivityError> {
    let what = format!("precheck in slot {}", held.grant.slot);
    let report = beating(ctx, liveness, &what, async { client.explore().await.map_err(error::redfish) }).await?;
    if let Some(precheck) = &input.precheck {
        if at_target(&report, precheck) {
            tracing::info!(machine_id = %machine_id, component = %input.component,
                version = %input.target_version, "already at target; nothing uploaded");
            return Ok(Step::Done(UploadResult::AlreadyAtTarget));
        }
        if input.artifact_count == 1 && report.staged_at(&precheck.matcher, &precheck.target_version) {
            // An earlier attempt's image reached the BMC (its worker died before it learned so):
            // flashing it again would install it twice. It only needs its activation. (A
            // multi-artifact entry cannot tell from the inventory which parts arrived: it uploads.)
            tracing::info!(machine_id = %machine_id, component = %input.component,
                version = %input.target_version, "already staged on the BMC; nothing uploaded");
            return Ok(Step::Done(UploadResult::AlreadyStaged));
        }
    }
    let artifact = artifacts::resolve(&deps.settings, &input.artifact)?;
    // The component's upload quirks (catalog `upload`), for the model the BMC reports.
    let catalog = deps.catalog.current().await.map_err(error::catalog)?;
    let model = catalog.find(&report.vendor, &report.model);
    let component = model.and_then(|m| m.components.get(&input.component));
    // An image whose content is not the one the catalog names is never uploaded.
    let expected = component
        .and_then(|c| c.known_firmware.iter().find(|e| e.version == input.target_version))
        .and_then(|e| e.sha256.get(input.artifact_index as usize));
    if let Some(expected) = expected {
        artifacts::digest(&input.artifact, &artifact.path, Some(expected))
            .map_err(artifacts::ArtifactError::into_activity_error)?;
    }
    let matcher = input.precheck.as_ref().map(|p| &p.matcher).or(component.map(|c| &c.current_version_reported_as));
    if let Some(running) = beating(ctx, liveness, &what, running_task::ours(client, &report, matcher)).await? {
        // A lost attempt's POST is being flashed right now: follow it, never POST again.
        tracing::info!(machine_id = %machine_id, component = %input.component, task = %running.task.monitor_uri,
            state = %running.state, "an update task is already running for this component; following it");
        let task = TaskHandle {
            monitor_uri: running.task.monitor_uri,
            task_uri: running.task.task_uri,
            slot: Some(held.lease()),
        };
        return Ok(Step::FollowTask(UploadResult::Accepted { route: "RunningTask".into(), task: Some(task) }));
    }
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
        (None, Some(p), true) => {
            report.members.iter().filter(|m| p.matcher.is_match(&m.id)).map(|m| m.odata_id.clone()).collect()
        }
        _ => Vec::new(),
    };
    let request = UploadRequest {
        file: artifact.path.clone(),
        image_uri: artifact.url(&deps.artifact_urls),
        targets,
        apply_time: None,
        force_route: setting.route.map(|r| match r {
            UploadRouteName::Multipart => UploadRoute::Multipart,
            UploadRouteName::Httppush => UploadRoute::HttpPush,
            UploadRouteName::Simpleupdate => UploadRoute::SimpleUpdate,
        }),
        extra_parts: setting.multipart_parts.into_iter().collect(),
    };
    transfer_fits_before_deadline(ctx, deps, &artifact.path)?;
    // The gate: still this attempt's slot, and the server still waits for this attempt.
    held.still_held(deps).await?;
    liveness.confirm_now(ctx, &format!("uploading in slot {}", held.grant.slot)).await?;
    let push = client.upload(&request);
    tokio::pin!(push);
    let mut renew = tokio::time::interval(HEARTBEAT_EVERY);
    renew.reset(); // the gate just renewed and heartbeated
    let result = loop {
        tokio::select! {
            r = &mut push => break r,
            _ = renew.tick() => {
                // Losing the slot or the server mid-transfer aborts the transfer (dropping it
                // closes the connection before the BMC has the whole image).
                held.still_held(deps).await?;
                liveness.beat(ctx, &format!("uploading in slot {}", held.grant.slot)).await?;
            }
        }
    };
    let accepted = result.map_err(error::redfish)?;
    tracing::info!(machine_id = %machine_id, component = %input.component, route = ?accepted.route,
        artifact = %artifact.path.display(), "image accepted by the BMC");
    let route = format!("{:?}", accepted.route);
    Ok(match accepted.task {
        Some(t) => Step::FollowTask(UploadResult::Accepted {
            route,
            task: Some(TaskHandle { monitor_uri: t.monitor_uri, task_uri: t.task_uri, slot: Some(held.lease()) }),
        }),
        None => Step::Done(UploadResult::Accepted { route, task: None }),
    })
}

/// Run a pre-POST step (BMC reads) while heartbeating through `liveness`: a slow BMC must not
/// time the attempt out, and an attempt the server gave up on stops here.
async fn beating<T>(
    ctx: &ActivityContext,
    liveness: &mut Liveness,
    what: &str,
    step: impl std::future::Future<Output = Result<T, ActivityError>>,
) -> Result<T, ActivityError> {
    tokio::pin!(step);
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    beat.reset();
    loop {
        tokio::select! {
            r = &mut step => return r,
            _ = beat.tick() => liveness.beat(ctx, what).await?,
            _ = ctx.cancelled() => return Err(ActivityError::cancelled()),
        }
    }
}

/// Refuse to start a transfer that cannot end before the activity's deadline (a long wait for a
/// slot must not cut a transfer short: the retry gets a fresh start-to-close instead).
fn transfer_fits_before_deadline(
    ctx: &ActivityContext,
    deps: &Deps,
    file: &std::path::Path,
) -> Result<(), ActivityError> {
    let Some(deadline) = ctx.info().deadline else { return Ok(()) };
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    let needed = hostfw_redfish::timeouts::upload_timeout(deps.settings.redfish_timeout, size);
    let left = deadline.duration_since(std::time::SystemTime::now()).unwrap_or_default();
    if left < needed {
        return Err(error::superseded(format!(
            "only {:.0} s left before this upload attempt's deadline, the transfer may take {:.0} s: not started",
            left.as_secs_f64(),
            needed.as_secs_f64()
        )));
    }
    Ok(())
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

fn describe(poll: &TaskPoll) -> String {
    match poll {
        TaskPoll::Running { state, percent, .. } => match percent {
            Some(p) => format!("{state} {p}%"),
            None => state.clone(),
        },
        TaskPoll::Done(outcome) => outcome.state.to_string(),
        TaskPoll::Vanished => "vanished".to_string(),
    }
}

fn grant_of(lease: &SlotLease) -> SlotGrant {
    SlotGrant { slot: lease.slot, generation: lease.generation }
}

/// Follow the task until it ends, heartbeating the last progress seen.
pub async fn wait_task(deps: &Deps, ctx: &ActivityContext, input: WaitTaskInput) -> Result<TaskResult, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let client = bmc::client(deps, &machine).await?;
    let task = TaskRef { monitor_uri: input.task.monitor_uri.clone(), task_uri: input.task.task_uri.clone() };
    let options = WaitOptions { timeout: deps.settings.task_timeout, poll_interval: deps.settings.task_poll_interval };
    let (progress_tx, progress_rx) = watch::channel(String::from("submitted"));
    let wait = client.wait_task(&task, options, move |poll| {
        let _ = progress_tx.send(describe(poll));
    });
    tokio::pin!(wait);
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    let lease = input.task.slot.clone();
    let mut lease_lost_logged = false;
    let outcome = loop {
        tokio::select! {
            result = &mut wait => break result,
            _ = beat.tick() => {
                let progress = progress_rx.borrow().clone();
                let _ = ctx.record_heartbeat(progress).await;
                if let Some(l) = &lease {
                    // Renewal never shortens the task-long lease the upload handed over. A lost
                    // lease changes nothing here: the BMC's task runs whatever we do.
                    match deps.store.upload_slot_renew(grant_of(l), &l.holder, upload_slot::SLOT_LEASE_MS).await {
                        Ok(true) => {}
                        Ok(false) if !lease_lost_logged => {
                            lease_lost_logged = true;
                            tracing::warn!(holder = %l.holder, slot = l.slot, "the upload slot of this task was taken over; following the task anyway");
                        }
                        Ok(false) => {}
                        Err(e) => tracing::warn!(holder = %l.holder, error = %hostfw_model::error_chain(&e), "renewing the upload slot failed"),
                    }
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
                upload_slot::release(deps, grant_of(l), &l.holder).await;
            }
            o
        }
        Err(e) => return Err(error::redfish(e)),
    };
    Ok(TaskResult {
        succeeded: outcome.succeeded(),
        state: outcome.state.to_string(),
        messages: outcome.messages.clone(),
        vanished: outcome.state == TaskFinal::Vanished,
    })
}
