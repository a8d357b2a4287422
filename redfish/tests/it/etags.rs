//! `If-Match` on writes: a PATCH (boot override, HttpPushUri settings) or an action (resets,
//! SimpleUpdate) carries the ETag the written resource (or the action's owner) was served with,
//! from `@odata.etag` or the `ETag` header; none is sent where none was served. A 412 leads to one
//! re-read, the write decided again from it (already done, no longer allowed, or sent once with
//! the fresh ETag), then to a clear `PreconditionFailed`. The captured
//! Supermicro Manager (with `@odata.etag`) is served from `../shared` when present. Scripted mock
//! only; the mock's request log is the evidence; no sleeps.

use crate::common;

use common::captured;
use common::mock::{empty, json, json_h, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, RedfishClient, RedfishError, UploadRequest};
use serde_json::json as j;

const SYSTEM: &str = "/redfish/v1/Systems/1";
const RESET: &str = "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset";

fn client_for(mock: &MockBmc) -> RedfishClient {
    common::mock_client(mock, options(AuthMode::Basic))
}

/// The `If-Match` header of every `METHOD path` request, in order (`None`: not sent).
fn if_match(mock: &MockBmc, method: &str, path: &str) -> Vec<Option<String>> {
    mock.log()
        .into_iter()
        .filter(|l| l.method == method && l.path == path)
        .map(|l| l.headers.iter().find(|(k, _)| k == "if-match").map(|(_, v)| v.clone()))
        .collect()
}

fn system_doc(etag: Option<&str>) -> serde_json::Value {
    let mut doc = j!({"@odata.id": SYSTEM, "Id": "1", "PowerState": "On",
        "Actions": {"#ComputerSystem.Reset": {"target": RESET}},
        "Boot": {"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"}});
    if let Some(e) = etag {
        doc["@odata.etag"] = j!(e);
    }
    doc
}

/// A BMC with one System, served (in turn) as `system`.
fn one_system(mock: &MockBmc, system: Vec<common::mock::Canned>) {
    mock.on(
        "GET",
        "/redfish/v1/",
        vec![json(
            200,
            j!({"Systems": {"@odata.id": "/redfish/v1/Systems"},
                           "UpdateService": {"@odata.id": "/redfish/v1/UpdateService"}}),
        )],
    );
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": SYSTEM}]}))]);
    mock.on("GET", SYSTEM, system);
}

#[tokio::test]
async fn patch_and_action_send_the_served_odata_etag() {
    let mock = MockBmc::start().await;
    one_system(&mock, vec![json(200, system_doc(Some("\"a0a71284\"")))]);
    mock.on("PATCH", SYSTEM, vec![empty(204, &[])]);
    mock.on("POST", RESET, vec![empty(204, &[])]);
    let client = client_for(&mock);
    client.set_boot_override("Pxe", "Once").await.expect("patch");
    client.reset_system(&["ForceRestart"]).await.expect("reset");
    assert_eq!(if_match(&mock, "PATCH", SYSTEM), vec![Some("\"a0a71284\"".to_string())]);
    assert_eq!(if_match(&mock, "POST", RESET), vec![Some("\"a0a71284\"".to_string())]);
}

#[tokio::test]
async fn the_etag_header_is_used_when_served() {
    let mock = MockBmc::start().await;
    one_system(&mock, vec![json_h(200, &[("ETag", "W/\"hdr-7\"")], system_doc(None))]);
    mock.on("PATCH", SYSTEM, vec![empty(204, &[])]);
    client_for(&mock).set_boot_override("Pxe", "Once").await.expect("patch");
    assert_eq!(if_match(&mock, "PATCH", SYSTEM), vec![Some("W/\"hdr-7\"".to_string())]);
}

