//! The exact monitor sequences of each task style, and the Task resource in every style.

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, TaskStyle};
use reqwest::StatusCode;
use serde_json::json;

/// Start a 1-second update on a host of `style`; returns the fleet, client and POST answer.
async fn slow_update(style: TaskStyle) -> (hostfw_bmc_sim::RunningFleet, Client, Reply) {
    let mut h = host("host-001");
    h.task_style = style;
    h.task_seconds = 1.0;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart(firmware_image("iDRAC", "7.10.00.00", 128), json!({})).await;
    (fleet, c, r)
}

/// Poll `uri` until it stops answering 202; returns that answer.
async fn first_non_202(c: &Client, uri: &str) -> Reply {
    eventually("monitor leaves 202", || async {
        let r = c.get(uri).await;
        (r.status != StatusCode::ACCEPTED).then_some(r)
    })
    .await
}

#[tokio::test]
async fn spec_monitor_202_then_200_once_then_404() {
    let (fleet, c, r) = slow_update(TaskStyle::Spec).await;
    let monitor = r.header("Location").unwrap().to_string();
    let running = c.get(&monitor).await;
    assert_eq!(running.status, StatusCode::ACCEPTED);
    assert!(running.body["TaskState"].as_str().unwrap() != "Completed");
    assert!(running.header("Retry-After").is_some());
    let done = first_non_202(&c, &monitor).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.raw);
    assert_eq!(done.body["TaskState"], "Completed");
    assert_eq!(c.get(&monitor).await.status, StatusCode::NOT_FOUND);
    let task = c.resource(r.body["@odata.id"].as_str().unwrap()).await;
    assert_eq!(task["TaskState"], "Completed");
    assert_eq!(c.version_of(BMC_MEMBER).await, "7.10.00.00");
    fleet.shutdown().await;
}

#[tokio::test]
async fn bmcweb_monitor_202_then_204_once_then_404() {
    let (fleet, c, r) = slow_update(TaskStyle::Bmcweb).await;
    let monitor = r.header("Location").unwrap().to_string();
    let task_uri = monitor.trim_end_matches("/Monitor").to_string();
    assert_eq!(c.get(&monitor).await.status, StatusCode::ACCEPTED);
    assert_eq!(c.resource(&task_uri).await["TaskState"], "Running");
    let id = task_uri.rsplit('/').next().unwrap();
    let other_kind = c.get(&format!("/redfish/v1/TaskService/TaskMonitors/{id}")).await;
    assert_eq!(other_kind.status, StatusCode::NOT_FOUND, "a bmcweb host serves only its own monitor");
    let done = first_non_202(&c, &monitor).await;
    assert_eq!(done.status, StatusCode::NO_CONTENT);
    assert!(done.raw.is_empty());
    assert_eq!(c.get(&monitor).await.status, StatusCode::NOT_FOUND);
    let task = c.resource(&task_uri).await;
    assert_eq!(task["TaskState"], "Completed");
    assert_eq!(task["TaskStatus"], "OK");
    fleet.shutdown().await;
}

#[tokio::test]
async fn dell_location_is_the_task_always_200() {
    let (fleet, c, r) = slow_update(TaskStyle::Dell).await;
    let location = r.header("Location").unwrap().to_string();
    let first = c.get(&location).await;
    assert_eq!(first.status, StatusCode::OK);
    assert!(matches!(first.body["TaskState"].as_str(), Some("New" | "Running")), "{}", first.raw);
    eventually("dell task completes", || async {
        let r = c.get(&location).await;
        assert_eq!(r.status, StatusCode::OK);
        (r.body["TaskState"] == "Completed").then_some(())
    })
    .await;
    assert_eq!(c.get(&location).await.status, StatusCode::OK, "still there after completion");
    fleet.shutdown().await;
}

#[tokio::test]
async fn sushy_204_with_location_of_the_task() {
    let (fleet, c, r) = slow_update(TaskStyle::Sushy).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    let location = r.header("Location").unwrap().to_string();
    eventually("sushy task completes", || async {
        let r = c.get(&location).await;
        assert_eq!(r.status, StatusCode::OK);
        (r.body["TaskState"] == "Completed").then_some(())
    })
    .await;
    fleet.shutdown().await;
}

#[tokio::test]
async fn task_service_lists_tasks_with_full_bodies() {
    let (fleet, c, r) = slow_update(TaskStyle::Spec).await;
    let task = c.wait_task(&r).await;
    let svc = c.resource("/redfish/v1/TaskService").await;
    let tasks = c.resource(svc["Tasks"]["@odata.id"].as_str().unwrap()).await;
    assert_eq!(tasks["Members"][0]["@odata.id"], task["@odata.id"]);
    assert_eq!(task["@odata.type"], "#Task.v1_7_0.Task");
    for key in ["Id", "StartTime", "EndTime", "TaskMonitor", "Messages", "PercentComplete"] {
        assert!(!task[key].is_null(), "{key} missing: {task}");
    }
    let ids = message_ids(&task);
    assert!(ids.iter().any(|m| m == "Update.1.0.UpdateSuccessful"), "{ids:?}");
    fleet.shutdown().await;
}
