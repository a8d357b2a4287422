//! Platform settings of an assigned host: lockdown read/set through the catalog's `lockdown`
//! setting (here bmc-sim's generic `Oem/Hostfw/Lockdown`), boot override and the booted image,
//! against bmc-sim (PATCH answered 200 + body or 204, Basic and session auth) and against a
//! scripted BMC for what bmc-sim does not do (no such properties, odd values, refused PATCH).
//! Must not synchronise with fixed sleeps: state changes are awaited by polling with a bound.

use crate::common;

use std::time::Duration;

use common::mock::{json, MockBmc};
use common::*;
use hostfw_model::{LockdownSetting, SettingValue};
use hostfw_redfish::{AuthMode, RedfishClient, RedfishError};
use serde_json::json as j;

const SYSTEM: &str = "/redfish/v1/Systems/1";

/// Where bmc-sim's generic shape keeps lockdown, as a catalog entry would say.
fn sim_lockdown(system: &str) -> LockdownSetting {
    LockdownSetting {
        resource: system.into(),
        property: "Oem/Hostfw/Lockdown".into(),
        enabled: SettingValue::Text("Enabled".into()),
        disabled: SettingValue::Text("Disabled".into()),
    }
}

const SIM_SYSTEM: &str = "/redfish/v1/Systems/System.Embedded.1";

async fn lockdown_round_trip(extra: &str, auth: AuthMode) {
    let (fleet, host) = one_host(extra).await;
    let client = client(&host, auth);
    let setting = sim_lockdown(SIM_SYSTEM);
    assert!(client.lockdown_state(&setting).await.unwrap().running);
    let deferred = client.set_lockdown_at(&setting, false).await.expect("lockdown off");
    assert!(!deferred, "no settings object: at once");
    assert_eq!(fleet.lockdown("h1"), Some(false));
    assert!(!client.lockdown_state(&setting).await.unwrap().effective());
    client.set_lockdown_at(&setting, true).await.expect("lockdown on");
    assert_eq!(fleet.lockdown("h1"), Some(true));
    fleet.shutdown().await;
}

#[tokio::test]
async fn lockdown_round_trip_patch_answered_200() {
    lockdown_round_trip("task_style = \"dell\"", AuthMode::Basic).await;
}

#[tokio::test]
async fn lockdown_round_trip_patch_answered_204_with_session() {
    lockdown_round_trip("task_style = \"bmcweb\"", AuthMode::Session).await;
}

#[tokio::test]
async fn discovery_boot_once_then_back_to_the_os() {
    let (fleet, host) = one_host("lockdown = false").await;
    let client = client(&host, AuthMode::Basic);
    assert!(!client.lockdown_state(&sim_lockdown(SIM_SYSTEM)).await.unwrap().running);
    assert_eq!(client.booted_image().await.unwrap().as_deref(), Some("os"));

    client.set_boot_override("Pxe", "Once").await.expect("override");
    assert_eq!(client.booted_image().await.unwrap().as_deref(), Some("os"), "takes effect at the next power-on");
    client.reset_system(&["ForceRestart"]).await.unwrap();
    eventually("discovery booted", Duration::from_secs(10), || async {
        client.booted_image().await.ok().flatten().as_deref() == Some("discovery")
            && client.power_state().await.ok().flatten().as_deref() == Some("On")
    })
    .await;
    client.reset_system(&["ForceRestart"]).await.unwrap();
    eventually("OS booted again", Duration::from_secs(10), || async {
        fleet.booted_image("h1").as_deref() == Some("os") && fleet.power_state("h1").as_deref() == Some("On")
    })
    .await;
    fleet.shutdown().await;
}

#[tokio::test]
async fn boot_override_values_are_checked_against_allowable_values() {
    let (fleet, host) = one_host("").await;
    let client = client(&host, AuthMode::Basic);
    let e = client.set_boot_override("Cd", "Once").await.expect_err("Cd is not offered");
    match &e {
        RedfishError::ValueNotAllowed { property, value, allowed, .. } => {
            assert_eq!(property, "Boot.BootSourceOverrideTarget");
            assert_eq!(value, "Cd");
            assert!(allowed.contains(&"Pxe".to_string()), "{allowed:?}");
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(text.contains(&host.addr.to_string()) && text.contains("Pxe"), "{text}");
    assert!(!e.is_transient());
    let e = client.set_boot_override("Pxe", "Always").await.expect_err("Always is not offered");
    assert!(e.to_string().contains("BootSourceOverrideEnabled"), "{e}");
    fleet.shutdown().await;
}

/// A scripted BMC whose one System is `system`.
fn mock_with_system(mock: &MockBmc, system: serde_json::Value) {
    mock.on("GET", "/redfish/v1/", vec![json(200, j!({"Systems": {"@odata.id": "/redfish/v1/Systems"}}))]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": SYSTEM}]}))]);
    mock.on("GET", SYSTEM, vec![json(200, system)]);
}

fn client_for(mock: &MockBmc) -> RedfishClient {
    common::mock_client(mock, options(AuthMode::Basic))
}

#[tokio::test]
async fn a_bmc_without_the_properties() {
    let mock = MockBmc::start().await;
    mock_with_system(&mock, j!({"Id": "1", "PowerState": "On", "Oem": {"Dell": {}}}));
    let client = client_for(&mock);
    assert_eq!(client.booted_image().await.unwrap(), None);
    let e = client.set_lockdown_at(&sim_lockdown(SYSTEM), false).await.expect_err("unsupported");
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    assert!(e.to_string().contains(&mock.address) && e.to_string().contains("Lockdown"), "{e}");
    let e = client.set_boot_override("Pxe", "Once").await.expect_err("no Boot");
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    assert!(e.to_string().contains("Boot"), "{e}");
    assert_eq!(mock.hits("PATCH", SYSTEM), 0, "nothing was sent");
}

#[tokio::test]
async fn odd_lockdown_value_and_refused_patch() {
    let mock = MockBmc::start().await;
    mock_with_system(
        &mock,
        j!({"Id": "1", "Oem": {"Hostfw": {"Lockdown": "Maybe"}},
            "Boot": {"BootSourceOverrideTarget": "None"}}),
    );
    let client = client_for(&mock);
    let e = client.lockdown_state(&sim_lockdown(SYSTEM)).await.expect_err("not a lockdown value");
    assert!(matches!(e, RedfishError::Parse { .. }), "{e:?}");
    assert!(e.to_string().contains(SYSTEM) && e.to_string().contains("Maybe"), "{e}");

    // No AllowableValues: no check; the BMC's refusal names URL and status.
    mock.on(
        "PATCH",
        SYSTEM,
        vec![json(
            400,
            j!({"error": {"message": "nope", "@Message.ExtendedInfo":
                [{"MessageId": "Base.1.18.PropertyValueNotInList", "Message": "Usb not allowed"}]}}),
        )],
    );
    let e = client.set_boot_override("Usb", "Once").await.expect_err("refused by the BMC");
    assert_eq!(e.http_status(), Some(400));
    let text = e.to_string();
    assert!(text.contains(&mock.address) && text.contains(SYSTEM) && text.contains("Usb not allowed"), "{text}");
    let sent = mock.log().into_iter().find(|l| l.method == "PATCH").unwrap();
    let body: serde_json::Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(body, j!({"Boot": {"BootSourceOverrideTarget": "Usb", "BootSourceOverrideEnabled": "Once"}}));
}
