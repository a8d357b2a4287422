//! Every upload style × every task style × both apply times: the update completes, and the
//! version changes at completion (Immediate) or is staged until a ComputerSystem.Reset (OnReset).

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, ApplyTime, TaskStyle, UploadStyle};
use reqwest::StatusCode;
use serde_json::json;

async fn run_combo(upload: UploadStyle, task_style: TaskStyle, apply: ApplyTime) {
    let mut h = host("host-001");
    h.upload_style = upload;
    h.task_style = task_style;
    h.apply_time = apply;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let image = firmware_image("BIOS", "2.2.0", 64 * 1024);

    let accepted = match upload {
        UploadStyle::Multipart => {
            c.push_multipart(image, json!({"Targets": [], "@Redfish.OperationApplyTime": apply.as_str()})).await
        }
        UploadStyle::HttpPush => c.push_http(image).await,
        UploadStyle::SimpleUpdate => {
            let base = serve_files(vec![("/fw/bios.bin", image)]).await;
            c.simple_update(json!({"ImageURI": format!("{base}/fw/bios.bin"), "TransferProtocol": "HTTP"})).await
        }
    };
    check_post_shape(task_style, &accepted);

    let task = c.wait_task(&accepted).await;
    assert_eq!(task["TaskState"], "Completed", "{task}");
    assert_eq!(task["TaskStatus"], "OK");
    assert_eq!(task["PercentComplete"], 100);
    assert!(task["EndTime"].is_string());
    let ids = message_ids(&task);

    match apply {
        ApplyTime::Immediate => {
            assert!(ids.contains(&"Update.1.0.UpdateSuccessful".to_string()), "{ids:?}");
            assert_eq!(c.version_of(BIOS_MEMBER).await, "2.2.0");
            let sys = c.resource("/redfish/v1/Systems/System.Embedded.1").await;
            assert_eq!(sys["BiosVersion"], "2.2.0");
        }
        ApplyTime::OnReset => {
            assert!(ids.contains(&"Update.1.0.AwaitToActivate".to_string()), "{ids:?}");
            assert_eq!(c.version_of(BIOS_MEMBER).await, "2.1.0", "OnReset must not change the running version");
            assert_eq!(fleet.staged_versions("host-001"), vec![(BIOS_MEMBER.to_string(), "2.2.0".to_string())]);
            let r = c
                .post(
                    "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset",
                    json!({"ResetType": "ForceRestart"}),
                )
                .await;
            assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
            eventually("host back on with the staged BIOS", || async {
                (c.power_state().await == "On" && c.version_of(BIOS_MEMBER).await == "2.2.0").then_some(())
            })
            .await;
            assert!(fleet.staged_versions("host-001").is_empty());
        }
    }
    assert_eq!(c.version_of(BMC_MEMBER).await, "7.00.00.00", "other members untouched");
    let stats = fleet.stats();
    assert_eq!(stats.uploads_started, 1);
    assert_eq!(stats.per_host["host-001"].uploads, 1);
    fleet.shutdown().await;
}

/// The POST answer each task style promises.
fn check_post_shape(style: TaskStyle, r: &Reply) {
    let location = r.header("Location").unwrap_or_default().to_string();
    match style {
        TaskStyle::Spec => {
            assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.raw);
            assert!(location.starts_with("/redfish/v1/TaskService/TaskMonitors/"), "{location}");
            assert_eq!(r.header("Retry-After"), Some("1"));
            assert_eq!(r.body["TaskMonitor"], location.as_str());
        }
        TaskStyle::Bmcweb => {
            assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.raw);
            assert!(location.starts_with("/redfish/v1/TaskService/Tasks/") && location.ends_with("/Monitor"));
            assert!(r.body["@odata.type"].as_str().unwrap().starts_with("#Task."));
        }
        TaskStyle::Dell => {
            assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.raw);
            assert_eq!(r.body["@odata.id"], location.as_str());
            assert!(location.starts_with("/redfish/v1/TaskService/Tasks/"));
        }
        TaskStyle::Sushy => {
            assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
            assert!(r.raw.is_empty());
            assert!(location.starts_with("/redfish/v1/TaskService/Tasks/") && !location.ends_with("/Monitor"));
        }
    }
}

macro_rules! combos {
    ($($name:ident: $upload:ident, $task:ident, $apply:ident;)*) => {$(
        #[tokio::test]
        async fn $name() {
            run_combo(UploadStyle::$upload, TaskStyle::$task, ApplyTime::$apply).await;
        }
    )*};
}

combos! {
    multipart_spec_immediate: Multipart, Spec, Immediate;
    multipart_spec_onreset: Multipart, Spec, OnReset;
    multipart_bmcweb_immediate: Multipart, Bmcweb, Immediate;
    multipart_bmcweb_onreset: Multipart, Bmcweb, OnReset;
    multipart_dell_immediate: Multipart, Dell, Immediate;
    multipart_dell_onreset: Multipart, Dell, OnReset;
    multipart_sushy_immediate: Multipart, Sushy, Immediate;
    multipart_sushy_onreset: Multipart, Sushy, OnReset;
    httppush_spec_immediate: HttpPush, Spec, Immediate;
    httppush_spec_onreset: HttpPush, Spec, OnReset;
    httppush_bmcweb_immediate: HttpPush, Bmcweb, Immediate;
    httppush_bmcweb_onreset: HttpPush, Bmcweb, OnReset;
    httppush_dell_immediate: HttpPush, Dell, Immediate;
    httppush_dell_onreset: HttpPush, Dell, OnReset;
    httppush_sushy_immediate: HttpPush, Sushy, Immediate;
    httppush_sushy_onreset: HttpPush, Sushy, OnReset;
    simpleupdate_spec_immediate: SimpleUpdate, Spec, Immediate;
    simpleupdate_spec_onreset: SimpleUpdate, Spec, OnReset;
    simpleupdate_bmcweb_immediate: SimpleUpdate, Bmcweb, Immediate;
    simpleupdate_bmcweb_onreset: SimpleUpdate, Bmcweb, OnReset;
    simpleupdate_dell_immediate: SimpleUpdate, Dell, Immediate;
    simpleupdate_dell_onreset: SimpleUpdate, Dell, OnReset;
    simpleupdate_sushy_immediate: SimpleUpdate, Sushy, Immediate;
    simpleupdate_sushy_onreset: SimpleUpdate, Sushy, OnReset;
}
