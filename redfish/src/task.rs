//! The task monitor: following an asynchronous Redfish operation to its final state.
//!
//! Owns `TaskRef` (and how it is read from an action's answer), `TaskPoll`, `TaskOutcome`,
//! `TaskFinal`, `WaitOptions`, `poll_task` and `wait_task`. It tolerates the four monitor styles
//! seen in the field: (a) spec: 202 while running, final 200 with the Task, then 404; (b) bmcweb:
//! `…/Tasks/N/Monitor` 202, then 204 once, then 404 (the Task tells the outcome); (c) Dell/NVIDIA:
//! the monitor *is* the Task, 200 + `TaskState`; (d) sushy: 204 + Location to a Task. It must not
//! start operations (uploads, resets) nor decide what an outcome means for the firmware: it
//! reports the BMC's verdict verbatim.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::client::{RedfishClient, Reply};
use crate::error::RedfishError;
use crate::models::{link_target, Message, Task, TaskService};
use crate::timeouts;

/// Where to follow an asynchronous operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRef {
    /// The task monitor (the `Location` of the action's answer, else the body's `@odata.id`).
    pub monitor_uri: String,
    /// The Task resource, when known (the `@odata.id` of a Task body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_uri: Option<String>,
}

/// A final `TaskState`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskFinal {
    Completed,
    Exception,
    /// Deprecated in favour of `Cancelled`, still sent by some services.
    Killed,
    Cancelled,
    Interrupted,
    /// The task disappeared (404 from its monitor) before a final state was read.
    Vanished,
    /// Any other state a BMC reported as final, as written.
    Unknown(String),
}

impl std::fmt::Display for TaskFinal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskFinal::Completed => f.write_str("Completed"),
            TaskFinal::Exception => f.write_str("Exception"),
            TaskFinal::Killed => f.write_str("Killed"),
            TaskFinal::Cancelled => f.write_str("Cancelled"),
            TaskFinal::Interrupted => f.write_str("Interrupted"),
            TaskFinal::Vanished => f.write_str("vanished (the task disappeared before it ended)"),
            TaskFinal::Unknown(state) => f.write_str(state),
        }
    }
}

/// How a task ended, as the BMC tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub state: TaskFinal,
    /// `TaskStatus` (OK, Warning, Critical), when reported.
    pub status: Option<String>,
    /// The Task's `Messages`, each as `"MessageId: Message"`.
    pub messages: Vec<String>,
}

impl TaskOutcome {
    /// Completed and not Critical.
    pub fn succeeded(&self) -> bool {
        self.state == TaskFinal::Completed
            && !self.status.as_deref().is_some_and(|s| s.eq_ignore_ascii_case("Critical"))
    }
}

/// The result of one poll of a task monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskPoll {
    /// Not finished. `state` is the reported `TaskState` ("Running" when none was reported).
    Running {
        state: String,
        percent: Option<u32>,
        retry_after: Option<Duration>,
    },
    Done(TaskOutcome),
    /// The monitor answered 404/410 and no final state is known.
    Vanished,
}

/// Bounds of `wait_task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// Interval between polls when the BMC sends no `Retry-After`, and after a transient error.
    pub poll_interval: Duration,
    /// Overall bound on the wait, transient errors included.
    pub timeout: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions { poll_interval: timeouts::DEFAULT_TASK_POLL_INTERVAL, timeout: timeouts::DEFAULT_TASK_TIMEOUT }
    }
}

/// What the poller learnt across polls of one task.
#[derive(Debug, Clone, Default)]
struct PollMemory {
    /// The monitor answered 204 (bmcweb style): the Task holds the outcome.
    saw_204: bool,
    /// A Task body (with `Id`) was seen.
    task_body_seen: bool,
    /// The Task resource, from the `TaskRef` or a Task body's `@odata.id`.
    task_uri: Option<String>,
}

impl PollMemory {
    fn new(task: &TaskRef) -> Self {
        PollMemory {
            saw_204: false,
            task_body_seen: false,
            task_uri: task.task_uri.clone().filter(|s| !s.trim().is_empty()),
        }
    }

