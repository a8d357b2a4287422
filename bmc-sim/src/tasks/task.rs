//! The Task resource (Task.v1_7): its state, messages (Update / TaskEvent registries) and JSON.
//! Pure data; running a task is `tasks::runner`, answering monitors is `tasks::style`.

use serde_json::{json, Value};

use crate::fleet::clock;

/// Task collection URI.
pub const TASKS_URI: &str = "/redfish/v1/TaskService/Tasks";

/// The TaskState values this simulator uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    New,
    Running,
    Completed,
    Exception,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::New => "New",
            TaskState::Running => "Running",
            TaskState::Completed => "Completed",
            TaskState::Exception => "Exception",
        }
    }
    pub fn is_done(self) -> bool {
        matches!(self, TaskState::Completed | TaskState::Exception)
    }
}

/// One entry of `Task.Messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskMessage {
    /// Full MessageId, e.g. `Update.1.0.UpdateSuccessful`.
    pub id: &'static str,
    pub text: String,
    pub args: Vec<String>,
    /// OK | Warning | Critical.
    pub severity: &'static str,
}

impl TaskMessage {
    fn new(id: &'static str, severity: &'static str, text: String, args: &[&str]) -> Self {
        TaskMessage { id, text, args: args.iter().map(|s| s.to_string()).collect(), severity }
    }
    pub fn task_started(task: u64) -> Self {
        let t = task.to_string();
        Self::new("TaskEvent.1.0.TaskStarted", "OK", format!("The task with Id '{t}' has started."), &[&t])
    }
    pub fn transferring(image: &str, target: &str) -> Self {
        let text = format!("Image '{image}' is being transferred to '{target}'.");
        Self::new("Update.1.0.TransferringToComponent", "OK", text, &[image, target])
    }
    pub fn target_determined(target: &str, image: &str) -> Self {
        let text = format!("The target device '{target}' will be updated with image '{image}'.");
        Self::new("Update.1.0.TargetDetermined", "OK", text, &[target, image])
    }
    pub fn installing(image: &str, target: &str) -> Self {
        let text = format!("Image '{image}' is being installed on '{target}'.");
        Self::new("Update.1.0.InstallingOnComponent", "OK", text, &[image, target])
    }
    pub fn update_successful(target: &str, image: &str) -> Self {
        let text = format!("Device '{target}' successfully updated with image '{image}'.");
        Self::new("Update.1.0.UpdateSuccessful", "OK", text, &[target, image])
    }
    pub fn await_to_activate(image: &str, target: &str) -> Self {
        let text = format!("Awaiting for an action to proceed with activating image '{image}' on '{target}'.");
        Self::new("Update.1.0.AwaitToActivate", "OK", text, &[image, target])
    }
    pub fn transfer_failed(image: &str, reason: &str) -> Self {
        let text = format!("Transfer of image '{image}' failed: {reason}");
        Self::new("Update.1.0.TransferFailed", "Critical", text, &[image, reason])
    }
    pub fn verification_failed(image: &str, reason: &str) -> Self {
        let text = format!("Verification of image '{image}' failed: {reason}");
        Self::new("Update.1.0.VerificationFailed", "Critical", text, &[image, reason])
    }
    pub fn apply_failed(image: &str, reason: &str) -> Self {
        let text = format!("Installation of image '{image}' failed: {reason}");
        Self::new("Update.1.0.ApplyFailed", "Critical", text, &[image, reason])
    }
    pub fn completed_ok(task: u64) -> Self {
        let t = task.to_string();
        Self::new("TaskEvent.1.0.TaskCompletedOK", "OK", format!("The task with Id '{t}' has completed."), &[&t])
    }
    pub fn aborted(task: u64) -> Self {
        let t = task.to_string();
        Self::new("TaskEvent.1.0.TaskAborted", "Critical", format!("The task with Id '{t}' has been aborted."), &[&t])
    }

    fn to_json(&self) -> Value {
        json!({
            "@odata.type": "#Message.v1_1_1.Message",
            "MessageId": self.id,
            "Message": self.text,
            "MessageArgs": self.args,
            "MessageSeverity": self.severity,
            "Severity": self.severity,
            "Resolution": "None",
        })
    }
}

/// One update task of one BMC.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: u64,
    pub state: TaskState,
    pub percent: u8,
    pub messages: Vec<TaskMessage>,
    pub start_time: String,
    pub end_time: Option<String>,
    /// Where this task's monitor lives (style dependent).
    pub monitor_uri: String,
    /// The monitor already gave its one final answer (spec 200 / bmcweb 204): now 404.
    pub monitor_final_served: bool,
    /// The URI the update was POSTed to (Task.Payload.TargetUri).
    pub target_uri: String,
}

impl Task {
    pub fn new(id: u64, monitor_uri: String, target_uri: String) -> Self {
        Task {
            id,
            state: TaskState::New,
            percent: 0,
            messages: Vec::new(),
            start_time: clock::now_rfc3339(),
            end_time: None,
            monitor_uri,
            monitor_final_served: false,
            target_uri,
        }
    }

    pub fn uri(id: u64) -> String {
        format!("{TASKS_URI}/{id}")
    }

    /// Finish the task (idempotent: the first finish wins).
    pub fn finish(&mut self, state: TaskState, mut messages: Vec<TaskMessage>) {
        if self.state.is_done() {
            return;
        }
        self.state = state;
        if state == TaskState::Completed {
            self.percent = 100;
        }
        self.messages.append(&mut messages);
        self.end_time = Some(clock::now_rfc3339());
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "@odata.type": "#Task.v1_7_0.Task",
            "@odata.id": Self::uri(self.id),
            "Id": self.id.to_string(),
            "Name": format!("Firmware Update Task {}", self.id),
            "TaskState": self.state.as_str(),
            "TaskStatus": if self.state == TaskState::Exception { "Critical" } else { "OK" },
            "PercentComplete": self.percent,
            "StartTime": self.start_time,
            "TaskMonitor": self.monitor_uri,
            "Messages": self.messages.iter().map(TaskMessage::to_json).collect::<Vec<_>>(),
            "Payload": {
                "TargetUri": self.target_uri,
                "HttpOperation": "POST",
                "HttpHeaders": [],
                "JsonBody": "",
            },
            "HidePayload": false,
        });
        if let Some(end) = &self.end_time {
            v["EndTime"] = json!(end);
        }
        v
    }
}
