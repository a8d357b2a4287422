//! The AC power cycle through the action the model's catalog names (`AcCycleSetting`):
//! activating firmware that needs one on bmc-sim; the GB200 tray's OEM `AuxPowerReset` on the
//! captured tree (never the BMC chassis' own `PowerCycle`); a ResetType outside the allowable
//! values and an action the resource lacks (clear errors, nothing sent); a connection dropped
//! after the POST.
//! Must not synchronise with fixed sleeps: state changes are awaited by polling with a bound.

use crate::common;

use std::time::Duration;

use common::mock::{empty, json, Canned, MockBmc};
use common::*;
use hostfw_bmc_sim::{firmware_image_with_activation, Activation};
use hostfw_model::AcCycleSetting;
use hostfw_redfish::{AuthMode, RedfishClient, RedfishError, UploadRequest};
use serde_json::json as j;

#[tokio::test]
async fn ac_cycle_activates_firmware_that_needs_one() {
    let (fleet, host) = one_host("reset_seconds = 0.3").await;
    let client = client(&host, AuthMode::Session);
    let dir = tempfile::tempdir().unwrap();
    let image = firmware_image_with_activation("BIOS_0", "2.0", Activation::AcCycle, 100);
    let path = write_image(&dir, "bios.bin", &image);
    let accepted = client.upload(&UploadRequest { file: path, ..Default::default() }).await.unwrap();
    let outcome = client.wait_task(&accepted.task.unwrap(), wait_opts(), |_| {}).await.unwrap();
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("1.0"));

    client.reset_system(&["ForceRestart"]).await.unwrap();
    eventually("power on after restart", Duration::from_secs(10), || async {
        client.power_state().await.ok().flatten().as_deref() == Some("On")
    })
    .await;
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("1.0"), "a system reset does not activate it");

    client.ac_power_cycle_at(&generic_setting()).await.expect("AC cycle");
    eventually("activated by the AC cycle", Duration::from_secs(10), || async {
        sim_version(&fleet, "h1", "BIOS_0").as_deref() == Some("2.0")
            && client.power_state().await.ok().flatten().as_deref() == Some("On")
    })
    .await;
    let stats = fleet.stats();
    assert_eq!(stats.per_host["h1"].ac_cycles, 1);
    assert_eq!(stats.per_host["h1"].installs["BIOS_0"], 1);
    fleet.shutdown().await;
}

fn client_for(mock: &MockBmc) -> RedfishClient {
    common::mock_client(mock, options(AuthMode::Basic))
}

fn setting(resource: &str, action: &str, reset_type: Option<&str>) -> AcCycleSetting {
    AcCycleSetting {
        resource: resource.into(),
        action: action.into(),
        reset_type: reset_type.map(str::to_string),
        power_off_first: false,
    }
}

/// bmc-sim's generic shape: `#Chassis.Reset` `PowerCycle` on `Chassis/1`.
fn generic_setting() -> AcCycleSetting {
    setting("/redfish/v1/Chassis/1", "#Chassis.Reset", Some("PowerCycle"))
}

const BMC_0: &str = "/redfish/v1/Chassis/BMC_0";

#[tokio::test]
async fn the_gb200_tray_cycle_is_the_oem_action_never_the_bmc_chassis_power_cycle() {
    let Some(tree) = common::captured::tree("nvidia_gb200") else { return };
    let mock = MockBmc::start().await;
    tree.serve(&mock, &["/redfish/v1", BMC_0, "/redfish/v1/Chassis/BMC_0/Oem/Nvidia/AuxPowerResetActionInfo"]);
    let oem = "/redfish/v1/Chassis/BMC_0/Actions/Oem/NvidiaChassis.AuxPowerReset";
    mock.on("POST", oem, vec![empty(204, &[])]);
    let gb200 = setting(BMC_0, "#NvidiaChassis.AuxPowerReset", Some("AuxPowerCycle"));
    client_for(&mock).ac_power_cycle_at(&gb200).await.expect("tray AC cycle");
    assert_eq!(mock.hits("POST", oem), 1);
    assert_eq!(
        mock.hits("POST", "/redfish/v1/Chassis/BMC_0/Actions/Chassis.Reset"),
        0,
        "the BMC's own chassis is not cycled"
    );
    let sent = mock.log().into_iter().find(|l| l.method == "POST").unwrap();
    let body: serde_json::Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body, j!({"ResetType": "AuxPowerCycle"}));

    // The standard ResetType is not what that OEM action allows: refused, nothing sent.
    let wrong = setting(BMC_0, "#NvidiaChassis.AuxPowerReset", Some("PowerCycle"));
    let e = client_for(&mock).ac_power_cycle_at(&wrong).await.expect_err("not allowed");
    assert!(matches!(e, RedfishError::ResetTypeNotAllowed { .. }), "{e:?}");
    assert!(e.to_string().contains("AuxPowerCycle"), "{e}");
    assert_eq!(mock.hits("POST", oem), 1);
}

#[tokio::test]
async fn an_action_the_resource_lacks_is_a_clear_error() {
    let mock = MockBmc::start().await;
    mock.on("GET", "/redfish/v1/Chassis/1", vec![json(200, j!({"Id": "1", "Actions": {}}))]);
    let e = client_for(&mock).ac_power_cycle_at(&generic_setting()).await.expect_err("no action");
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains(&mock.address) && text.contains("#Chassis.Reset") && text.contains("/redfish/v1/Chassis/1"),
        "{text}"
    );
}

#[tokio::test]
async fn a_dropped_answer_is_accepted_and_a_refusal_is_not() {
    let mock = MockBmc::start().await;
    let doc = j!({"Actions": {"#Chassis.Reset": {"target": "/c1/reset"}}});
    mock.on("GET", "/redfish/v1/Chassis/1", vec![json(200, doc)]);
    mock.on("POST", "/c1/reset", vec![Canned::Drop]);
    client_for(&mock)
        .ac_power_cycle_at(&generic_setting())
        .await
        .expect("a BMC losing power mid-answer still accepted it");
    assert_eq!(mock.hits("POST", "/c1/reset"), 1);
    mock.on("POST", "/c1/reset", vec![json(409, j!({"error": {"message": "host busy"}}))]);
    let e = client_for(&mock).ac_power_cycle_at(&generic_setting()).await.expect_err("refused");
    assert_eq!(e.http_status(), Some(409));
    assert!(e.to_string().contains("/c1/reset") && e.to_string().contains("host busy"), "{e}");
}