    fn learn(&mut self, task: &Task) {
        self.task_body_seen = true;
        if let Some(id) = task.odata_id.as_deref().filter(|s| !s.trim().is_empty()) {
            self.task_uri = Some(id.to_string());
        }
    }

    /// The Task to read after a 204: the known one, else (only if no Task body was ever seen)
    /// the monitor URI with its `/Monitor` suffix stripped, as bmcweb lays them out.
    fn task_after_204(&self, monitor: &str) -> Option<String> {
        if let Some(uri) = &self.task_uri {
            return Some(uri.clone());
        }
        if self.task_body_seen {
            return None;
        }
        let trimmed = monitor.trim_end_matches('/');
        trimmed.strip_suffix("/Monitor").filter(|s| !s.is_empty()).map(str::to_string)
    }
}

/// Whether a `TaskState` means "still going".
fn is_running_state(state: &str) -> bool {
    const RUNNING: [&str; 8] =
        ["New", "Starting", "Running", "Suspended", "Pending", "Stopping", "Cancelling", "Service"];
    RUNNING.iter().any(|r| r.eq_ignore_ascii_case(state))
}

/// The task's state (`TaskState`, else the Dell job state) when it is still going.
pub(crate) fn is_running_task(task: &Task) -> Option<String> {
    let state = task.task_state.clone().or_else(|| task.dell_job_state().map(|s| dell_job_state_as_task_state(&s)))?;
    is_running_state(&state).then_some(state)
}

/// The final state named by a `TaskState` that is not a running one.
fn final_state(state: &str) -> TaskFinal {
    match state.to_ascii_lowercase().as_str() {
        "completed" => TaskFinal::Completed,
        "exception" => TaskFinal::Exception,
        "killed" => TaskFinal::Killed,
        "cancelled" | "canceled" => TaskFinal::Cancelled,
        "interrupted" => TaskFinal::Interrupted,
        _ => TaskFinal::Unknown(state.to_string()),
    }
}

/// Dell's `Oem.Dell.JobState` translated to a `TaskState` (used only when `TaskState` is absent).
fn dell_job_state_as_task_state(job_state: &str) -> String {
    match job_state.to_ascii_lowercase().as_str() {
        "completed" => "Completed".into(),
        "failed" | "completedwitherrors" => "Exception".into(),
        // Scheduled, Scheduling, Downloading, Running, Waiting, ...: not finished yet.
        _ => "Running".into(),
    }
}

/// The task's messages, the cause first: a Critical or Warning message of the update itself
/// (`Update.1.0.ApplyFailed`, a vendor's job error) before the task's own bookkeeping
/// (`TaskEvent.*`: started, aborted) and before the informational lines, each group in the BMC's
/// order. An operator reads the first line; it must say why.
fn messages_of(task: &Task) -> Vec<String> {
    let mut messages: Vec<&Message> = task.messages.iter().flatten().collect();
    messages.sort_by_key(|m| cause_rank(m));
    messages.into_iter().filter_map(Message::summary).collect()
}

/// 0: a severe message of the update (the cause); 1: a severe task event; 2: the rest.
fn cause_rank(m: &Message) -> u8 {
    let severity = m.severity.as_deref().or(m.message_severity.as_deref()).unwrap_or_default();
    let severe = severity.eq_ignore_ascii_case("critical") || severity.eq_ignore_ascii_case("warning");
    let task_event = m.message_id.as_deref().is_some_and(|id| id.starts_with("TaskEvent."));
    match (severe, task_event) {
        (true, false) => 0,
        (true, true) => 1,
        (false, _) => 2,
    }
}

