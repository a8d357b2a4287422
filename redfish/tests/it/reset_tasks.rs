//! A host reset that answers with a Task is followed to the Task's final state (bounded by
//! `ClientOptions::reset_task_wait`): Completed is a done reset; Exception, Killed, Cancelled
//! are a failed reset whose error carries the Task's messages. The captured DGX reset Tasks
//! (`nvidia_viking/.../TaskService/Tasks/*`, five of nine ended in Exception) are served from
//! `../shared` when present; scripted Tasks always run. Scripted mock only; no sleeps.

use crate::common;

use std::time::Duration;

use common::captured;
use common::mock::{json, json_h, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, ClientOptions, RedfishClient, RedfishError, TaskFinal, WaitOptions};
use serde_json::json as j;

const RESET: &str = "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset";

fn client_for(mock: &MockBmc, timeout: Duration) -> RedfishClient {
    common::mock_client(
        mock,
        ClientOptions {
            reset_task_wait: WaitOptions { poll_interval: Duration::from_millis(20), timeout },
            ..options(AuthMode::Basic)
        },
    )
}

fn one_system(mock: &MockBmc) {
    mock.on("GET", "/redfish/v1/", vec![json(200, j!({"Systems": {"@odata.id": "/redfish/v1/Systems"}}))]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))]);
    mock.on(
        "GET",
        "/redfish/v1/Systems/1",
        vec![json(200, j!({"Id": "1", "PowerState": "On", "Actions": {"#ComputerSystem.Reset": {"target": RESET}}}))],
    );
}

/// A Task in state `state` with one message.
fn task(id: &str, state: &str, message: &str) -> serde_json::Value {
    j!({"@odata.id": format!("/redfish/v1/TaskService/Tasks/{id}"), "@odata.type": "#Task.v1_4_2.Task",
        "Id": id, "Name": "Computer Reset", "TaskState": state, "TaskStatus": "OK",
        "Messages": [{"MessageId": "Base.1.12.ActionNotSupported", "Message": message}]})
}

