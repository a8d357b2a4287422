//! The AC power cycle (Chassis.Reset PowerCycle), per-image activation requirements
//! (`activation=immediate|reset|ac_cycle|manager_reset`) and install counting.

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, firmware_image_with_activation, Activation, ApplyTime, FirmwareSpec};
use reqwest::StatusCode;
use serde_json::json;

const CPLD: &str = "CPLD_Motherboard";

/// A host with a CPLD member as well.
fn cpld_host(id: &str) -> hostfw_bmc_sim::HostSpec {
    let mut h = host(id);
    h.firmware.push(FirmwareSpec::new(CPLD, "1.0"));
    h
}

async fn flash(c: &Client, image: Vec<u8>) -> serde_json::Value {
    let r = c.push_multipart(image, json!({})).await;
    c.wait_task(&r).await
}

async fn ac_cycle(c: &Client) {
    let r = c.post(CHASSIS_RESET, json!({"ResetType": "PowerCycle"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    wait_power(c, "On").await;
}

async fn system_restart(c: &Client) {
    let r = c.post(SYSTEM_RESET, json!({"ResetType": "ForceRestart"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    wait_power(c, "On").await;
}

async fn manager_reset(c: &Client) {
    let r = c.post(MANAGER_RESET, json!({})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    wait_down_and_up(c).await;
}

#[tokio::test]
async fn chassis_is_linked_and_offers_power_cycle() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let root = c.resource("/redfish/v1").await;
    let coll_uri = root["Chassis"]["@odata.id"].as_str().unwrap().to_string();
    let coll = c.resource(&coll_uri).await;
    assert_eq!(coll["Members@odata.count"], 1);
    let chassis_uri = coll["Members"][0]["@odata.id"].as_str().unwrap().to_string();
    assert_eq!(chassis_uri, "/redfish/v1/Chassis/1");
    let chassis = c.resource(&chassis_uri).await;
    let action = &chassis["Actions"]["#Chassis.Reset"];
    assert_eq!(action["target"], CHASSIS_RESET);
    assert_eq!(action["ResetType@Redfish.AllowableValues"], json!(["PowerCycle"]));
    assert_eq!(chassis["PowerState"], "On");
    assert_eq!(c.resource(SYSTEM).await["Links"]["Chassis"][0]["@odata.id"], chassis_uri.as_str());

    for body in [json!({"ResetType": "ForceOff"}), json!({})] {
        let r = c.post(CHASSIS_RESET, body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.raw);
    }
    let r = Client::anonymous(&fleet.hosts()[0]).post(CHASSIS_RESET, json!({"ResetType": "PowerCycle"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(fleet.stats().ac_cycles_total, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn ac_cycle_powers_the_host_off_and_on_while_the_bmc_stays_up() {
    let mut h = host("host-001");
    h.reset_seconds = 2.0; // room to look at the host while it is off
    let fleet = start_fleet(vec![h, host("host-002")]).await;
    let mut c = Client::new(&fleet.hosts()[0]);
    assert_eq!(c.login().await.status, StatusCode::CREATED);
    let r = c.post(CHASSIS_RESET, json!({"ResetType": "PowerCycle"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    assert_eq!(fleet.power_state("host-001").as_deref(), Some("Off"));
    assert_eq!(c.resource("/redfish/v1/Chassis/1").await["PowerState"], "Off");
    assert_eq!(c.get("/redfish/v1/Managers/BMC").await.status, StatusCode::OK, "the BMC and its sessions stay up");
    wait_power(&c, "On").await;
    let stats = fleet.stats();
    assert_eq!(stats.ac_cycles_total, 1);
    assert_eq!(stats.per_host["host-001"].ac_cycles, 1);
    assert_eq!(stats.per_host["host-001"].system_resets, 0);
    assert_eq!(stats.per_host["host-002"].ac_cycles, 0);
    assert_eq!(stats.resets_manager, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn ac_cycle_image_waits_for_an_ac_cycle() {
    // apply_time Immediate: the image's own requirement wins.
    let fleet = start_fleet(vec![cpld_host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let image = firmware_image_with_activation("^CPLD", "2.0", Activation::AcCycle, 100);
    let task = flash(&c, image).await;
    assert_eq!(task["TaskState"], "Completed", "{task}");
    assert!(message_ids(&task).contains(&"Update.1.0.AwaitToActivate".to_string()));
    assert_eq!(c.version_of(CPLD).await, "1.0");
    assert_eq!(fleet.staged_versions("host-001"), vec![(CPLD.to_string(), "2.0".to_string())]);

    system_restart(&c).await;
    assert_eq!(c.version_of(CPLD).await, "1.0", "a system reset is not an AC cycle");
    manager_reset(&c).await;
    assert_eq!(c.version_of(CPLD).await, "1.0", "nor is a BMC reset");

    ac_cycle(&c).await;
    assert_eq!(c.version_of(CPLD).await, "2.0");
    assert!(fleet.staged_versions("host-001").is_empty());
    let stats = fleet.stats();
    assert_eq!(stats.per_host["host-001"].installs[CPLD], 1);
    assert_eq!(stats.per_host["host-001"].installs.len(), 1);
    fleet.shutdown().await;
}

#[tokio::test]
async fn manager_reset_image_waits_for_a_bmc_reset() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let image = firmware_image_with_activation("iDRAC", "7.50", Activation::ManagerReset, 10);
    assert_eq!(flash(&c, image).await["TaskState"], "Completed");
    system_restart(&c).await;
    ac_cycle(&c).await;
    assert_eq!(c.version_of(BMC_MEMBER).await, "7.00.00.00");
    manager_reset(&c).await;
    assert_eq!(c.version_of(BMC_MEMBER).await, "7.50");
    assert_eq!(c.resource("/redfish/v1/Managers/BMC").await["FirmwareVersion"], "7.50");
    fleet.shutdown().await;
}

#[tokio::test]
async fn image_activation_overrides_the_apply_time() {
    let mut on_reset = host("host-001");
    on_reset.apply_time = ApplyTime::OnReset;
    let fleet = start_fleet(vec![on_reset, host("host-002")]).await;

    // OnReset host, `immediate` image: running at task completion.
    let c1 = Client::new(&fleet.host("host-001").unwrap());
    let image = firmware_image_with_activation("BIOS", "2.9", Activation::Immediate, 10);
    let task = flash(&c1, image.clone()).await;
    assert!(message_ids(&task).contains(&"Update.1.0.UpdateSuccessful".to_string()));
    assert_eq!(c1.version_of(BIOS_MEMBER).await, "2.9");
    // ... even when the request asks for OnReset.
    let r = c1
        .push_multipart(
            firmware_image_with_activation("iDRAC", "7.9", Activation::Immediate, 10),
            json!({"@Redfish.OperationApplyTime": "OnReset"}),
        )
        .await;
    c1.wait_task(&r).await;
    assert_eq!(c1.version_of(BMC_MEMBER).await, "7.9");

    // Immediate host, `reset` image: staged until the host powers on again; a plain image is
    // still immediate there.
    let c2 = Client::new(&fleet.host("host-002").unwrap());
    let image = firmware_image_with_activation("BIOS", "3.0", Activation::Reset, 10);
    assert_eq!(flash(&c2, image).await["TaskState"], "Completed");
    assert_eq!(c2.version_of(BIOS_MEMBER).await, "2.1.0");
    assert_eq!(flash(&c2, firmware_image("iDRAC", "7.8", 10)).await["TaskState"], "Completed");
    assert_eq!(c2.version_of(BMC_MEMBER).await, "7.8");
    ac_cycle(&c2).await;
    assert_eq!(c2.version_of(BIOS_MEMBER).await, "3.0", "an AC cycle is also a reset");
    fleet.shutdown().await;
}

#[tokio::test]
async fn installs_count_every_flash_including_reflashes() {
    let mut h = cpld_host("host-001");
    h.apply_time = ApplyTime::OnReset;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    for _ in 0..2 {
        let task = flash(&c, firmware_image("BIOS", "2.2.0", 10)).await;
        assert_eq!(task["TaskState"], "Completed");
    }
    // One image matching two members counts one install on each.
    flash(&c, firmware_image("BIOS|CPLD", "9", 10)).await;
    // Failed tasks install nothing.
    let r = c.push_multipart(b"junk".to_vec(), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Exception");

    let installs = fleet.stats().per_host["host-001"].installs.clone();
    assert_eq!(installs.get(BIOS_MEMBER), Some(&3));
    assert_eq!(installs.get(CPLD), Some(&1));
    assert_eq!(installs.get(BMC_MEMBER), None);
    assert_eq!(fleet.stats().per_host["host-001"].uploads, 4);
    fleet.shutdown().await;
}