/// A Task body, when the reply is a JSON object at all (anything else gives `None`).
fn task_body(reply: &Reply) -> Option<Task> {
    let value = reply.json_value()?;
    if !value.is_object() {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// Interprets a Task document: running, or done with its outcome.
pub(crate) fn interpret_task(task: &Task, retry_after: Option<Duration>) -> TaskPoll {
    let state = task.task_state.clone().or_else(|| task.dell_job_state().map(|s| dell_job_state_as_task_state(&s)));
    match state {
        Some(state) if is_running_state(&state) => {
            TaskPoll::Running { state, percent: task.percent_complete, retry_after }
        }
        Some(state) => TaskPoll::Done(TaskOutcome {
            state: final_state(&state),
            status: task.task_status.clone(),
            messages: messages_of(task),
        }),
        None => TaskPoll::Done(TaskOutcome {
            state: TaskFinal::Unknown("no TaskState".into()),
            status: task.task_status.clone(),
            messages: messages_of(task),
        }),
    }
}

/// Interprets a 202 answer of a task monitor: a body without `Id` is a partial Task whose fields
/// are ignored.
pub(crate) fn interpret_202(task: Option<&Task>, retry_after: Option<Duration>) -> TaskPoll {
    match task.filter(|t| t.id.is_some()) {
        Some(t) => {
            let state = t.task_state.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "Running".into());
            TaskPoll::Running { state, percent: t.percent_complete, retry_after }
        }
        None => TaskPoll::Running { state: "Running".into(), percent: None, retry_after },
    }
}

/// Reads the `TaskRef` out of an action's accepted answer (200/201/202/204): the monitor is the
/// `Location` header, else the body's `@odata.id` when the body is a Task; `task_uri` is the
/// `@odata.id` of a Task body. A 202 body without `Id` is a partial Task and is ignored.
/// `None` when the answer names no task (a synchronous completion).
pub(crate) fn task_ref_from_reply(client: &RedfishClient, reply: &Reply) -> Option<TaskRef> {
    let body = task_body(reply).filter(|t| !(reply.status == 202 && t.id.is_none()));
    let body_task_id = body
        .as_ref()
        .filter(|t| t.looks_like_task() || reply.status == 202)
        .and_then(|t| t.odata_id.clone())
        .filter(|s| !s.trim().is_empty());
    let monitor = reply.location().or_else(|| body_task_id.clone())?;
    let normalise = |link: &str| {
        client
            .resolve_from(link, Some(&reply.url))
            .map(|u| RedfishClient::path_of(&u))
            .unwrap_or_else(|_| link.to_string())
    };
    Some(TaskRef { monitor_uri: normalise(&monitor), task_uri: body_task_id.as_deref().map(normalise) })
}

/// The `Id` of a Task body lacking `@odata.id` (used to find the Task through the TaskService).
pub(crate) fn orphan_task_id(reply: &Reply) -> Option<String> {
    let body = task_body(reply)?;
    if body.odata_id.is_some() || !body.looks_like_task() {
        return None;
    }
    body.id.filter(|s| !s.is_empty())
}

impl RedfishClient {
    /// The task an action's accepted answer names (see `task_ref_from_reply`); a Task body with
    /// an `Id` but no `@odata.id` is looked up through the TaskService. `None`: no task named.
    pub(crate) async fn task_of_answer(&self, reply: &Reply) -> Option<TaskRef> {
        let mut task = task_ref_from_reply(self, reply);
        match task.as_mut() {
            None => {
                let uri = self.find_task_uri_by_id(&orphan_task_id(reply)?).await?;
                task = Some(TaskRef { monitor_uri: uri.clone(), task_uri: Some(uri) });
            }
            Some(t) if t.task_uri.is_none() => {
                if let Some(id) = orphan_task_id(reply) {
                    t.task_uri = self.find_task_uri_by_id(&id).await;
                }
            }
            Some(_) => {}
        }
        task
    }

    /// Polls a task monitor once. See the module docs for the styles handled.
    pub async fn poll_task(&self, task: &TaskRef) -> Result<TaskPoll, RedfishError> {
        let mut memory = PollMemory::new(task);
        self.poll_once(task, &mut memory).await
    }

    async fn poll_once(&self, task: &TaskRef, memory: &mut PollMemory) -> Result<TaskPoll, RedfishError> {
        let url = self.resolve(&task.monitor_uri)?;
        let reply = self.get(&url).await?;
        let retry_after = reply.retry_after();
        match reply.status {
            202 => {
                let body = task_body(&reply);
                if let Some(t) = body.as_ref().filter(|t| t.id.is_some()) {
                    memory.learn(t);
                }
                Ok(interpret_202(body.as_ref(), retry_after))
            }
            204 => {
                memory.saw_204 = true;
                self.outcome_after_204(task, memory).await
            }
            200..=299 => {
                if let Some(t) = task_body(&reply).filter(Task::looks_like_task) {
                    memory.learn(&t);
                    return Ok(interpret_task(&t, retry_after));
                }
                // The operation's own final answer (spec style): done. The Task, if known and
                // distinct from the monitor, holds the verdict.
                if let Some(uri) = memory.task_uri.clone() {
                    if let Some(poll) = self.read_task(&uri, &url).await? {
                        return Ok(poll);
                    }
                }
                Ok(TaskPoll::Done(TaskOutcome {
                    state: TaskFinal::Completed,
                    status: None,
                    messages: reply_messages(&reply),
                }))
            }
            404 | 410 => {
                if memory.saw_204 {
                    return self.outcome_after_204(task, memory).await;
                }
                if let Some(uri) = memory.task_uri.clone() {
                    if let Some(poll) = self.read_task(&uri, &url).await? {
                        return Ok(poll);
                    }
                }
                Ok(TaskPoll::Vanished)
            }
            _ => Err(self.status_error(&reply)),
        }
    }

    /// After the monitor answered 204 (now or earlier): read the Task for the real state; no
    /// Task to read (or it is gone) means Completed.
    async fn outcome_after_204(&self, task: &TaskRef, memory: &mut PollMemory) -> Result<TaskPoll, RedfishError> {
        let monitor_url = self.resolve(&task.monitor_uri)?;
        if let Some(uri) = memory.task_after_204(&task.monitor_uri) {
            if let Some(poll) = self.read_task(&uri, &monitor_url).await? {
                return Ok(poll);
            }
        }
        Ok(TaskPoll::Done(TaskOutcome { state: TaskFinal::Completed, status: None, messages: Vec::new() }))
    }

    /// GETs a Task resource (not the monitor itself): `Some(poll)` if it is a Task, `None` if it
    /// is gone (404/410), is the monitor we just read, or is not a Task.
    async fn read_task(&self, uri: &str, monitor_url: &Url) -> Result<Option<TaskPoll>, RedfishError> {
        let url = self.resolve(uri)?;
        if url == *monitor_url {
            return Ok(None);
        }
        let reply = self.get(&url).await?;
        if reply.status == 404 || reply.status == 410 {
            return Ok(None);
        }
        let reply = self.ensure_success(reply)?;
        let retry_after = reply.retry_after();
        Ok(task_body(&reply).filter(Task::looks_like_task).map(|t| interpret_task(&t, retry_after)))
    }

    /// Polls until the task is final, honouring `Retry-After` (else `opts.poll_interval`) and
    /// tolerating transient errors (a BMC rebooting mid-update) until `opts.timeout` has passed.
    /// `on_progress` sees every successful poll, the last one included.
    ///
    /// A monitor that vanishes with no final state known gives `TaskFinal::Vanished`;
    /// after a 204 (bmcweb) the Task is read for the real state, and none means Completed.
    pub async fn wait_task(
        &self,
        task: &TaskRef,
        opts: WaitOptions,
        mut on_progress: impl FnMut(&TaskPoll),
    ) -> Result<TaskOutcome, RedfishError> {
        let start = tokio::time::Instant::now();
        let deadline = start + opts.timeout;
        let mut memory = PollMemory::new(task);
        let mut last_state = String::from("not polled yet");
        let mut last_error: Option<String>;
        loop {
            let delay = match self.poll_once(task, &mut memory).await {
                Ok(poll) => {
                    on_progress(&poll);
                    match poll {
                        TaskPoll::Done(outcome) => return Ok(outcome),
                        TaskPoll::Vanished => {
                            return Ok(TaskOutcome { state: TaskFinal::Vanished, status: None, messages: Vec::new() })
                        }
                        TaskPoll::Running { state, percent, retry_after } => {
                            last_state = match percent {
                                Some(p) => format!("{state} {p}%"),
                                None => state,
                            };
                            last_error = None;
                            retry_after.map(|r| r.min(timeouts::MAX_RETRY_AFTER)).unwrap_or(opts.poll_interval)
                        }
                    }
                }
                Err(e) if e.is_transient() => {
                    tracing::warn!(bmc = %self.address(), monitor = %task.monitor_uri, error = %e, "task poll failed; will retry");
                    let delay = e.retry_after().map(|r| r.min(timeouts::MAX_RETRY_AFTER)).unwrap_or(opts.poll_interval);
                    last_error = Some(e.to_string());
                    delay
                }
                Err(e) => return Err(e),
            };
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(RedfishError::TaskTimeout {
                    bmc: self.bmc(),
                    url: self.resolve(&task.monitor_uri).map_or_else(|_| task.monitor_uri.clone(), |u| u.to_string()),
                    waited: now - start,
                    last_state,
                    last_error,
                });
            }
            tokio::time::sleep(delay.min(deadline - now)).await;
        }
    }

    /// Finds the `@odata.id` of the Task with this `Id` by walking the root's `Tasks` link (the
    /// TaskService) → its `Tasks` collection (for answers carrying a Task body without
    /// `@odata.id`). Best effort: `None` on any failure.
    pub(crate) async fn find_task_uri_by_id(&self, id: &str) -> Option<String> {
        let (root_url, root) = self.service_root().await.ok()?;
        let service_url = self.resolve_from(link_target(&root.tasks)?, Some(&root_url)).ok()?;
        let service: TaskService = self.get_json(&service_url).await.ok()?;
        let tasks_url = self.resolve_from(link_target(&service.tasks)?, Some(&service_url)).ok()?;
        let members = self.collection_members(&tasks_url).await.ok()?;
        members.into_iter().find_map(|(link, url)| {
            let last = url.path().trim_end_matches('/').rsplit('/').next()?;
            (last == id).then(|| RedfishClient::path_of(&url)).or_else(|| {
                // keep the link as the BMC wrote it when it matches textually
                link.trim_end_matches('/').ends_with(&format!("/{id}")).then_some(link)
            })
        })
    }
}

