//! Vendor oddities bmc-sim does not produce, against a scripted mock BMC: partial 202 Task
//! bodies, Retry-After as an HTTP-date, vanished monitors, bmcweb 204 with the Task derived
//! from `/Monitor`, transient errors mid-wait, odd inventory JSON with pagination, a Task body
//! without Location, a dropped connection after Manager.Reset, session re-login on 401, BMC
//! error messages in HTTP errors, and inventory members whose version is not reported (null,
//! placeholder, Disabled) or padded with whitespace.
//! Must not depend on bmc-sim or on fixed sleeps: every answer is scripted.

use crate::common;

use std::time::{Duration, SystemTime};

use common::mock::{empty, json, json_h, Canned, MockBmc};
use common::{options, wait_opts};
use hostfw_model::UnknownVersion;
use hostfw_redfish::{
    AuthMode, RedfishClient, RedfishError, TaskFinal, TaskPoll, TaskRef, UploadRequest, UploadRoute, WaitOptions,
};
use serde_json::json as j;

fn client_for(mock: &MockBmc, auth: AuthMode) -> RedfishClient {
    common::mock_client(mock, options(auth))
}

fn task_ref(monitor: &str, task: Option<&str>) -> TaskRef {
    TaskRef { monitor_uri: monitor.into(), task_uri: task.map(str::to_string) }
}

fn root() -> Canned {
    // No Links (as sushy-tools), links only.
    json(
        200,
        j!({"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": "/redfish/v1/Systems"},
            "Managers": {"@odata.id": "/redfish/v1/Managers"},
            "UpdateService": {"@odata.id": "/redfish/v1/UpdateService"},
            "SessionService": {"@odata.id": "/redfish/v1/SessionService"}}),
    )
}

