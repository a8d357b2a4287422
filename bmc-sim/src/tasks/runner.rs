//! Running one update task: create it, fetch/verify the image, progress for `task_seconds`,
//! then apply (activation `immediate`) or stage (any other activation: the image header's
//! `activation=`, else the request's apply time) the version, count the installs, and free the
//! BMC's update slot. Honours the `fail_next_tasks` and `version_never_changes` faults.
//! Does not parse HTTP requests (the push routes build an [`UpdateRequest`]).

use std::sync::Arc;

use crate::faults::inject::take_task_failure;
use crate::fleet::clock;
use crate::fleet::state::{Host, HostData, Staged};
use crate::tasks::style::monitor_uri;
use crate::tasks::task::{Task, TaskMessage, TaskState};
use crate::update::activation::Activation;
use crate::update::image::{ImageHeader, ReceivedImage};
use crate::update::image_fetch::fetch_image;
use crate::update::slot::UpdateSlot;
use hostfw_fleet::ApplyTime;

/// Progress steps over `task_seconds` (PercentComplete moves in these increments).
const PROGRESS_STEPS: u32 = 10;
/// Finished tasks kept per BMC; older finished ones are forgotten (GET → 404).
const MAX_TASKS_KEPT: usize = 256;

/// Where the image comes from.
pub enum ImageSource {
    /// Pushed by the client (multipart or HttpPushUri), already received.
    Received { image: ReceivedImage, name: String },
    /// SimpleUpdate: fetched by the task.
    Remote { uri: String },
}

/// An accepted update, ready to run.
pub struct UpdateRequest {
    pub source: ImageSource,
    /// Inventory member ids the client restricted the update to (`None`: all that match).
    pub only_members: Option<Vec<String>>,
    pub apply_time: ApplyTime,
}

/// Create the task (state New), count it, and run it in the background. Returns the new task.
pub fn start_update(slot: UpdateSlot, req: UpdateRequest, posted_to: &str) -> Task {
    let host = slot.host().clone();
    let (task, injected_failure) = {
        let mut d = host.data();
        let id = d.next_task_id;
        d.next_task_id += 1;
        let task = Task::new(id, monitor_uri(host.spec.task_style, id), posted_to.to_string());
        d.tasks.insert(id, task.clone());
        forget_old_tasks(&mut d);
        d.stats.uploads += 1;
        (task, take_task_failure(&mut d))
    };
    host.fleet.counters.upload_started();
    tracing::info!(host = %host.spec.id, task = task.id, injected_failure, "update task created");
    tokio::spawn(run(slot, task.id, req, injected_failure));
    task
}

async fn run(slot: UpdateSlot, id: u64, req: UpdateRequest, injected_failure: bool) {
    let host = slot.host().clone();
    update_task(&host, id, |t| {
        t.state = TaskState::Running;
        t.messages.push(TaskMessage::task_started(id));
    });
    let (image, name) = match req.source {
        ImageSource::Received { image, name } => (image, name),
        ImageSource::Remote { uri } => {
            update_task(&host, id, |t| t.messages.push(TaskMessage::transferring(&uri, "BMC")));
            match fetch_image(&host.fleet.http, &uri).await {
                Ok(image) => (image, uri),
                Err(reason) => return fail(slot, id, TaskMessage::transfer_failed(&uri, &reason.to_string())),
            }
        }
    };
    tracing::debug!(host = %host.spec.id, task = id, image = %name, bytes = image.size, "image received");
    let Some(header) = image.header else {
        return fail(slot, id, TaskMessage::verification_failed(&name, "image not recognised"));
    };
    // Bound first: a guard living through the match would deadlock `fail`.
    let chosen = choose_targets(&host.data(), &header, req.only_members.as_deref());
    let targets = match chosen {
        Ok(t) => t,
        Err(reason) => return fail(slot, id, TaskMessage::apply_failed(&name, &reason)),
    };
    update_task(&host, id, |t| {
        for target in &targets {
            t.messages.push(TaskMessage::target_determined(target, &name));
            t.messages.push(TaskMessage::installing(&name, target));
        }
    });

    let step = clock::secs(host.spec.task_seconds) / PROGRESS_STEPS;
    for i in 1..PROGRESS_STEPS {
        tokio::time::sleep(step).await;
        update_task(&host, id, |t| t.percent = (i * 100 / PROGRESS_STEPS) as u8);
    }
    tokio::time::sleep(step).await;

    if injected_failure {
        return fail(slot, id, TaskMessage::apply_failed(&name, "injected failure"));
    }
    let version = header.version;
    let activation = header.activation.unwrap_or_else(|| Activation::from_apply_time(req.apply_time));
    slot.release_with(|d| {
        let change = !d.faults.version_never_changes;
        let mut messages = Vec::new();
        for m in d.members.iter_mut().filter(|m| targets.contains(&m.id)) {
            if activation == Activation::Immediate {
                if change {
                    m.version = version.clone();
                    m.staged = None;
                }
                messages.push(TaskMessage::update_successful(&m.id, &name));
            } else {
                if change {
                    m.staged = Some(Staged { version: version.clone(), on: activation });
                }
                messages.push(TaskMessage::await_to_activate(&name, &m.id));
            }
            if change {
                *d.stats.installs.entry(m.id.clone()).or_default() += 1;
            }
        }
        messages.push(TaskMessage::completed_ok(id));
        if let Some(t) = d.tasks.get_mut(&id) {
            t.finish(TaskState::Completed, messages);
        }
    });
    tracing::info!(host = %host.spec.id, task = id, %version, activation = activation.as_str(), "update task completed");
}

/// The members this image updates, or why there are none.
fn choose_targets(d: &HostData, header: &ImageHeader, only: Option<&[String]>) -> Result<Vec<String>, String> {
    let matching: Vec<_> = d
        .members
        .iter()
        .filter(|m| header.applies_to.is_match(&m.id))
        .filter(|m| only.is_none_or(|ids| ids.contains(&m.id)))
        .collect();
    if matching.is_empty() {
        return Err(format!("no inventory member matches applies_to={}", header.applies_to.as_str()));
    }
    if let Some(m) = matching.iter().find(|m| !m.updateable) {
        return Err(format!("inventory member {} is not updateable", m.id));
    }
    Ok(matching.into_iter().map(|m| m.id.clone()).collect())
}

fn fail(slot: UpdateSlot, id: u64, why: TaskMessage) {
    let host = slot.host().clone();
    tracing::info!(host = %host.spec.id, task = id, reason = %why.text, "update task failed");
    slot.release_with(|d| {
        if let Some(t) = d.tasks.get_mut(&id) {
            t.finish(TaskState::Exception, vec![why, TaskMessage::aborted(id)]);
        }
    });
}

fn update_task(host: &Arc<Host>, id: u64, f: impl FnOnce(&mut Task)) {
    if let Some(t) = host.data().tasks.get_mut(&id) {
        f(t);
    }
}

fn forget_old_tasks(d: &mut HostData) {
    while d.tasks.len() > MAX_TASKS_KEPT {
        let Some(oldest_done) = d.tasks.iter().find(|(_, t)| t.state.is_done()).map(|(id, _)| *id) else {
            break;
        };
        d.tasks.remove(&oldest_done);
    }
}
