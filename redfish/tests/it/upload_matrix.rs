//! Every upload style × every task style × both apply times, against bmc-sim: the upload goes
//! through the advertised route, the task monitor is followed to Completed, and the inventory
//! shows the new version (at once for Immediate; after `reset_system` for OnReset).
//! Must not test refusals or failures (`refusals.rs`) nor synchronise with fixed sleeps.

use crate::common;

use std::time::Duration;

use common::*;
use hostfw_redfish::{AuthMode, TaskFinal, TaskPoll, UploadRequest, UploadRoute};

async fn run_combo(upload_style: &str, task_style: &str, apply_time: &str) {
    let extra =
        format!("upload_style = \"{upload_style}\"\ntask_style = \"{task_style}\"\napply_time = \"{apply_time}\"");
    let (fleet, host) = one_host(&extra).await;
    let client = client(&host, AuthMode::Basic);

    let dir = tempfile::tempdir().unwrap();
    let bytes = image_bytes("^BMC_0$", "2.0", 64 * 1024);
    let path = write_image(&dir, "bmc-2.0.bin", &bytes);
    // Only SimpleUpdate hosts need the image served; the others must not use it.
    let server =
        if upload_style == "simpleupdate" { Some(serve_file(bytes.clone(), "bmc-2.0.bin").await) } else { None };
    let expected_route = match upload_style {
        "multipart" => UploadRoute::Multipart,
        "httppush" => UploadRoute::HttpPush,
        _ => UploadRoute::SimpleUpdate,
    };

    let req = UploadRequest {
        file: path,
        image_uri: server.as_ref().map(|s| s.url.clone()),
        targets: if upload_style == "httppush" {
            vec![] // HttpPushUri takes no targets in the request (the sim advertises none)
        } else {
            vec!["/redfish/v1/UpdateService/FirmwareInventory/BMC_0".to_string()]
        },
        apply_time: Some(apply_time.to_string()),
        force_route: None,
        extra_parts: Vec::new(),
    };
    let accepted = client.upload(&req).await.expect("upload accepted");
    assert_eq!(accepted.route, expected_route);
    let task = accepted.task.expect("a task to follow");
    // Each style hands us a different kind of monitor.
    match task_style {
        "spec" => {
            assert!(task.monitor_uri.contains("/TaskMonitors/"), "{task:?}");
            assert!(task.task_uri.is_some(), "{task:?}");
        }
        "bmcweb" => {
            assert!(task.monitor_uri.ends_with("/Monitor"), "{task:?}");
            assert!(task.task_uri.is_some(), "{task:?}");
        }
        "dell" => assert_eq!(Some(&task.monitor_uri), task.task_uri.as_ref()),
        _ => {
            assert!(task.monitor_uri.contains("/TaskService/Tasks/"), "{task:?}");
            assert_eq!(task.task_uri, None, "sushy answers 204 without a body");
        }
    }

    let mut polls = Vec::new();
    let outcome = client.wait_task(&task, wait_opts(), |p| polls.push(p.clone())).await.expect("task followed");
    assert_eq!(outcome.state, TaskFinal::Completed, "{outcome:?} after {polls:?}");
    assert!(outcome.succeeded(), "{outcome:?}");
    assert!(matches!(polls.last(), Some(TaskPoll::Done(_))), "the last progress report is the final one: {polls:?}");

    let member_version = |report: &hostfw_model::InventoryReport| {
        report.members.iter().find(|m| m.id == "BMC_0").map(|m| m.version.clone())
    };
    let report = client.explore().await.expect("explore");
    if apply_time == "Immediate" {
        assert_eq!(member_version(&report).as_deref(), Some("2.0"));
    } else {
        // Staged: still the old version until the host resets.
        assert_eq!(member_version(&report).as_deref(), Some("1.0"));
        assert!(outcome.messages.iter().any(|m| m.contains("AwaitToActivate")), "{outcome:?}");
        client.reset_system(&["ForceRestart"]).await.expect("reset");
        eventually("host powered on after the reset", Duration::from_secs(10), || async {
            client.power_state().await.ok().flatten().as_deref() == Some("On")
        })
        .await;
        let report = client.explore().await.expect("explore after reset");
        assert_eq!(member_version(&report).as_deref(), Some("2.0"));
    }
    // BIOS_0 untouched.
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("1.0"));
    assert_eq!(fleet.stats().per_host["h1"].uploads, 1);
    fleet.shutdown().await;
}