#[tokio::test]
async fn partial_202_then_final_200_with_http_date_retry_after() {
    let mock = MockBmc::start().await;
    let soon = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(1));
    mock.on(
        "GET",
        "/mon/1",
        vec![
            // No Id: a partial Task; its TaskState must be ignored.
            json_h(202, &[("Retry-After", &soon)], j!({"TaskState": "Exception", "PercentComplete": 99})),
            json_h(202, &[("Retry-After", "0")], j!({"Id": "1", "TaskState": "Running", "PercentComplete": 50})),
            json(
                200,
                j!({"@odata.type": "#Task.v1_7_0.Task", "Id": "1", "TaskState": "Completed",
                         "TaskStatus": "OK", "StartTime": "2024-05-01T10:00:00",
                         "Messages": [{"MessageId": "Update.1.0.UpdateSuccessful", "Message": "done"}]}),
            ),
        ],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let mut polls = Vec::new();
    let outcome = client.wait_task(&task_ref("/mon/1", None), wait_opts(), |p| polls.push(p.clone())).await.unwrap();
    assert_eq!(outcome.state, TaskFinal::Completed);
    assert_eq!(outcome.messages, vec!["Update.1.0.UpdateSuccessful: done".to_string()]);
    match &polls[0] {
        TaskPoll::Running { state, percent, retry_after } => {
            assert_eq!(state, "Running");
            assert_eq!(*percent, None, "partial body ignored");
            let r = retry_after.expect("HTTP-date Retry-After parsed");
            assert!(r <= Duration::from_secs(1), "{r:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        polls[1],
        TaskPoll::Running { state: "Running".into(), percent: Some(50), retry_after: Some(Duration::ZERO) }
    );
    assert_eq!(polls.len(), 3);
}

#[tokio::test]
async fn vanished_monitor_gives_unknown_vanished() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/mon/2", vec![json(202, j!({"Id": "2", "TaskState": "Running"})), json(404, j!({}))]);
    let client = client_for(&mock, AuthMode::Basic);
    let outcome = client.wait_task(&task_ref("/mon/2", None), wait_opts(), |_| {}).await.unwrap();
    assert_eq!(outcome.state, TaskFinal::Vanished);
    assert!(!outcome.succeeded());
    assert_eq!(client.poll_task(&task_ref("/mon/2", None)).await.unwrap(), TaskPoll::Vanished);
}

#[tokio::test]
async fn vanished_monitor_with_known_task_reads_the_task() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/mon/3", vec![json(404, j!({}))]);
    mock.on(
        "GET",
        "/redfish/v1/TaskService/Tasks/3",
        vec![json(200, j!({"Id": "3", "TaskState": "Cancelled", "TaskStatus": "Warning"}))],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let outcome = client
        .wait_task(&task_ref("/mon/3", Some("/redfish/v1/TaskService/Tasks/3")), wait_opts(), |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.state, TaskFinal::Cancelled);
    assert_eq!(outcome.status.as_deref(), Some("Warning"));
}

#[tokio::test]
async fn bmcweb_204_derives_the_task_from_the_monitor_uri() {
    let mock = MockBmc::start().await;
    let monitor = "/redfish/v1/TaskService/Tasks/7/Monitor";
    // Body-less 202s: the Task was never seen, so the Task URI is derived from /Monitor.
    mock.on("GET", monitor, vec![empty(202, &[]), empty(204, &[]), json(404, j!({}))]);
    mock.on(
        "GET",
        "/redfish/v1/TaskService/Tasks/7",
        vec![json(
            200,
            j!({"Id": "7", "TaskState": "Exception", "TaskStatus": "Critical",
            "Messages": [{"MessageId": "Update.1.0.VerificationFailed", "Message": "bad signature"}]}),
        )],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let outcome = client.wait_task(&task_ref(monitor, None), wait_opts(), |_| {}).await.unwrap();
    assert_eq!(outcome.state, TaskFinal::Exception);
    assert_eq!(outcome.messages, vec!["Update.1.0.VerificationFailed: bad signature".to_string()]);
}

#[tokio::test]
async fn bmcweb_204_without_any_task_means_completed() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/taskmon/9", vec![empty(204, &[])]);
    let client = client_for(&mock, AuthMode::Basic);
    let outcome = client.wait_task(&task_ref("/taskmon/9", None), wait_opts(), |_| {}).await.unwrap();
    assert_eq!(outcome.state, TaskFinal::Completed);
    assert!(outcome.succeeded());
}

#[tokio::test]
async fn transient_errors_mid_wait_are_tolerated() {
    let mock = MockBmc::start().await;
    mock.on(
        "GET",
        "/mon/5",
        vec![
            json_h(503, &[("Retry-After", "0")], j!({"error": {"message": "rebooting"}})),
            Canned::Drop,
            json(200, j!({"@odata.type": "#Task.v1_4_3.Task", "Id": "5", "TaskState": "Completed"})),
        ],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let outcome = client.wait_task(&task_ref("/mon/5", None), wait_opts(), |_| {}).await.unwrap();
    assert_eq!(outcome.state, TaskFinal::Completed);
    assert_eq!(mock.hits("GET", "/mon/5"), 3);
}

#[tokio::test]
async fn wait_times_out_with_the_last_state() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/mon/6", vec![json(202, j!({"Id": "6", "TaskState": "Pending", "PercentComplete": 10}))]);
    let client = client_for(&mock, AuthMode::Basic);
    let e = client
        .wait_task(
            &task_ref("/mon/6", None),
            WaitOptions { poll_interval: Duration::from_millis(20), timeout: Duration::from_millis(200) },
            |_| {},
        )
        .await
        .unwrap_err();
    assert!(matches!(e, RedfishError::TaskTimeout { .. }), "{e:?}");
    assert!(e.to_string().contains("Pending 10%"), "{e}");
    assert!(e.to_string().contains("/mon/6"), "{e}");
}

#[tokio::test]
async fn explore_tolerates_odd_json_and_follows_next_links() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))]);
    // No Manufacturer, PowerState of a wrong type.
    mock.on(
        "GET",
        "/redfish/v1/Systems/1",
        vec![json(200, j!({"Id": "1", "Model": "X1", "PowerState": {"odd": true}}))],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService",
        vec![json(
            200,
            j!({"FirmwareInventory": {"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory"},
                           "MaxImageSizeBytes": null}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService/FirmwareInventory",
        vec![json(
            200,
            j!({"Members": [{"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/BMC"}],
                           "Members@odata.count": 3,
                           "Members@odata.nextLink": "/redfish/v1/UpdateService/FirmwareInventory?$skip=1"}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService/FirmwareInventory?$skip=1",
        vec![json(
            200,
            j!({"Members": [{"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/CPLD"},
                                       {"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/NoId"}]}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService/FirmwareInventory/BMC",
        vec![json(
            200,
            j!({"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/BMC", "Id": "BMC",
                           "Version": "1.45.455b66-rev4", "ReleaseDate": "2017-08-22T12:00:00",
                           "RelatedItem": [{"@odata.id": "/redfish/v1/Managers/BMC"}]}),
        )],
    );
    // No Version and Absent: kept with "", version not reported.
    mock.on(
        "GET",
        "/redfish/v1/UpdateService/FirmwareInventory/CPLD",
        vec![json(200, j!({"Id": "CPLD", "Name": "CPLD", "Status": {"State": "Absent"}}))],
    );
    // No Id, Version as a number.
    mock.on("GET", "/redfish/v1/UpdateService/FirmwareInventory/NoId", vec![json(200, j!({"Version": 3}))]);
    let client = client_for(&mock, AuthMode::Basic);
    let report = client.explore().await.expect("explore");
    assert_eq!(report.vendor, "");
    assert_eq!(report.model, "X1");
    assert_eq!(report.power_state, None);
    let members: Vec<_> =
        report.members.iter().map(|m| (m.id.as_str(), m.version.as_str(), m.odata_id.as_str())).collect();
    assert_eq!(
        members,
        vec![
            ("BMC", "1.45.455b66-rev4", "/redfish/v1/UpdateService/FirmwareInventory/BMC"),
            ("CPLD", "", "/redfish/v1/UpdateService/FirmwareInventory/CPLD"),
            ("NoId", "3", "/redfish/v1/UpdateService/FirmwareInventory/NoId"),
        ]
    );
    assert_eq!(report.members[1].version_unknown, Some(UnknownVersion::State { state: "Absent".into() }));
    assert_eq!(report.members[2].version_unknown, None, "a numeric Version is known");
    let info = client.update_service().await.unwrap();
    assert_eq!(info.max_image_size, None);
    assert_eq!(info.multipart_uri, None);
}

/// One FirmwareInventory with the given member documents (their `Id`s name the paths).
fn inventory_mock(mock: &MockBmc, members: &[serde_json::Value]) {
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))]);
    mock.on(
        "GET",
        "/redfish/v1/Systems/1",
        vec![json(200, j!({"Id": "1", "Manufacturer": "Supermicro", "Model": "SYS-821GE-TNHR"}))],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService",
        vec![json(200, j!({"FirmwareInventory": {"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory"}}))],
    );
    let path =
        |m: &serde_json::Value| format!("/redfish/v1/UpdateService/FirmwareInventory/{}", m["Id"].as_str().unwrap());
    let links: Vec<serde_json::Value> = members.iter().map(|m| j!({"@odata.id": path(m)})).collect();
    mock.on("GET", "/redfish/v1/UpdateService/FirmwareInventory", vec![json(200, j!({"Members": links}))]);
    for m in members {
        mock.on("GET", &path(m), vec![json(200, m.clone())]);
    }
}

#[tokio::test]
async fn explore_classifies_versions_that_are_not_reported_and_trims_padding() {
    let mock = MockBmc::start().await;
    inventory_mock(
        &mock,
        &[
            j!({"Id": "BMC", "Version": null, "Status": {"State": "Enabled", "Health": "OK"}}),
            // As captured from a Supermicro BMC (Backup_BIOS).
            j!({"Id": "Backup_BIOS", "Version": "Not Present", "Status": {"State": "Enabled", "Health": "OK"}}),
            j!({"Id": "CPLD_Motherboard", "Version": "F1.5.2", "Status": {"State": "Disabled"}}),
            j!({"Id": "BIOS", "Version": " 2.3.5 \u{a0}", "Status": {"State": "Enabled"}}),
            j!({"Id": "NIC", "Version": "28.39", "Status": {"State": "Enabled"}}),
        ],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let report = client.explore().await.expect("explore");
    let got: Vec<_> = report
        .members
        .iter()
        .map(|m| (m.id.as_str(), m.version.as_str(), m.version_unknown.clone(), m.known_version()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("BMC", "", Some(UnknownVersion::Missing), None),
            ("Backup_BIOS", "Not Present", Some(UnknownVersion::Placeholder), None),
            ("CPLD_Motherboard", "F1.5.2", Some(UnknownVersion::State { state: "Disabled".into() }), None),
            ("BIOS", "2.3.5", None, Some("2.3.5")),
            ("NIC", "28.39", None, Some("28.39")),
        ]
    );
    assert_eq!(report.members[3].raw_version(), " 2.3.5 \u{a0}", "the text as sent is kept");
    assert_eq!(report.members[4].version_raw, None, "nothing to keep when not padded");
}

#[tokio::test]
async fn unparseable_document_is_a_parse_error_naming_the_url() {
    let mock = MockBmc::start().await;
    mock.on(
        "GET",
        "/redfish/v1/",
        vec![Canned::Reply { status: 200, headers: vec![], body: "<html>login</html>".into() }],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let e = client.explore().await.unwrap_err();
    assert!(matches!(e, RedfishError::Parse { .. }), "{e:?}");
    assert!(!e.is_transient());
    assert!(e.to_string().contains("/redfish/v1/"), "{e}");
}

fn update_service_with_multipart() -> Canned {
    json(
        200,
        j!({"MultipartHttpPushUri": "/upload",
            "Actions": {"#UpdateService.SimpleUpdate": {"target": "/redfish/v1/UpdateService/Actions/SimpleUpdate"}}}),
    )
}

#[tokio::test]
async fn task_body_without_location_names_the_monitor() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on("GET", "/redfish/v1/UpdateService", vec![update_service_with_multipart()]);
    // NVIDIA style: 200 + Task body, no Location.
    mock.on(
        "POST",
        "/upload",
        vec![json(
            200,
            j!({"@odata.id": "/redfish/v1/TaskService/Tasks/3", "@odata.type": "#Task.v1_4_3.Task",
                           "Id": "3", "TaskState": "Running"}),
        )],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"firmware bytes");
    let accepted = client
        .upload(&UploadRequest {
            file: path,
            targets: vec!["/redfish/v1/Chassis/HGX_Chassis_0".into()],
            apply_time: Some("OnReset".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(accepted.route, UploadRoute::Multipart);
    assert_eq!(
        accepted.task,
        Some(task_ref("/redfish/v1/TaskService/Tasks/3", Some("/redfish/v1/TaskService/Tasks/3")))
    );
    // The multipart body: both parts, JSON parameters, the file with a name, a known length.
    let post = mock.log().into_iter().find(|l| l.method == "POST").unwrap();
    let header = |name: &str| post.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    assert!(header("content-type").unwrap().starts_with("multipart/form-data; boundary="));
    assert_eq!(header("content-length").unwrap(), post.body.len().to_string());
    assert_eq!(header("transfer-encoding"), None);
    assert_eq!(header("authorization").map(|a| a.starts_with("Basic ")), Some(true));
    let body = String::from_utf8_lossy(&post.body);
    assert!(body.contains("name=\"UpdateParameters\""), "{body}");
    assert!(
        body.contains("Content-Type: application/json") || body.contains("content-type: application/json"),
        "{body}"
    );
    assert!(body.contains(r#""@Redfish.OperationApplyTime":"OnReset""#), "{body}");
    assert!(body.contains(r#""Targets":["/redfish/v1/Chassis/HGX_Chassis_0"]"#), "{body}");
    assert!(body.contains("name=\"UpdateFile\"; filename=\"fw.bin\""), "{body}");
    assert!(body.contains("firmware bytes"), "{body}");
}

#[tokio::test]
async fn bmc_error_messages_and_retry_after_reach_the_error() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on("GET", "/redfish/v1/UpdateService", vec![update_service_with_multipart()]);
    mock.on(
        "POST",
        "/upload",
        vec![
            json_h(503, &[("Retry-After", "7")], j!({"error": {"code": "Base.1.8.GeneralError", "message": "busy",
                "@Message.ExtendedInfo": [{"MessageId": "Update.1.0.UpdateInProgress", "Message": "An update is in progress."}]}})),
            json(400, j!({"error": {"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.PropertyValueNotInList", "Message": "Targets bad"}]}})),
        ],
    );
    let client = client_for(&mock, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"x");
    let req = UploadRequest { file: path, ..Default::default() };
    let e = client.upload(&req).await.unwrap_err();
    assert!(e.is_transient(), "{e:?}");
    assert_eq!(e.http_status(), Some(503));
    assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
    assert!(e.to_string().contains("Update.1.0.UpdateInProgress: An update is in progress."), "{e}");
    assert!(e.to_string().contains(&format!("http://{}/upload", mock.address)), "{e}");
    let e = client.upload(&req).await.unwrap_err();
    assert!(!e.is_transient(), "{e:?}");
    assert!(e.to_string().contains("HTTP 400"), "{e}");
    assert!(e.to_string().contains("PropertyValueNotInList: Targets bad"), "{e}");
}

#[tokio::test]
async fn manager_reset_with_dropped_connection_counts_as_accepted() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on(
        "GET",
        "/redfish/v1/Managers",
        vec![json(
            200,
            j!({"Members": [{"@odata.id": "/redfish/v1/Managers/HostBMC"}, {"@odata.id": "/redfish/v1/Managers/BMC"}]}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/Managers/HostBMC",
        vec![json(200, j!({"Id": "HostBMC", "ManagerType": "AuxiliaryController"}))],
    );
    // The reset action's allowable values come from an ActionInfo.
    mock.on(
        "GET",
        "/redfish/v1/Managers/BMC",
        vec![json(
            200,
            j!({"Id": "BMC", "ManagerType": "BMC", "Actions": {"#Manager.Reset": {
            "target": "/redfish/v1/Managers/BMC/Actions/Manager.Reset",
            "@Redfish.ActionInfo": "/redfish/v1/Managers/BMC/ResetActionInfo"}}}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/Managers/BMC/ResetActionInfo",
        vec![json(
            200,
            j!({"Parameters": [{"Name": "ResetType", "Required": true, "AllowableValues": ["GracefulRestart"]}]}),
        )],
    );
    mock.on("POST", "/redfish/v1/Managers/BMC/Actions/Manager.Reset", vec![Canned::Drop]);
    let client = client_for(&mock, AuthMode::Basic);
    let e = client.reset_manager(&["ForceRestart"]).await.unwrap_err();
    assert!(e.to_string().contains("GracefulRestart"), "{e}");
    client.reset_manager(&["GracefulRestart"]).await.expect("EOF after POST is accepted");
    assert_eq!(mock.hits("POST", "/redfish/v1/Managers/BMC/Actions/Manager.Reset"), 1);
    let post = mock.log().into_iter().find(|l| l.method == "POST").unwrap();
    assert_eq!(post.body, br#"{"ResetType":"GracefulRestart"}"#);
}

#[tokio::test]
async fn session_relogin_once_on_401() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on(
        "GET",
        "/redfish/v1/SessionService",
        vec![json(200, j!({"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}}))],
    );
    mock.on(
        "POST",
        "/redfish/v1/SessionService/Sessions",
        vec![
            json_h(201, &[("X-Auth-Token", "t1"), ("Location", "/redfish/v1/SessionService/Sessions/1")], j!({})),
            json_h(201, &[("X-Auth-Token", "t2"), ("Location", "/redfish/v1/SessionService/Sessions/2")], j!({})),
        ],
    );
    mock.on(
        "GET",
        "/redfish/v1/Systems",
        vec![json(401, j!({})), json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))],
    );
    mock.on("GET", "/redfish/v1/Systems/1", vec![json(200, j!({"PowerState": "Off"}))]);
    let client = client_for(&mock, AuthMode::Session);
    assert_eq!(client.power_state().await.unwrap().as_deref(), Some("Off"));
    assert_eq!(mock.hits("POST", "/redfish/v1/SessionService/Sessions"), 2);
    let systems: Vec<_> = mock
        .log()
        .into_iter()
        .filter(|l| l.path == "/redfish/v1/Systems")
        .map(|l| l.headers.iter().find(|(k, _)| k == "x-auth-token").map(|(_, v)| v.clone()))
        .collect();
    assert_eq!(systems, vec![Some("t1".to_string()), Some("t2".to_string())]);
    // The login body carries the credentials; no request used Basic auth.
    assert!(mock.log().iter().all(|l| !l.headers.iter().any(|(k, _)| k == "authorization")));
    // Logout deletes the current session.
    mock.on("DELETE", "/redfish/v1/SessionService/Sessions/2", vec![empty(204, &[])]);
    client.logout().await.unwrap();
    assert_eq!(mock.hits("DELETE", "/redfish/v1/SessionService/Sessions/2"), 1);
}

fn update_service_with_http_push(apply_time: &str) -> Canned {
    json(
        200,
        j!({"HttpPushUri": "/FWUpdate", "HttpPushUriTargets": [],
            "HttpPushUriOptions": {"HttpPushUriApplyTime": {"ApplyTime": apply_time}}}),
    )
}

#[tokio::test]
async fn http_push_sets_targets_and_apply_time_by_patch_then_pushes_raw() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on("GET", "/redfish/v1/UpdateService", vec![update_service_with_http_push("Immediate")]);
    mock.on("PATCH", "/redfish/v1/UpdateService", vec![empty(204, &[])]);
    mock.on("POST", "/FWUpdate", vec![empty(202, &[("Location", "/redfish/v1/TaskService/TaskMonitors/1")])]);
    let client = client_for(&mock, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"raw image");
    let accepted = client
        .upload(&UploadRequest {
            file: path,
            targets: vec!["/redfish/v1/UpdateService/FirmwareInventory/BMC".into()],
            apply_time: Some("OnReset".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(accepted.route, UploadRoute::HttpPush);
    assert_eq!(accepted.task.map(|t| t.monitor_uri).as_deref(), Some("/redfish/v1/TaskService/TaskMonitors/1"));
    let log = mock.log();
    let patch = log.iter().find(|l| l.method == "PATCH").expect("PATCH sent");
    let patch: serde_json::Value = serde_json::from_slice(&patch.body).unwrap();
    assert_eq!(
        patch,
        j!({"HttpPushUriTargets": ["/redfish/v1/UpdateService/FirmwareInventory/BMC"],
            "HttpPushUriOptions": {"HttpPushUriApplyTime": {"ApplyTime": "OnReset"}}})
    );
    let push = log.iter().find(|l| l.method == "POST").expect("push sent");
    assert_eq!(push.body, b"raw image");
    let header = |name: &str| push.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    assert_eq!(header("content-length").as_deref(), Some("9"));
    assert_eq!(header("content-type").as_deref(), Some("application/octet-stream"));
    assert_eq!(header("transfer-encoding"), None);
}

#[tokio::test]
async fn http_push_refused_patch_is_a_clear_unsupported_error() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/", vec![root()]);
    mock.on("GET", "/redfish/v1/UpdateService", vec![update_service_with_http_push("OnReset")]);
    mock.on("PATCH", "/redfish/v1/UpdateService", vec![json(405, j!({"error": {"message": "PATCH not allowed"}}))]);
    let client = client_for(&mock, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"raw image");
    let e = client
        .upload(&UploadRequest { file: path, apply_time: Some("Immediate".into()), ..Default::default() })
        .await
        .unwrap_err();
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("HttpPushUriOptions") && text.contains("405"), "{text}");
    assert_eq!(mock.hits("POST", "/FWUpdate"), 0, "nothing pushed");
}
