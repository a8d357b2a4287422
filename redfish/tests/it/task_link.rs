//! The TaskService is found through the ServiceRoot's `Tasks` link, the DMTF name every captured
//! real root uses (none has a `TaskService` key): an upload answered with a Task body that has an
//! `Id` but no `@odata.id` is resolved by walking root `Tasks` → TaskService `Tasks` → members.
//! Scripted mock only; the captured NVIDIA DGX tree is served when `../shared` is present.

use crate::common;

use common::captured;
use common::mock::{json, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, RedfishClient, TaskRef, UploadRequest};
use serde_json::json as j;

fn client_for(mock: &MockBmc) -> RedfishClient {
    common::mock_client(mock, options(AuthMode::Basic))
}

async fn upload(client: &RedfishClient) -> Option<TaskRef> {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"firmware bytes");
    client.upload(&UploadRequest { file: path, ..Default::default() }).await.expect("upload accepted").task
}

/// Dell-style answer: a Task body with `Id` but no `@odata.id`, and no `Location`.
fn orphan_task_answer(id: &str) -> common::mock::Canned {
    json(202, j!({"@odata.type": "#Task.v1_4_2.Task", "Id": id, "TaskState": "Running"}))
}

#[tokio::test]
async fn root_with_only_tasks_link_finds_the_task() {
    let mock = MockBmc::start().await;
    mock.on(
        "GET",
        "/redfish/v1/",
        vec![json(
            200,
            j!({"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": "/redfish/v1/Systems"},
                "UpdateService": {"@odata.id": "/redfish/v1/UpdateService"},
                "Tasks": {"@odata.id": "/redfish/v1/TaskService"}}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService",
        vec![json(200, j!({"MultipartHttpPushUri": "/redfish/v1/UpdateService/upload"}))],
    );
    mock.on("POST", "/redfish/v1/UpdateService/upload", vec![orphan_task_answer("JID_7")]);
    mock.on(
        "GET",
        "/redfish/v1/TaskService",
        vec![json(200, j!({"Tasks": {"@odata.id": "/redfish/v1/TaskService/Tasks"}}))],
    );
    mock.on(
        "GET",
        "/redfish/v1/TaskService/Tasks",
        vec![json(
            200,
            j!({"Members": [{"@odata.id": "/redfish/v1/TaskService/Tasks/JID_6"},
                            {"@odata.id": "/redfish/v1/TaskService/Tasks/JID_7"}]}),
        )],
    );
    let task = upload(&client_for(&mock)).await;
    assert_eq!(
        task,
        Some(TaskRef {
            monitor_uri: "/redfish/v1/TaskService/Tasks/JID_7".into(),
            task_uri: Some("/redfish/v1/TaskService/Tasks/JID_7".into()),
        })
    );
    assert_eq!(mock.hits("GET", "/redfish/v1/TaskService"), 1);
}

#[tokio::test]
async fn captured_dgx_root_tasks_link_finds_the_task() {
    let Some(tree) = captured::tree("nvidia_viking") else {
        return;
    };
    let mock = MockBmc::start().await;
    tree.serve(
        &mock,
        &["/redfish/v1", "/redfish/v1/UpdateService", "/redfish/v1/TaskService", "/redfish/v1/TaskService/Tasks"],
    );
    mock.on("POST", "/redfish/v1/UpdateService/upload", vec![orphan_task_answer("3")]);
    let task = upload(&client_for(&mock)).await;
    assert_eq!(task.map(|t| t.monitor_uri), Some("/redfish/v1/TaskService/Tasks/3".to_string()));
}