macro_rules! combos {
    ($($name:ident: $upload:literal, $task:literal, $apply:literal;)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                run_combo($upload, $task, $apply).await;
            }
        )*
    };
}

combos! {
    multipart_spec_immediate: "multipart", "spec", "Immediate";
    multipart_bmcweb_immediate: "multipart", "bmcweb", "Immediate";
    multipart_dell_immediate: "multipart", "dell", "Immediate";
    multipart_sushy_immediate: "multipart", "sushy", "Immediate";
    httppush_spec_immediate: "httppush", "spec", "Immediate";
    httppush_bmcweb_immediate: "httppush", "bmcweb", "Immediate";
    httppush_dell_immediate: "httppush", "dell", "Immediate";
    httppush_sushy_immediate: "httppush", "sushy", "Immediate";
    simpleupdate_spec_immediate: "simpleupdate", "spec", "Immediate";
    simpleupdate_bmcweb_immediate: "simpleupdate", "bmcweb", "Immediate";
    simpleupdate_dell_immediate: "simpleupdate", "dell", "Immediate";
    simpleupdate_sushy_immediate: "simpleupdate", "sushy", "Immediate";
    multipart_spec_onreset: "multipart", "spec", "OnReset";
    multipart_bmcweb_onreset: "multipart", "bmcweb", "OnReset";
    multipart_dell_onreset: "multipart", "dell", "OnReset";
    multipart_sushy_onreset: "multipart", "sushy", "OnReset";
    httppush_spec_onreset: "httppush", "spec", "OnReset";
    httppush_bmcweb_onreset: "httppush", "bmcweb", "OnReset";
    httppush_dell_onreset: "httppush", "dell", "OnReset";
    httppush_sushy_onreset: "httppush", "sushy", "OnReset";
    simpleupdate_spec_onreset: "simpleupdate", "spec", "OnReset";
    simpleupdate_bmcweb_onreset: "simpleupdate", "bmcweb", "OnReset";
    simpleupdate_dell_onreset: "simpleupdate", "dell", "OnReset";
    simpleupdate_sushy_onreset: "simpleupdate", "sushy", "OnReset";
}

/// A forced SimpleUpdate on a host that prefers multipart uses the action and still completes.
#[tokio::test]
async fn forced_simple_update_on_a_multipart_host() {
    let (fleet, host) = one_host("upload_style = \"multipart\"\ntask_style = \"spec\"").await;
    let client = client(&host, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let bytes = image_bytes("^BIOS_0$", "3.1", 1024);
    let path = write_image(&dir, "bios.bin", &bytes);
    let server = serve_file(bytes, "bios.bin").await;
    let accepted = client
        .upload(&UploadRequest {
            file: path,
            image_uri: Some(server.url.clone()),
            targets: vec![],
            apply_time: None,
            force_route: Some(UploadRoute::SimpleUpdate),
            extra_parts: Vec::new(),
        })
        .await
        .expect("upload");
    assert_eq!(accepted.route, UploadRoute::SimpleUpdate);
    let outcome = client.wait_task(&accepted.task.expect("task"), wait_opts(), |_| {}).await.expect("wait");
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("3.1"));
    fleet.shutdown().await;
}

/// `poll_task` is one poll: right after the upload the task is still running, with progress.
#[tokio::test]
async fn single_poll_reports_running_then_done() {
    let (fleet, host) = one_host("upload_style = \"multipart\"\ntask_style = \"dell\"\ntask_seconds = 1.0").await;
    let client = client(&host, AuthMode::Basic);
    let dir = tempfile::tempdir().unwrap();
    let path = write_image(&dir, "bmc.bin", &image_bytes("BMC_0", "5.0", 10));
    let accepted = client.upload(&UploadRequest { file: path, ..Default::default() }).await.expect("upload");
    let task = accepted.task.expect("task");
    assert!(task.task_uri.is_some(), "a Task body names its @odata.id: {task:?}");
    match client.poll_task(&task).await.expect("poll") {
        TaskPoll::Running { .. } => {}
        other => panic!("expected Running right after the upload, got {other:?}"),
    }
    let outcome = client.wait_task(&task, wait_opts(), |_| {}).await.expect("wait");
    assert!(outcome.succeeded());
    // Polling a finished dell-style task again still reports it (the Task stays).
    assert!(matches!(
        client.poll_task(&task).await.expect("poll"),
        TaskPoll::Done(o) if o.succeeded()
    ));
    fleet.shutdown().await;
}
