//! Vendor profiles of async answers (the host key `task_style`): how the update POST answers and how each
//! task monitor URI answers over a task's life. Owns no task progress (that is `runner`).
//!
//! | style  | POST                                   | monitor                                   |
//! |--------|----------------------------------------|-------------------------------------------|
//! | spec   | 202, Location=TaskMonitors/n, Task     | 202+Task while running, 200+Task once, 404 |
//! | bmcweb | 202, Location=Tasks/n/Monitor, Task    | 202+Task while running, 204 once, 404      |
//! | dell   | 202, Location=Tasks/n, Task            | (Location is the Task: always 200)         |
//! | sushy  | 204, Location=Tasks/n, no body         | (Location is the Task: always 200)         |

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::json::json_response;
use crate::tasks::task::{Task, TASKS_URI};
use hostfw_fleet::TaskStyle;

/// Poll interval suggested to clients, in seconds.
pub const RETRY_AFTER_SECS: u64 = 1;

/// The two kinds of monitor URI the simulator serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MonitorKind {
    /// `/redfish/v1/TaskService/TaskMonitors/<n>`: final answer 200 + Task.
    Spec,
    /// `/redfish/v1/TaskService/Tasks/<n>/Monitor`: final answer 204.
    Bmcweb,
}

/// The monitor kind a host's tasks point at (`Task.TaskMonitor`).
pub fn monitor_kind(style: TaskStyle) -> MonitorKind {
    match style {
        TaskStyle::Bmcweb => MonitorKind::Bmcweb,
        TaskStyle::Spec | TaskStyle::Dell | TaskStyle::Sushy => MonitorKind::Spec,
    }
}

/// The monitor URI of task `id` for a host of this style.
pub fn monitor_uri(style: TaskStyle, id: u64) -> String {
    match monitor_kind(style) {
        MonitorKind::Spec => format!("/redfish/v1/TaskService/TaskMonitors/{id}"),
        MonitorKind::Bmcweb => format!("{TASKS_URI}/{id}/Monitor"),
    }
}

/// The answer to an accepted update POST.
pub fn accepted_response(style: TaskStyle, task: &Task) -> Response {
    let (status, location, with_body) = match style {
        TaskStyle::Spec | TaskStyle::Bmcweb => (StatusCode::ACCEPTED, task.monitor_uri.clone(), true),
        TaskStyle::Dell => (StatusCode::ACCEPTED, Task::uri(task.id), true),
        TaskStyle::Sushy => (StatusCode::NO_CONTENT, Task::uri(task.id), false),
    };
    let mut resp = if with_body { json_response(status, task.to_json()) } else { status.into_response() };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&location) {
        h.insert(header::LOCATION, v);
    }
    if style != TaskStyle::Sushy {
        h.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    resp
}

/// GET on a task monitor of `kind`. A host only serves the kind its style uses.
pub fn monitor_response(host: &Host, kind: MonitorKind, id_segment: &str, uri: &str) -> Response {
    if monitor_kind(host.spec.task_style) != kind {
        return RedfishError::not_found(uri).into_response();
    }
    let Ok(id) = id_segment.parse::<u64>() else {
        return RedfishError::not_found(uri).into_response();
    };
    let mut data = host.data();
    let Some(task) = data.tasks.get_mut(&id) else {
        return RedfishError::not_found(uri).into_response();
    };
    if !task.state.is_done() {
        let mut resp = json_response(StatusCode::ACCEPTED, task.to_json());
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        if let Ok(v) = HeaderValue::from_str(uri) {
            resp.headers_mut().insert(header::LOCATION, v);
        }
        return resp;
    }
    if task.monitor_final_served {
        return RedfishError::not_found(uri).into_response();
    }
    task.monitor_final_served = true;
    match kind {
        MonitorKind::Spec => json_response(StatusCode::OK, task.to_json()),
        MonitorKind::Bmcweb => StatusCode::NO_CONTENT.into_response(),
    }
}