#[tokio::test]
async fn no_etag_served_means_no_if_match() {
    let mock = MockBmc::start().await;
    one_system(&mock, vec![json(200, system_doc(None))]);
    mock.on("PATCH", SYSTEM, vec![empty(204, &[])]);
    mock.on("POST", RESET, vec![empty(204, &[])]);
    let client = client_for(&mock);
    client.set_boot_override("Pxe", "Once").await.expect("patch");
    client.reset_system(&["ForceRestart"]).await.expect("reset");
    assert_eq!(if_match(&mock, "PATCH", SYSTEM), vec![None]);
    assert_eq!(if_match(&mock, "POST", RESET), vec![None]);
}

#[tokio::test]
async fn precondition_failed_rereads_once_and_retries_with_the_fresh_etag() {
    let mock = MockBmc::start().await;
    one_system(&mock, vec![json(200, system_doc(Some("\"v1\""))), json(200, system_doc(Some("\"v2\"")))]);
    mock.on("PATCH", SYSTEM, vec![json(412, j!({"error": {"message": "ETag mismatch"}})), empty(204, &[])]);
    client_for(&mock).set_boot_override("Pxe", "Once").await.expect("the retry with the fresh ETag succeeds");
    assert_eq!(if_match(&mock, "PATCH", SYSTEM), vec![Some("\"v1\"".to_string()), Some("\"v2\"".to_string())]);
    assert_eq!(mock.hits("GET", SYSTEM), 2, "one read, one re-read");
}

/// After a 412 the write is decided again from the resource read again, not re-sent blindly:
/// someone else set the same override (nothing sent), or the BMC no longer allows the value
/// (refused, nothing sent), or the action is gone (refused).
#[tokio::test]
async fn after_a_precondition_failure_the_write_is_decided_again() {
    // Already set by whoever changed it: no second PATCH.
    let mock = MockBmc::start().await;
    let mut set = system_doc(Some("\"v2\""));
    set["Boot"] = j!({"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"});
    one_system(&mock, vec![json(200, system_doc(Some("\"v1\""))), json(200, set)]);
    mock.on("PATCH", SYSTEM, vec![json(412, j!({"error": {"message": "ETag mismatch"}})), empty(204, &[])]);
    client_for(&mock).set_boot_override("Pxe", "Once").await.expect("already as wanted");
    assert_eq!(if_match(&mock, "PATCH", SYSTEM), vec![Some("\"v1\"".to_string())], "not sent again");

    // The fresh System no longer allows the target: refused, not sent again.
    let mock = MockBmc::start().await;
    let mut narrowed = system_doc(Some("\"v2\""));
    narrowed["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"] = j!(["None", "Hdd"]);
    one_system(&mock, vec![json(200, system_doc(Some("\"v1\""))), json(200, narrowed)]);
    mock.on("PATCH", SYSTEM, vec![json(412, j!({"error": {"message": "ETag mismatch"}})), empty(204, &[])]);
    let e = client_for(&mock).set_boot_override("Pxe", "Once").await.unwrap_err();
    assert!(matches!(&e, RedfishError::ValueNotAllowed { value, .. } if value == "Pxe"), "{e:?}");
    assert_eq!(mock.hits("PATCH", SYSTEM), 1);

    // The System read again no longer offers the reset action: refused, one POST only.
    let mock = MockBmc::start().await;
    let mut gone = system_doc(Some("\"v2\""));
    gone["Actions"] = j!({});
    one_system(&mock, vec![json(200, system_doc(Some("\"v1\""))), json(200, gone)]);
    mock.on("POST", RESET, vec![json(412, j!({"error": {"message": "ETag mismatch"}})), empty(204, &[])]);
    let e = client_for(&mock).reset_system(&["ForceRestart"]).await.unwrap_err();
    assert!(matches!(&e, RedfishError::Unsupported { what, .. } if what.contains("no longer offers")), "{e:?}");
    assert_eq!(mock.hits("POST", RESET), 1);
}