/// Messages of a non-Task final answer (`@Message.ExtendedInfo`), as `"MessageId: Message"`.
fn reply_messages(reply: &Reply) -> Vec<String> {
    serde_json::from_slice::<crate::models::ErrorBody>(&reply.body).map(|b| b.messages()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(json: &str) -> Task {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn running_states() {
        for s in ["New", "Starting", "Running", "Suspended", "Pending", "Stopping", "Cancelling", "Service", "running"]
        {
            let poll = interpret_task(&task(&format!(r##"{{"Id":"1","TaskState":"{s}"}}"##)), None);
            assert!(matches!(poll, TaskPoll::Running { .. }), "{s}: {poll:?}");
        }
    }

    #[test]
    fn final_states() {
        let cases = [
            ("Completed", TaskFinal::Completed),
            ("Exception", TaskFinal::Exception),
            ("Killed", TaskFinal::Killed),
            ("Cancelled", TaskFinal::Cancelled),
            ("Interrupted", TaskFinal::Interrupted),
            ("Weird", TaskFinal::Unknown("Weird".into())),
        ];
        for (s, want) in cases {
            let poll = interpret_task(&task(&format!(r##"{{"Id":"1","TaskState":"{s}"}}"##)), None);
            match poll {
                TaskPoll::Done(o) => assert_eq!(o.state, want),
                other => panic!("{s}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_cause_comes_before_the_generic_task_lines() {
        let task: Task = serde_json::from_str(
            r##"{"TaskState":"Exception","Messages":[
                {"MessageId":"TaskEvent.1.0.TaskStarted","Severity":"OK","Message":"The task with Id '1' has started."},
                {"MessageId":"Update.1.0.UpdateInProgress","Severity":"OK","Message":"An update is in progress."},
                {"MessageId":"TaskEvent.1.0.TaskAborted","Severity":"Critical","Message":"The task with Id '1' has been aborted."},
                {"MessageId":"Update.1.0.ApplyFailed","MessageSeverity":"Critical","Message":"Installation of image 'bmc.bin' failed: checksum"}]}"##,
        )
        .unwrap();
        let TaskPoll::Done(outcome) = interpret_task(&task, None) else { panic!("a final state") };
        assert_eq!(
            outcome.messages,
            vec![
                "Update.1.0.ApplyFailed: Installation of image 'bmc.bin' failed: checksum".to_string(),
                "TaskEvent.1.0.TaskAborted: The task with Id '1' has been aborted.".to_string(),
                "TaskEvent.1.0.TaskStarted: The task with Id '1' has started.".to_string(),
                "Update.1.0.UpdateInProgress: An update is in progress.".to_string(),
            ]
        );
    }

    #[test]
    fn exception_carries_messages_and_fails() {
        let poll = interpret_task(
            &task(
                r##"{"Id":"3","TaskState":"Exception","TaskStatus":"Critical",
                "Messages":[{"MessageId":"Update.1.0.ApplyFailed","Message":"Installation failed on BMC_0."}]}"##,
            ),
            None,
        );
        let TaskPoll::Done(outcome) = poll else { panic!("{poll:?}") };
        assert!(!outcome.succeeded());
        assert_eq!(outcome.messages, vec!["Update.1.0.ApplyFailed: Installation failed on BMC_0.".to_string()]);
    }

    #[test]
    fn succeeded_rules() {
        let o =
            |state, status: Option<&str>| TaskOutcome { state, status: status.map(str::to_string), messages: vec![] };
        assert!(o(TaskFinal::Completed, None).succeeded());
        assert!(o(TaskFinal::Completed, Some("OK")).succeeded());
        assert!(o(TaskFinal::Completed, Some("Warning")).succeeded());
        assert!(!o(TaskFinal::Completed, Some("Critical")).succeeded());
        assert!(!o(TaskFinal::Exception, Some("OK")).succeeded());
        assert!(!o(TaskFinal::Vanished, None).succeeded());
    }

    #[test]
    fn partial_202_body_is_ignored() {
        // No Id: a partial Task; its (bogus) TaskState and PercentComplete are ignored.
        let partial = task(r##"{"TaskState":"Exception","PercentComplete":90}"##);
        assert_eq!(
            interpret_202(Some(&partial), Some(Duration::from_secs(3))),
            TaskPoll::Running { state: "Running".into(), percent: None, retry_after: Some(Duration::from_secs(3)) }
        );
        let full = task(r##"{"Id":"4","TaskState":"Starting","PercentComplete":"10"}"##);
        assert_eq!(
            interpret_202(Some(&full), None),
            TaskPoll::Running { state: "Starting".into(), percent: Some(10), retry_after: None }
        );
        assert!(matches!(interpret_202(None, None), TaskPoll::Running { .. }));
    }

    #[test]
    fn dell_job_state_fallback() {
        let poll = interpret_task(
            &task(r##"{"@odata.type":"#Task.v1_4_3.Task","Id":"JID_1","Oem":{"Dell":{"JobState":"Scheduled"}}}"##),
            None,
        );
        assert!(matches!(poll, TaskPoll::Running { .. }));
        let poll = interpret_task(
            &task(r##"{"@odata.type":"#Task.v1_4_3.Task","Id":"JID_1","Oem":{"Dell":{"JobState":"Failed"}}}"##),
            None,
        );
        assert!(matches!(poll, TaskPoll::Done(TaskOutcome { state: TaskFinal::Exception, .. })));
        let poll = interpret_task(&task(r##"{"@odata.type":"#Task.v1_4_3.Task","Id":"9"}"##), None);
        assert!(matches!(poll, TaskPoll::Done(TaskOutcome { state: TaskFinal::Unknown(_), .. })));
    }

    #[test]
    fn monitor_suffix_derivation_only_when_no_task_seen() {
        let mut m = PollMemory::default();
        assert_eq!(
            m.task_after_204("/redfish/v1/TaskService/Tasks/5/Monitor").as_deref(),
            Some("/redfish/v1/TaskService/Tasks/5")
        );
        assert_eq!(m.task_after_204("/redfish/v1/TaskMonitors/5"), None);
        m.task_body_seen = true;
        assert_eq!(m.task_after_204("/redfish/v1/TaskService/Tasks/5/Monitor"), None);
        m.task_uri = Some("/redfish/v1/TaskService/Tasks/6".into());
        assert_eq!(
            m.task_after_204("/redfish/v1/TaskService/Tasks/5/Monitor").as_deref(),
            Some("/redfish/v1/TaskService/Tasks/6")
        );
    }

    fn reply(status: u16, location: Option<&str>, body: &str) -> Reply {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(l) = location {
            headers.insert(reqwest::header::LOCATION, l.parse().unwrap());
        }
        Reply {
            method: reqwest::Method::POST,
            url: Url::parse("http://10.0.0.1:8000/redfish/v1/UpdateService/upload").unwrap(),
            status,
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    fn client() -> RedfishClient {
        RedfishClient::new(
            crate::BmcEndpoint {
                address: "http://10.0.0.1:8000".parse().unwrap(),
                username: "u".into(),
                password: "p".into(),
            },
            crate::ClientOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn task_ref_from_accepted_answers() {
        let c = client();
        // spec/bmcweb: Location is the monitor, the Task body names the Task.
        let r = reply(
            202,
            Some("/redfish/v1/TaskService/Tasks/4/Monitor"),
            r##"{"@odata.id":"/redfish/v1/TaskService/Tasks/4","Id":"4","TaskState":"Running"}"##,
        );
        assert_eq!(
            task_ref_from_reply(&c, &r),
            Some(TaskRef {
                monitor_uri: "/redfish/v1/TaskService/Tasks/4/Monitor".into(),
                task_uri: Some("/redfish/v1/TaskService/Tasks/4".into()),
            })
        );
        // sushy: 204 + Location, no body; an absolute Location is kept as a path on our BMC.
        let r = reply(204, Some("http://bmc.example:443/redfish/v1/TaskService/Tasks/42"), "");
        assert_eq!(
            task_ref_from_reply(&c, &r),
            Some(TaskRef { monitor_uri: "/redfish/v1/TaskService/Tasks/42".into(), task_uri: None })
        );
        // A 202 partial body (no Id) is ignored entirely: no Location, no task.
        let r = reply(202, None, r##"{"@odata.id":"/redfish/v1/TaskService/Tasks/5"}"##);
        assert_eq!(task_ref_from_reply(&c, &r), None);
        // A 202 partial body next to a Location: the monitor only.
        let r = reply(202, Some("/taskmon/5"), r##"{"@odata.id":"/redfish/v1/TaskService/Tasks/5"}"##);
        assert_eq!(task_ref_from_reply(&c, &r), Some(TaskRef { monitor_uri: "/taskmon/5".into(), task_uri: None }));
        // 200 with a non-Task body and no Location: synchronous, nothing to follow.
        let r = reply(200, None, r##"{"@odata.id":"/redfish/v1/UpdateService","Id":"UpdateService"}"##);
        assert_eq!(task_ref_from_reply(&c, &r), None);
        // A Task with Id but no @odata.id: to be looked up through the TaskService.
        let r = reply(202, None, r##"{"@odata.type":"#Task.v1_4_3.Task","Id":"JID_123","TaskState":"New"}"##);
        assert_eq!(task_ref_from_reply(&c, &r), None);
        assert_eq!(orphan_task_id(&r).as_deref(), Some("JID_123"));
        // A relative Location resolves against the request URL.
        let r = reply(202, Some("Tasks/9"), "");
        assert_eq!(
            task_ref_from_reply(&c, &r).map(|t| t.monitor_uri),
            Some("/redfish/v1/UpdateService/Tasks/9".into())
        );
    }

    #[test]
    fn task_ref_serde_round_trip() {
        let t = TaskRef { monitor_uri: "/m".into(), task_uri: None };
        let s = serde_json::to_string(&t).unwrap();
        assert_eq!(s, r##"{"monitor_uri":"/m"}"##);
        assert_eq!(serde_json::from_str::<TaskRef>(&s).unwrap(), t);
    }
}
