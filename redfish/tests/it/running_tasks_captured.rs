//! The "is an update already running on this BMC?" read (`running_update_tasks`, issue 11: never
//! flash twice) against the TaskServices captured from real BMCs (`../shared`, skipped when
//! absent): every captured tree is read without error; their finished reset tasks are not running
//! updates; and a captured task document turned into a running firmware update (its state, payload
//! and message changed as a BMC would while flashing) is recognised with its target. Scripted mock
//! only; no sleeps.

use crate::common;

use common::captured::{self, Tree};
use common::mock::{json, MockBmc};
use common::options;
use hostfw_redfish::AuthMode;
use serde_json::json as j;

const TREES: &[&str] = &["dell", "supermicro", "nvidia_viking", "nvidia_gb200"];

fn serve_tasks(tree: &Tree, mock: &MockBmc) {
    tree.serve(mock, &["/redfish/v1", "/redfish/v1/TaskService"]);
    tree.serve_collection(mock, "/redfish/v1/TaskService/Tasks");
}

#[tokio::test]
async fn the_captured_task_services_hold_no_running_update() {
    for vendor in TREES {
        let Some(tree) = captured::tree(vendor) else { return };
        let mock = MockBmc::start().await;
        serve_tasks(&tree, &mock);
        let client = common::mock_client(&mock, options(AuthMode::Basic));
        let running = client.running_update_tasks().await.unwrap_or_else(|e| panic!("{vendor}: {e}"));
        assert!(running.is_empty(), "{vendor}: finished or non-update tasks only, got {running:?}");
    }
}

#[tokio::test]
async fn a_captured_task_in_the_middle_of_a_flash_is_a_running_update_with_its_target() {
    let Some(tree) = captured::tree("nvidia_viking") else { return };
    let mock = MockBmc::start().await;
    serve_tasks(&tree, &mock);
    let mut task = tree.doc("/redfish/v1/TaskService/Tasks/1");
    task["Name"] = j!("Firmware Update");
    task["Description"] = j!("Task for firmware update of HGX_FW_BMC_0");
    task["TaskState"] = j!("Running");
    task["PercentComplete"] = j!(40);
    task.as_object_mut().unwrap().remove("EndTime");
    task["Payload"] = j!({ "TargetUri": "/redfish/v1/UpdateService/update-multipart", "HttpOperation": "POST" });
    task["Messages"] = j!([{
        "MessageId": "Update.1.0.TransferringToComponent",
        "Message": "Image 'x.fwpkg' is being transferred to 'HGX_FW_BMC_0'.",
        "MessageArgs": ["x.fwpkg", "HGX_FW_BMC_0"],
        "Severity": "OK"
    }]);
    mock.on("GET", "/redfish/v1/TaskService/Tasks/1", vec![json(200, task)]);
    let client = common::mock_client(&mock, options(AuthMode::Basic));
    let running = client.running_update_tasks().await.expect("read");
    assert_eq!(running.len(), 1, "{running:?}");
    assert!(running[0].names.iter().any(|n| n.contains("HGX_FW_BMC_0")), "{running:?}");
    assert!(running[0].state.contains("Running"), "{running:?}");
}