#[tokio::test]
async fn precondition_failed_twice_is_a_clear_error() {
    let mock = MockBmc::start().await;
    one_system(&mock, vec![json(200, system_doc(Some("\"v1\""))), json(200, system_doc(Some("\"v2\"")))]);
    mock.on("POST", RESET, vec![json(412, j!({"error": {"message": "ETag mismatch"}}))]);
    let e = client_for(&mock).reset_system(&["ForceRestart"]).await.unwrap_err();
    match &e {
        RedfishError::PreconditionFailed { status, sent, fresh, resource, .. } => {
            assert_eq!(*status, 412);
            assert_eq!(sent.as_deref(), Some("\"v1\""));
            assert_eq!(fresh.as_deref(), Some("\"v2\""));
            assert!(resource.ends_with(SYSTEM), "{resource}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!e.is_transient());
    let text = e.to_string();
    for part in ["412", RESET, "\"v1\"", "\"v2\"", "ETag mismatch", &mock.address] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    assert_eq!(mock.hits("POST", RESET), 2, "the original and exactly one retry");
}

#[tokio::test]
async fn http_push_settings_patch_and_simple_update_carry_the_update_service_etag() {
    let mock = MockBmc::start().await;
    one_system(&mock, vec![json(200, system_doc(None))]);
    mock.on(
        "GET",
        "/redfish/v1/UpdateService",
        vec![json(
            200,
            j!({"@odata.etag": "\"us-1\"", "HttpPushUri": "/redfish/v1/UpdateService/push",
                "HttpPushUriTargets": [],
                "Actions": {"#UpdateService.SimpleUpdate": {"target": "/redfish/v1/UpdateService/Actions/SimpleUpdate"}}}),
        )],
    );
    mock.on("PATCH", "/redfish/v1/UpdateService", vec![empty(204, &[])]);
    mock.on("POST", "/redfish/v1/UpdateService/push", vec![empty(202, &[("Location", "/m/1")])]);
    mock.on("POST", "/redfish/v1/UpdateService/Actions/SimpleUpdate", vec![empty(202, &[("Location", "/m/2")])]);
    let client = client_for(&mock);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_image(&dir, "fw.bin", b"firmware bytes");
    client
        .upload(&UploadRequest {
            file: path.clone(),
            targets: vec!["/redfish/v1/UpdateService/FirmwareInventory/BMC".into()],
            ..Default::default()
        })
        .await
        .expect("http push");
    client
        .upload(&UploadRequest {
            file: path,
            image_uri: Some("http://127.0.0.1:1/fw.bin".into()),
            force_route: Some(hostfw_redfish::UploadRoute::SimpleUpdate),
            ..Default::default()
        })
        .await
        .expect("simple update");
    assert_eq!(if_match(&mock, "PATCH", "/redfish/v1/UpdateService"), vec![Some("\"us-1\"".to_string())]);
    assert_eq!(
        if_match(&mock, "POST", "/redfish/v1/UpdateService/Actions/SimpleUpdate"),
        vec![Some("\"us-1\"".to_string())]
    );
    // The image push itself is not a write to a resource: no If-Match.
    assert_eq!(if_match(&mock, "POST", "/redfish/v1/UpdateService/push"), vec![None]);
}

#[tokio::test]
async fn captured_supermicro_manager_reset_carries_its_etag() {
    let Some(tree) = captured::tree("supermicro") else {
        return;
    };
    let mock = MockBmc::start().await;
    tree.serve(&mock, &["/redfish/v1"]);
    tree.serve_collection(&mock, "/redfish/v1/Managers");
    let target = "/redfish/v1/Managers/1/Actions/Manager.Reset";
    mock.on("POST", target, vec![empty(204, &[])]);
    let etag = tree.doc("/redfish/v1/Managers/1")["@odata.etag"].as_str().expect("the capture has an ETag").to_string();
    client_for(&mock).reset_manager(&["ForceRestart", "GracefulRestart"]).await.expect("reset");
    assert_eq!(if_match(&mock, "POST", target), vec![Some(etag)]);
}
