//! The AC power cycle through Chassis.Reset: activating firmware that needs one on bmc-sim, and
//! against a scripted BMC the chassis choice (PowerCycle listed, not listed, no list), a BMC
//! that offers none (a clear error naming it) and a connection dropped after the POST.
//! Must not synchronise with fixed sleeps: state changes are awaited by polling with a bound.

mod common;

use std::time::Duration;

use common::mock::{empty, json, Canned, MockBmc};
use common::*;
use hostfw_bmc_sim::{firmware_image_with_activation, Activation};
use hostfw_redfish::{AuthMode, BmcEndpoint, RedfishClient, RedfishError, UploadRequest};
use serde_json::json as j;

#[tokio::test]
async fn ac_cycle_activates_firmware_that_needs_one() {
    let (fleet, host) = one_host("reset_seconds = 0.3").await;
    let client = client(&host, AuthMode::Session);
    let dir = tempfile::tempdir().unwrap();
    let image = firmware_image_with_activation("BIOS_0", "2.0", Activation::AcCycle, 100);
    let path = write_image(&dir, "bios.bin", &image);
    let accepted = client
        .upload(&UploadRequest {
            file: path,
            ..Default::default()
        })
        .await
        .unwrap();
    let outcome = client
        .wait_task(&accepted.task.unwrap(), wait_opts(), |_| {})
        .await
        .unwrap();
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("1.0"));

    client.reset_system("ForceRestart").await.unwrap();
    eventually(
        "power on after restart",
        Duration::from_secs(10),
        || async { client.power_state().await.ok().flatten().as_deref() == Some("On") },
    )
    .await;
    assert_eq!(
        sim_version(&fleet, "h1", "BIOS_0").as_deref(),
        Some("1.0"),
        "a system reset does not activate it"
    );

    client.ac_power_cycle().await.expect("AC cycle");
    eventually(
        "activated by the AC cycle",
        Duration::from_secs(10),
        || async {
            sim_version(&fleet, "h1", "BIOS_0").as_deref() == Some("2.0")
                && client.power_state().await.ok().flatten().as_deref() == Some("On")
        },
    )
    .await;
    let stats = fleet.stats();
    assert_eq!(stats.per_host["h1"].ac_cycles, 1);
    assert_eq!(stats.per_host["h1"].installs["BIOS_0"], 1);
    fleet.shutdown().await;
}

fn client_for(mock: &MockBmc) -> RedfishClient {
    RedfishClient::new(
        BmcEndpoint {
            address: mock.bmc(),
            username: "admin".into(),
            password: "password".into(),
        },
        options(AuthMode::Basic),
    )
    .unwrap()
}

/// A scripted BMC with these chassis documents at `/redfish/v1/Chassis/<i>`.
fn mock_chassis(mock: &MockBmc, chassis: Vec<serde_json::Value>) {
    mock.on(
        "GET",
        "/redfish/v1/",
        vec![json(
            200,
            j!({"Chassis": {"@odata.id": "/redfish/v1/Chassis"}}),
        )],
    );
    let members: Vec<_> = (0..chassis.len())
        .map(|i| j!({"@odata.id": format!("/redfish/v1/Chassis/{i}")}))
        .collect();
    mock.on(
        "GET",
        "/redfish/v1/Chassis",
        vec![json(200, j!({"Members": members}))],
    );
    for (i, doc) in chassis.into_iter().enumerate() {
        mock.on(
            "GET",
            &format!("/redfish/v1/Chassis/{i}"),
            vec![json(200, doc)],
        );
    }
}

fn reset_action(target: &str, allowed: Option<&[&str]>) -> serde_json::Value {
    let mut action = j!({"target": target});
    if let Some(allowed) = allowed {
        action["ResetType@Redfish.AllowableValues"] = j!(allowed);
    }
    j!({"Actions": {"#Chassis.Reset": action}})
}

#[tokio::test]
async fn no_chassis_offering_power_cycle_is_a_clear_error() {
    let mock = MockBmc::start().await;
    mock_chassis(
        &mock,
        vec![
            j!({"Id": "Tray"}),
            reset_action("/c1/reset", Some(&["On", "ForceOff"])),
        ],
    );
    let e = client_for(&mock)
        .ac_power_cycle()
        .await
        .expect_err("no PowerCycle anywhere");
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains(&mock.address)
            && text.contains("PowerCycle")
            && text.contains("/redfish/v1/Chassis"),
        "{text}"
    );
    assert_eq!(mock.hits("POST", "/c1/reset"), 0);

    let bare = MockBmc::start().await;
    bare.on(
        "GET",
        "/redfish/v1/",
        vec![json(200, j!({"Systems": {"@odata.id": "/s"}}))],
    );
    let e = client_for(&bare)
        .ac_power_cycle()
        .await
        .expect_err("no Chassis");
    assert!(
        matches!(e, RedfishError::Unsupported { .. }) && e.to_string().contains("Chassis"),
        "{e}"
    );
}

#[tokio::test]
async fn a_chassis_listing_power_cycle_wins_over_one_without_a_list() {
    let mock = MockBmc::start().await;
    mock_chassis(
        &mock,
        vec![
            reset_action("/c0/reset", None),
            reset_action("/c1/reset", Some(&["ForceOff", "PowerCycle"])),
        ],
    );
    mock.on("POST", "/c1/reset", vec![empty(204, &[])]);
    client_for(&mock).ac_power_cycle().await.expect("AC cycle");
    assert_eq!(mock.hits("POST", "/c0/reset"), 0);
    let sent = mock.log().into_iter().find(|l| l.method == "POST").unwrap();
    let body: serde_json::Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body, j!({"ResetType": "PowerCycle"}));
}

#[tokio::test]
async fn a_chassis_without_a_list_is_the_fallback_and_a_dropped_answer_is_accepted() {
    let mock = MockBmc::start().await;
    mock_chassis(
        &mock,
        vec![
            reset_action("/c0/reset", Some(&["On"])),
            reset_action("/c1/reset", None),
        ],
    );
    mock.on("POST", "/c1/reset", vec![Canned::Drop]);
    client_for(&mock)
        .ac_power_cycle()
        .await
        .expect("a BMC losing power mid-answer still accepted it");
    assert_eq!(mock.hits("POST", "/c1/reset"), 1);

    mock.on(
        "POST",
        "/c1/reset",
        vec![json(409, j!({"error": {"message": "host busy"}}))],
    );
    let e = client_for(&mock)
        .ac_power_cycle()
        .await
        .expect_err("refused");
    assert_eq!(e.http_status(), Some(409));
    assert!(
        e.to_string().contains("/c1/reset") && e.to_string().contains("host busy"),
        "{e}"
    );
}
