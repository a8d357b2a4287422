//! Update failure paths: one update at a time (503), unrecognised images, images that match no
//! member, failed SimpleUpdate fetches, missing Content-Length, unadvertised endpoints, bad
//! parameters, and `Targets` / apply-time handling.

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, ApplyTime, UploadStyle};
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn second_push_while_running_gets_503() {
    let mut h = host("host-001");
    h.task_seconds = 1.5;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let first = c.push_multipart(firmware_image("BIOS", "2.2.0", 1000), json!({})).await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    let second = c.push_multipart(firmware_image("iDRAC", "7.1", 1000), json!({})).await;
    assert_eq!(second.status, StatusCode::SERVICE_UNAVAILABLE, "{}", second.raw);
    assert!(second.header("Retry-After").is_some());
    assert_eq!(second.message_id(), "Update.1.0.UpdateInProgress");
    let simple = c.simple_update(json!({"ImageURI": "http://127.0.0.1:9/x.bin"})).await;
    assert_eq!(simple.status, StatusCode::SERVICE_UNAVAILABLE);

    c.wait_task(&first).await;
    let third = c.push_multipart(firmware_image("iDRAC", "7.1", 1000), json!({})).await;
    assert_eq!(third.status, StatusCode::ACCEPTED, "free again once the task finished: {}", third.raw);
    c.wait_task(&third).await;
    assert_eq!(fleet.stats().uploads_started, 2, "the rejected pushes are not uploads");
    fleet.shutdown().await;
}

#[tokio::test]
async fn unrecognised_image_ends_in_exception() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart(b"MZ this is a real-looking binary".to_vec(), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "an unrecognised image still creates a task");
    let task = c.wait_task(&r).await;
    assert_eq!(task["TaskState"], "Exception");
    assert_eq!(task["TaskStatus"], "Critical");
    assert!(messages_text(&task).contains("image not recognised"), "{task}");
    assert_eq!(fleet.versions("host-001")[1].1, "2.1.0");
    fleet.shutdown().await;
}

#[tokio::test]
async fn image_matching_no_member_ends_in_exception() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart(firmware_image("CPLD", "1.0", 10), json!({})).await;
    let task = c.wait_task(&r).await;
    assert_eq!(task["TaskState"], "Exception");
    assert!(messages_text(&task).contains("no inventory member matches"), "{task}");
    assert!(message_ids(&task).contains(&"Update.1.0.ApplyFailed".to_string()));
    fleet.shutdown().await;
}

#[tokio::test]
async fn simple_update_fetch_failure_ends_in_exception() {
    let mut h = host("host-001");
    h.upload_style = UploadStyle::SimpleUpdate;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let files = serve_files(vec![("/present.bin", firmware_image("BIOS", "3", 1))]).await;
    let r = c.simple_update(json!({"ImageURI": format!("{files}/missing.bin")})).await;
    let task = c.wait_task(&r).await;
    assert_eq!(task["TaskState"], "Exception");
    assert!(messages_text(&task).contains("404"), "{task}");
    assert!(message_ids(&task).contains(&"Update.1.0.TransferFailed".to_string()));

    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let r = c.simple_update(json!({"ImageURI": format!("http://{closed}/x.bin")})).await;
    let task = c.wait_task(&r).await;
    assert_eq!(task["TaskState"], "Exception", "{task}");
    fleet.shutdown().await;
}

