//! Update tasks already running on a BMC, read from the TaskService (the ServiceRoot's `Tasks`
//! link → its `Tasks` collection → each Task), so an upload retried after its worker died can
//! follow the flash its lost attempt started instead of POSTing the image a second time.
//!
//! Owns `RunningUpdateTask` and `running_update_tasks`. What makes a Task an update: the request
//! it runs was POSTed to the UpdateService (`Payload.TargetUri`, as bmc-sim and bmcweb report it),
//! or its messages come from the `Update` registry (`Update.1.x.*`), or its Name/Description say
//! "update" or "firmware" (Dell jobs). What it updates: every `MessageArgs` entry and the
//! `Targets` of its JSON payload (`Payload.JsonBody`), as the BMC wrote them. The captured vendor
//! trees hold no running update task (only finished "Computer Reset" tasks, which this skips).
//! It decides nothing about whose task it is: the caller matches the names.

use futures::stream::{self, StreamExt};
use serde_json::Value;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::models::{link_target, Task, TaskService};
use crate::task::{is_running_task, TaskRef};

/// Task documents read at once from one BMC.
const TASK_READS_AT_ONCE: usize = 4;

/// One update task the BMC reports as not finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningUpdateTask {
    /// Follow it through the Task resource itself (monitor and task are the same URI).
    pub task: TaskRef,
    /// The reported `TaskState` (or Dell job state), e.g. "Running".
    pub state: String,
    /// Inventory ids or URIs the task names (message arguments, payload targets); empty when it
    /// names none yet.
    pub names: Vec<String>,
}

impl RedfishClient {
    /// Every update task the BMC reports as still running (see the module docs). A BMC without a
    /// TaskService (no `Tasks` link, or a 404 for it) has none; any other failure is an error,
    /// so the caller does not upload blind.
    pub async fn running_update_tasks(&self) -> Result<Vec<RunningUpdateTask>, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        let Some(service_link) = link_target(&root.tasks) else { return Ok(Vec::new()) };
        let service_url = self.resolve_from(service_link, Some(&root_url))?;
        let service: TaskService = match self.get_json(&service_url).await {
            Ok(s) => s,
            Err(e) if e.http_status() == Some(404) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let Some(tasks_link) = link_target(&service.tasks) else { return Ok(Vec::new()) };
        let tasks_url = self.resolve_from(tasks_link, Some(&service_url))?;
        let members = self.collection_members(&tasks_url).await?;
        let reads = stream::iter(members)
            .map(|(_, url)| async move {
                let reply = self.get(&url).await?;
                if reply.status == 404 || reply.status == 410 {
                    return Ok(None); // finished and forgotten between the two reads
                }
                let reply = self.ensure_success(reply)?;
                let task: Option<Task> = reply.json_value().and_then(|v| serde_json::from_value(v).ok());
                Ok(task.and_then(|t| running_update(&t, &RedfishClient::path_of(&url))))
            })
            .buffered(TASK_READS_AT_ONCE)
            .collect::<Vec<Result<Option<RunningUpdateTask>, RedfishError>>>()
            .await;
        let mut out = Vec::new();
        for read in reads {
            out.extend(read?);
        }
        Ok(out)
    }
}

/// The task as a running update, or `None` when it is finished or not an update.
fn running_update(task: &Task, uri: &str) -> Option<RunningUpdateTask> {
    let state = is_running_task(task)?;
    if !is_update(task) {
        return None;
    }
    let uri = task.odata_id.clone().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| uri.to_string());
    Some(RunningUpdateTask {
        task: TaskRef { monitor_uri: uri.clone(), task_uri: Some(uri) },
        state,
        names: names(task),
    })
}

fn is_update(task: &Task) -> bool {
    let payload_uri =
        task.extra.get("Payload").and_then(|p| p.get("TargetUri")).and_then(Value::as_str).unwrap_or_default();
    let text = |key: &str| task.extra.get(key).and_then(Value::as_str).map(str::to_ascii_lowercase);
    let says_update = [task.name.as_deref().map(str::to_ascii_lowercase), text("Description")]
        .into_iter()
        .flatten()
        .any(|t| t.contains("update") || t.contains("firmware"));
    payload_uri.to_ascii_lowercase().contains("/updateservice")
        || task.messages.iter().flatten().any(|m| m.message_id.as_deref().is_some_and(|id| id.starts_with("Update.")))
        || says_update
}

fn names(task: &Task) -> Vec<String> {
    let mut out: Vec<String> =
        task.messages.iter().flatten().flat_map(|m| m.message_args.iter().flatten().cloned()).collect();
    let body = task.extra.get("Payload").and_then(|p| p.get("JsonBody"));
    let body = match body {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
        Some(v) => Some(v.clone()),
        None => None,
    };
    if let Some(targets) = body.as_ref().and_then(|b| b.get("Targets")).and_then(Value::as_array) {
        out.extend(targets.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out.retain(|n| !n.trim().is_empty());
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(json: &str) -> Task {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_running_bmc_sim_update_task_is_found_with_its_targets() {
        let t = task(
            r##"{"@odata.id":"/redfish/v1/TaskService/Tasks/3","Id":"3","Name":"Firmware Update Task 3",
                "TaskState":"Running","PercentComplete":40,
                "Messages":[{"MessageId":"Update.1.0.TargetDetermined","MessageArgs":["BIOS","bios.bin"]}],
                "Payload":{"TargetUri":"/redfish/v1/UpdateService/upload","HttpOperation":"POST","JsonBody":""}}"##,
        );
        let found = running_update(&t, "/x").unwrap();
        assert_eq!(found.task.monitor_uri, "/redfish/v1/TaskService/Tasks/3");
        assert_eq!(found.state, "Running");
        assert_eq!(found.names, vec!["BIOS".to_string(), "bios.bin".to_string()]);
    }

    #[test]
    fn finished_tasks_and_resets_are_not_running_updates() {
        let done = task(
            r##"{"@odata.id":"/t/1","Id":"1","TaskState":"Completed",
                "Payload":{"TargetUri":"/redfish/v1/UpdateService/upload"}}"##,
        );
        assert!(running_update(&done, "/t/1").is_none());
        // The captured NVIDIA tree's tasks: a Computer Reset (here still running).
        let reset = task(
            r##"{"@odata.id":"/redfish/v1/TaskService/Tasks/1","Id":"1","Name":"Computer Reset",
                "Description":"Task for Computer Reset","TaskState":"Running",
                "Messages":[{"MessageId":"TaskEvent.1.0.TaskStarted","MessageArgs":["1"]}]}"##,
        );
        assert!(running_update(&reset, "/t/1").is_none());
    }

    #[test]
    fn simple_update_targets_come_from_the_json_body() {
        let t = task(
            r##"{"@odata.id":"/t/7","Id":"7","TaskState":"New",
                "Payload":{"TargetUri":"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
                           "JsonBody":"{\"ImageURI\":\"http://x/b.bin\",\"Targets\":[\"/redfish/v1/UpdateService/FirmwareInventory/BMC\"]}"}}"##,
        );
        let found = running_update(&t, "/t/7").unwrap();
        assert_eq!(found.names, vec!["/redfish/v1/UpdateService/FirmwareInventory/BMC".to_string()]);
    }
}
