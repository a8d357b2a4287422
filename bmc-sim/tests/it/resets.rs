//! ComputerSystem.Reset power transitions (and staged firmware activation), and Manager.Reset
//! taking the BMC off the network, killing sessions, and coming back.

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, ApplyTime};
use reqwest::StatusCode;
use serde_json::json;

const SYSTEM_RESET: &str = "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset";
const MANAGER_RESET: &str = "/redfish/v1/Managers/BMC/Actions/Manager.Reset";

async fn wait_power(c: &Client, want: &str) {
    eventually(&format!("PowerState {want}"), || async { (c.power_state().await == want).then_some(()) }).await;
}

#[tokio::test]
async fn force_restart_goes_off_then_on() {
    let mut h = host("host-001");
    h.reset_seconds = 1.0;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.post(SYSTEM_RESET, json!({"ResetType": "ForceRestart"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    assert_eq!(c.power_state().await, "Off");
    wait_power(&c, "On").await;
    let r = c.post(SYSTEM_RESET, json!({"ResetType": "On"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(c.power_state().await, "On", "On while on is a no-op");
    let stats = fleet.stats();
    assert_eq!(stats.resets_system, 2);
    assert_eq!(stats.per_host["host-001"].system_resets, 2);
    fleet.shutdown().await;
}

#[tokio::test]
async fn force_off_then_on_activates_staged_firmware() {
    let mut h = host("host-001");
    h.apply_time = ApplyTime::OnReset;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.push_multipart(firmware_image("BIOS", "2.5.0", 10), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(fleet.staged_versions("host-001").len(), 1);

    assert_eq!(c.post(SYSTEM_RESET, json!({"ResetType": "ForceOff"})).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "Off").await;
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.1.0", "powering off does not activate");
    let state = Client::anonymous(&fleet.hosts()[0]).resource("/sim/state").await;
    assert_eq!(state["staged"][BIOS_MEMBER], "2.5.0");

    assert_eq!(c.post(SYSTEM_RESET, json!({"ResetType": "On"})).await.status, StatusCode::NO_CONTENT);
    wait_power(&c, "On").await;
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.5.0");
    fleet.shutdown().await;
}

#[tokio::test]
async fn reset_type_is_validated() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    for body in [json!({"ResetType": "Nmi"}), json!({"ResetType": 3}), json!({})] {
        let r = c.post(SYSTEM_RESET, body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.raw);
        assert!(r.body["error"]["@Message.ExtendedInfo"].is_array());
    }
    let r = c.post(MANAGER_RESET, json!({"ResetType": "ForceOff"})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(fleet.stats().resets_system + fleet.stats().resets_manager, 0);
    assert_eq!(c.power_state().await, "On");
    fleet.shutdown().await;
}

#[tokio::test]
async fn manager_reset_takes_the_bmc_away_and_back() {
    let mut h = host("host-001");
    h.apply_time = ApplyTime::OnReset;
    h.manager_reset_seconds = 1.5;
    let fleet = start_fleet(vec![h, host("host-002")]).await;
    let sim = fleet.host("host-001").unwrap();
    let mut c = Client::new(&sim);
    let r = c.push_multipart(firmware_image("iDRAC", "7.20.00.00", 10), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(c.login().await.status, StatusCode::CREATED);
    let old_token = c.token.clone().unwrap();

    let r = c.post(MANAGER_RESET, json!({"ResetType": "GracefulRestart"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.raw);
    let root = format!("{}/redfish/v1", sim.base_url);
    eventually("BMC unreachable", || async { c.http.get(&root).send().await.is_err().then_some(()) }).await;
    // The other BMC of the fleet is not affected.
    let other = Client::new(&fleet.host("host-002").unwrap());
    assert_eq!(other.get("/redfish/v1/Systems").await.status, StatusCode::OK);

    eventually("BMC back", || async { c.http.get(&root).send().await.ok().filter(|r| r.status().is_success()) }).await;
    let r = c.get("/redfish/v1/Systems").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "session {old_token} must not survive a BMC reset");
    c.token = None;
    assert_eq!(c.login().await.status, StatusCode::CREATED);
    assert_eq!(c.resource("/redfish/v1/Managers/BMC").await["FirmwareVersion"], "7.20.00.00");
    let stats = fleet.stats();
    assert_eq!(stats.resets_manager, 1);
    assert_eq!(stats.per_host["host-001"].manager_resets, 1);
    assert_eq!(stats.per_host["host-002"].manager_resets, 0);
    fleet.shutdown().await;
}