#[tokio::test]
async fn task_ending_in_exception_is_a_failed_reset_with_its_messages() {
    let mock = MockBmc::start().await;
    one_system(&mock);
    // 202 + Location (the monitor) + Task body; the monitor runs, then ends in Exception.
    mock.on(
        "POST",
        RESET,
        vec![json_h(202, &[("Location", "/redfish/v1/TaskService/Tasks/3/Monitor")], task("3", "Running", "started"))],
    );
    mock.on(
        "GET",
        "/redfish/v1/TaskService/Tasks/3/Monitor",
        vec![
            json(202, task("3", "Running", "running")),
            json(200, task("3", "Exception", "power state of chassis did not change")),
        ],
    );
    let e = client_for(&mock, Duration::from_secs(10)).reset_system(&["ForceRestart"]).await.unwrap_err();
    match &e {
        RedfishError::ResetTaskFailed { reset_type, state, messages, .. } => {
            assert_eq!(reset_type, "ForceRestart");
            assert_eq!(state, &TaskFinal::Exception);
            assert_eq!(messages, &["Base.1.12.ActionNotSupported: power state of chassis did not change".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("power state of chassis did not change"), "{e}");
    assert!(e.to_string().contains("Tasks/3/Monitor"), "{e}");
    assert_eq!(mock.hits("GET", "/redfish/v1/TaskService/Tasks/3/Monitor"), 2);
}

#[tokio::test]
async fn task_body_answer_is_followed_and_killed_is_permanent() {
    let mock = MockBmc::start().await;
    one_system(&mock);
    // 200 with a Task body and no Location: the Task is the monitor.
    mock.on("POST", RESET, vec![json(200, task("8", "New", "queued"))]);
    mock.on("GET", "/redfish/v1/TaskService/Tasks/8", vec![json(200, task("8", "Killed", "killed by the operator"))]);
    let e = client_for(&mock, Duration::from_secs(10)).reset_system(&["ForceRestart"]).await.unwrap_err();
    assert!(matches!(&e, RedfishError::ResetTaskFailed { state: TaskFinal::Killed, .. }), "{e:?}");
    assert!(!e.is_transient(), "a killed task is not retried");
    assert!(e.to_string().contains("killed by the operator"), "{e}");
}

#[tokio::test]
async fn completed_task_is_a_done_reset() {
    let mock = MockBmc::start().await;
    one_system(&mock);
    mock.on("POST", RESET, vec![json_h(202, &[("Location", "/redfish/v1/TaskService/Tasks/4")], j!({}))]);
    mock.on(
        "GET",
        "/redfish/v1/TaskService/Tasks/4",
        vec![
            json(200, task("4", "Running", "running")),
            json(200, task("4", "Completed", "The task with id 4 has completed.")),
        ],
    );
    let done = client_for(&mock, Duration::from_secs(10)).reset_system(&["ForceRestart"]).await.expect("completed");
    assert_eq!(done.task.map(|t| t.state), Some(TaskFinal::Completed));
}

#[tokio::test]
async fn task_that_never_ends_fails_within_the_bound() {
    let mock = MockBmc::start().await;
    one_system(&mock);
    mock.on("POST", RESET, vec![json_h(202, &[("Location", "/redfish/v1/TaskService/Tasks/5")], j!({}))]);
    mock.on("GET", "/redfish/v1/TaskService/Tasks/5", vec![json(200, task("5", "Running", "still going"))]);
    let e = client_for(&mock, Duration::from_millis(300)).reset_system(&["ForceRestart"]).await.unwrap_err();
    assert!(matches!(e, RedfishError::TaskTimeout { .. }), "{e:?}");
}

/// The captured DGX: its System and reset ActionInfo, and a reset answered with a Task whose
/// final document is the captured Task `id`.
async fn captured_dgx_reset(id: &str) -> Option<Result<hostfw_redfish::ResetDone, RedfishError>> {
    let tree = captured::tree("nvidia_viking")?;
    let mock = MockBmc::start().await;
    tree.serve(&mock, &["/redfish/v1", "/redfish/v1/Systems/DGX/ResetActionInfo"]);
    tree.serve_collection(&mock, "/redfish/v1/Systems");
    let task_uri = format!("/redfish/v1/TaskService/Tasks/{id}");
    let mut running = tree.doc(&task_uri);
    running["TaskState"] = j!("Running");
    running["Messages"] = j!([]);
    mock.on(
        "POST",
        "/redfish/v1/Systems/DGX/Actions/ComputerSystem.Reset",
        vec![json_h(202, &[("Location", task_uri.as_str())], running.clone())],
    );
    mock.on("GET", &task_uri, vec![json(200, running), json(200, tree.doc(&task_uri))]);
    Some(
        client_for(&mock, Duration::from_secs(10))
            .reset_system(&["ForceRestart", "GracefulRestart", "PowerCycle"])
            .await,
    )
}

#[tokio::test]
async fn captured_dgx_reset_task_in_exception_fails_the_reset() {
    let Some(result) = captured_dgx_reset("3").await else {
        return;
    };
    let e = result.unwrap_err();
    assert!(matches!(&e, RedfishError::ResetTaskFailed { state: TaskFinal::Exception, .. }), "{e:?}");
    assert!(e.to_string().contains("power state of chassis did not change"), "{e}");
    assert!(e.is_transient(), "the next activation attempt may succeed: {e:?}");
}

#[tokio::test]
async fn captured_dgx_reset_task_completed_is_done() {
    let Some(result) = captured_dgx_reset("1").await else {
        return;
    };
    let done = result.expect("completed");
    assert_eq!(done.reset_type, "ForceRestart");
    assert_eq!(done.task.map(|t| t.state), Some(TaskFinal::Completed));
}
