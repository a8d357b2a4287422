//! HTTP routes of the TaskService: the service, the Task collection, each Task, and the two
//! task monitor URIs (whose answers are decided by `tasks::style`). Read-only: never advances tasks.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::json::{collection, link, ok};
use crate::tasks::style::{monitor_response, MonitorKind};
use crate::tasks::task::{Task, TASKS_URI};

pub const TASK_SERVICE_URI: &str = "/redfish/v1/TaskService";

pub async fn task_service(State(_host): State<Arc<Host>>) -> Response {
    ok(json!({
        "@odata.type": "#TaskService.v1_2_0.TaskService",
        "@odata.id": TASK_SERVICE_URI,
        "Id": "TaskService",
        "Name": "Task Service",
        "ServiceEnabled": true,
        "CompletedTaskOverWritePolicy": "Oldest",
        "LifeCycleEventOnTaskStateChange": false,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Tasks": link(TASKS_URI),
    }))
}

pub async fn task_collection(State(host): State<Arc<Host>>) -> Response {
    let members = host.data().tasks.keys().map(|id| Task::uri(*id)).collect();
    ok(collection("#TaskCollection.TaskCollection", TASKS_URI, "Task Collection", members))
}

pub async fn task(State(host): State<Arc<Host>>, Path(id): Path<String>, uri: Uri) -> Response {
    let found = id.parse::<u64>().ok().and_then(|id| host.data().tasks.get(&id).map(Task::to_json));
    match found {
        Some(body) => ok(body),
        None => RedfishError::not_found(uri.path()).into_response(),
    }
}

/// `/redfish/v1/TaskService/TaskMonitors/<n>`.
pub async fn spec_monitor(State(host): State<Arc<Host>>, Path(id): Path<String>, uri: Uri) -> Response {
    monitor_response(&host, MonitorKind::Spec, &id, uri.path())
}

/// `/redfish/v1/TaskService/Tasks/<n>/Monitor`.
pub async fn bmcweb_monitor(State(host): State<Arc<Host>>, Path(id): Path<String>, uri: Uri) -> Response {
    monitor_response(&host, MonitorKind::Bmcweb, &id, uri.path())
}