#[tokio::test]
async fn simple_update_parameter_errors() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.simple_update(json!({})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.message_id().ends_with("ActionParameterMissing"), "{}", r.raw);
    let r = c.simple_update(json!({"ImageURI": "ftp://host/x.bin"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = c.simple_update(json!({"ImageURI": "host/x.bin", "TransferProtocol": "NFS"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = c.simple_update(json!({"ImageURI": "http://h/x", "@Redfish.OperationApplyTime": "Later"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = c.simple_update(json!({"ImageURI": "http://h/x", "Targets": ["/redfish/v1/Chassis/1"]})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.message_id().ends_with("PropertyValueNotInList"), "{}", r.raw);
    assert_eq!(fleet.stats().uploads_started, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn http_push_requires_content_length() {
    let mut h = host("host-001");
    h.upload_style = UploadStyle::HttpPush;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(firmware_image("BIOS", "9", 100))];
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let r = c.send(c.request(Method::POST, "/redfish/v1/UpdateService/push").body(body)).await;
    assert_eq!(r.status, StatusCode::LENGTH_REQUIRED, "{}", r.raw);
    assert!(r.body["error"].is_object());
    // The slot was not taken: a proper push works.
    let ok = c.push_http(firmware_image("BIOS", "9", 100)).await;
    assert_eq!(c.wait_task(&ok).await["TaskState"], "Completed");
    fleet.shutdown().await;
}

#[tokio::test]
async fn unadvertised_push_endpoints_are_absent() {
    let mut h = host("host-001");
    h.upload_style = UploadStyle::SimpleUpdate;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart_to("/redfish/v1/UpdateService/upload", firmware_image("BIOS", "9", 10), json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.raw);
    let r =
        c.send(c.request(Method::POST, "/redfish/v1/UpdateService/push").body(firmware_image("BIOS", "9", 10))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = c.get("/redfish/v1/UpdateService/upload").await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(fleet.stats().uploads_started, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn multipart_parameter_errors() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let form = reqwest::multipart::Form::new().text("UpdateParameters", "{}");
    let r = c.send(c.request(Method::POST, "/redfish/v1/UpdateService/upload").multipart(form)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.message_id().ends_with("ActionParameterMissing"), "{}", r.raw);
    let r = c.send(c.request(Method::POST, "/redfish/v1/UpdateService/upload").body("plain")).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let form = reqwest::multipart::Form::new()
        .text("UpdateParameters", "{not json")
        .part("UpdateFile", reqwest::multipart::Part::bytes(firmware_image("BIOS", "9", 1)).file_name("f.bin"));
    let r = c.send(c.request(Method::POST, "/redfish/v1/UpdateService/upload").multipart(form)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // A rejected request releases the slot.
    let ok = c.push_multipart(firmware_image("BIOS", "9", 1), json!({})).await;
    assert_eq!(ok.status, StatusCode::ACCEPTED, "{}", ok.raw);
    fleet.shutdown().await;
}

#[tokio::test]
async fn targets_restrict_and_request_apply_time_overrides_default() {
    let mut h = host("host-001");
    h.firmware.push(hostfw_bmc_sim::FirmwareSpec::new("NIC.Slot.1", "20.0"));
    h.firmware.push(hostfw_bmc_sim::FirmwareSpec::new("NIC.Slot.2", "20.0"));
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let params = json!({
        "Targets": ["/redfish/v1/UpdateService/FirmwareInventory/NIC.Slot.2"],
        "@Redfish.OperationApplyTime": "OnReset",
    });
    let r = c.push_multipart(firmware_image("^NIC\\.", "21.0", 10), params).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(fleet.staged_versions("host-001"), vec![("NIC.Slot.2".to_string(), "21.0".to_string())]);
    assert_eq!(c.version_of("NIC.Slot.2").await, "20.0");

    // No Targets: every matching member, applied at once (the host default).
    let r = c.push_multipart(firmware_image("^NIC\\.", "22.0", 10), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(c.version_of("NIC.Slot.1").await, "22.0");
    assert_eq!(c.version_of("NIC.Slot.2").await, "22.0");
    assert_eq!(ApplyTime::parse("OnReset"), Some(ApplyTime::OnReset));
    fleet.shutdown().await;
}

#[tokio::test]
async fn non_updateable_member_fails_the_task() {
    let mut h = host("host-001");
    let mut cpld = hostfw_bmc_sim::FirmwareSpec::new("CPLD", "1.0");
    cpld.updateable = false;
    h.firmware.push(cpld);
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart(firmware_image("CPLD", "2.0", 10), json!({})).await;
    let task = c.wait_task(&r).await;
    assert_eq!(task["TaskState"], "Exception");
    assert!(messages_text(&task).contains("not updateable"), "{task}");
    fleet.shutdown().await;
}

#[tokio::test]
async fn large_images_stream_through() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart(firmware_image("BIOS", "2.9.0", 24 << 20), json!({})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.raw);
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.9.0");
    fleet.shutdown().await;
}

/// `targets_required` (a Supermicro BMC) holds on every upload route, not only multipart: an
/// update naming no inventory member in `Targets` is refused before it takes the update slot.
#[tokio::test]
async fn targets_required_holds_on_every_upload_route() {
    let target = format!("/redfish/v1/UpdateService/FirmwareInventory/{BIOS_MEMBER}");
    let image = || firmware_image("BIOS", "2.2.0", 100);
    for style in [UploadStyle::Multipart, UploadStyle::HttpPush, UploadStyle::SimpleUpdate] {
        let mut h = host("host-001");
        h.upload_style = style;
        h.targets_required = true;
        let fleet = start_fleet(vec![h]).await;
        let c = Client::new(&fleet.hosts()[0]);
        let files = serve_files(vec![("/bios.bin", image())]).await;
        let refused = match style {
            UploadStyle::Multipart => c.push_multipart(image(), json!({})).await,
            UploadStyle::HttpPush => c.push_http(image()).await,
            UploadStyle::SimpleUpdate => c.simple_update(json!({"ImageURI": format!("{files}/bios.bin")})).await,
        };
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{style:?}: {}", refused.raw);
        assert!(refused.raw.contains("Targets"), "{style:?}: {}", refused.raw);
        assert_eq!(fleet.stats().uploads_started, 0, "{style:?}: a refused update is no upload");
        let accepted = match style {
            UploadStyle::Multipart => Some(c.push_multipart(image(), json!({"Targets": [target]})).await),
            UploadStyle::SimpleUpdate => {
                Some(c.simple_update(json!({"ImageURI": format!("{files}/bios.bin"), "Targets": [target]})).await)
            }
            // HttpPushUri carries no parameters: such a BMC takes no update there.
            UploadStyle::HttpPush => None,
        };
        if let Some(accepted) = accepted {
            assert_eq!(accepted.status, StatusCode::ACCEPTED, "{style:?}: {}", accepted.raw);
            c.wait_task(&accepted).await;
        }
        fleet.shutdown().await;
    }
}
