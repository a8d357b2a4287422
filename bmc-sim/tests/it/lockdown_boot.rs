//! Platform lockdown and discovery boot on the System: `Oem.Hostfw` {Lockdown, BootedImage},
//! the `Boot` override, PATCH answers per vendor style, refused PATCH bodies, and which image
//! the host boots after a reset or an AC cycle.

use crate::common;

use common::*;
use hostfw_bmc_sim::TaskStyle;
use reqwest::StatusCode;
use serde_json::json;

fn pxe(enabled: &str) -> serde_json::Value {
    json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": enabled}})
}

fn lockdown(value: &str) -> serde_json::Value {
    json!({"Oem": {"Hostfw": {"Lockdown": value}}})
}

#[tokio::test]
async fn system_shows_lockdown_boot_and_booted_image() {
    let mut open = host("host-002");
    open.lockdown = false;
    let fleet = start_fleet(vec![host("host-001"), open]).await;
    let c = Client::new(&fleet.host("host-001").unwrap());
    let sys = c.resource(SYSTEM).await;
    assert_eq!(sys["Oem"]["Hostfw"]["Lockdown"], "Enabled");
    assert_eq!(sys["Oem"]["Hostfw"]["BootedImage"], "os");
    assert_eq!(sys["Boot"]["BootSourceOverrideTarget"], "None");
    assert_eq!(sys["Boot"]["BootSourceOverrideEnabled"], "Disabled");
    assert_eq!(sys["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"], json!(["None", "Pxe", "Hdd"]));
    assert_eq!(
        sys["Boot"]["BootSourceOverrideEnabled@Redfish.AllowableValues"],
        json!(["Disabled", "Once", "Continuous"])
    );
    assert_eq!(fleet.lockdown("host-001"), Some(true));
    assert_eq!(fleet.booted_image("host-001").as_deref(), Some("os"));
    assert_eq!(fleet.power_state("host-001").as_deref(), Some("On"));

    let c2 = Client::new(&fleet.host("host-002").unwrap());
    assert_eq!(c2.resource(SYSTEM).await["Oem"]["Hostfw"]["Lockdown"], "Disabled");
    assert_eq!(fleet.lockdown("host-002"), Some(false));
    assert_eq!(fleet.lockdown("nope"), None);
    assert_eq!(fleet.booted_image("nope"), None);
    assert_eq!(fleet.power_state("nope"), None);
    fleet.shutdown().await;
}

#[tokio::test]
async fn patch_lockdown_answers_200_or_204_by_style() {
    let mut bmcweb = host("host-002");
    bmcweb.task_style = TaskStyle::Bmcweb;
    let fleet = start_fleet(vec![host("host-001"), bmcweb]).await;

    let spec = Client::new(&fleet.host("host-001").unwrap());
    let r = spec.patch(SYSTEM, lockdown("Disabled")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.raw);
    assert_eq!(r.body["Oem"]["Hostfw"]["Lockdown"], "Disabled");
    assert_eq!(fleet.lockdown("host-001"), Some(false));

    let openbmc = Client::new(&fleet.host("host-002").unwrap());
    let r = openbmc.patch(SYSTEM, lockdown("Disabled")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    assert_eq!(fleet.lockdown("host-002"), Some(false));
    let r = openbmc.patch(SYSTEM, lockdown("Enabled")).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(openbmc.resource(SYSTEM).await["Oem"]["Hostfw"]["Lockdown"], "Enabled");
    assert_eq!(fleet.lockdown("host-001"), Some(false), "hosts are independent");

    let r = Client::anonymous(&fleet.host("host-001").unwrap()).patch(SYSTEM, lockdown("Enabled")).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(fleet.lockdown("host-001"), Some(false));
    fleet.shutdown().await;
}

#[tokio::test]
async fn bad_patches_are_refused_and_change_nothing() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let cases = [
        (lockdown("Off"), "PropertyValueNotInList"),
        (json!({"Oem": {"Hostfw": {"Lockdown": true}}}), "PropertyValueTypeError"),
        (json!({"Oem": {"Hostfw": {"BootedImage": "discovery"}}}), "PropertyNotWritable"),
        (json!({"Oem": {"Dell": {}}}), "PropertyUnknown"),
        (json!({"PowerState": "Off"}), "PropertyNotWritable"),
        (json!({"AssetTag": "x"}), "PropertyUnknown"),
        (json!({"Boot": 3}), "PropertyValueTypeError"),
        (json!({"Boot": {"BootSourceOverrideMode": "UEFI"}}), "PropertyUnknown"),
        // valid target with an invalid Enabled: nothing at all may change
        (pxe("Sometimes"), "PropertyValueNotInList"),
        (
            json!({"Oem": {"Hostfw": {"Lockdown": "Disabled"}}, "Boot": {"BootSourceOverrideTarget": "Cd"}}),
            "PropertyValueNotInList",
        ),
        (json!({}), "EmptyJSON"),
    ];
    for (body, message_id) in cases {
        let r = c.patch(SYSTEM, body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.raw);
        assert!(r.message_id().ends_with(message_id), "{body}: {}", r.raw);
    }
    let sys = c.resource(SYSTEM).await;
    assert_eq!(sys["Boot"]["BootSourceOverrideTarget"], "None");
    assert_eq!(sys["Oem"]["Hostfw"]["Lockdown"], "Enabled");
    fleet.shutdown().await;
}

#[tokio::test]
async fn pxe_once_boots_discovery_once() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.patch(SYSTEM, pxe("Once")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.raw);
    assert_eq!(r.body["Boot"]["BootSourceOverrideTarget"], "Pxe");
    assert_eq!(fleet.booted_image("host-001").as_deref(), Some("os"), "nothing boots before a reset");

    let restart = json!({"ResetType": "ForceRestart"});
    assert_eq!(c.post(SYSTEM_RESET, restart.clone()).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "On").await;
    let sys = c.resource(SYSTEM).await;
    assert_eq!(sys["Oem"]["Hostfw"]["BootedImage"], "discovery");
    assert_eq!(sys["Boot"]["BootSourceOverrideEnabled"], "Disabled", "Once is consumed");
    assert_eq!(sys["Boot"]["BootSourceOverrideTarget"], "None");

    assert_eq!(c.post(SYSTEM_RESET, restart).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "On").await;
    assert_eq!(fleet.booted_image("host-001").as_deref(), Some("os"));
    fleet.shutdown().await;
}

#[tokio::test]
async fn continuous_pxe_survives_resets_and_ac_cycles() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    assert_eq!(c.patch(SYSTEM, pxe("Continuous")).await.status, StatusCode::OK);
    let cycle = json!({"ResetType": "PowerCycle"});
    assert_eq!(c.post(CHASSIS_RESET, cycle.clone()).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "On").await;
    assert_eq!(fleet.booted_image("host-001").as_deref(), Some("discovery"));
    assert_eq!(c.post(SYSTEM_RESET, json!({"ResetType": "ForceRestart"})).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "On").await;
    assert_eq!(fleet.booted_image("host-001").as_deref(), Some("discovery"));

    let off = json!({"Boot": {"BootSourceOverrideEnabled": "Disabled"}});
    assert_eq!(c.patch(SYSTEM, off).await.status, StatusCode::OK);
    assert_eq!(c.post(CHASSIS_RESET, cycle).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "On").await;
    assert_eq!(fleet.booted_image("host-001").as_deref(), Some("os"));
    fleet.shutdown().await;
}
