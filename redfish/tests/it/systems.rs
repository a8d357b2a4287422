//! Which ComputerSystem is which when a BMC lists several: identity (vendor, model, serial) from
//! the System with Manufacturer and Model, the reset / power-state / boot-override target from
//! the System with `#ComputerSystem.Reset`. Shapes from the captured GB200 and DGX trees (read
//! from `../shared` at test time, skipped when absent) and a scripted GB200 shape that always
//! runs. Scripted mock only; no sleeps.

use crate::common;

use common::captured::{self, Tree};
use common::mock::{empty, json, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, RedfishClient, RedfishError};
use serde_json::json as j;

const SYSTEM_RESTART: &[&str] = &["ForceRestart", "GracefulRestart", "PowerCycle"];

fn client_for(mock: &MockBmc) -> RedfishClient {
    common::mock_client(mock, options(AuthMode::Basic))
}

fn posted(mock: &MockBmc, path: &str) -> Vec<String> {
    mock.log()
        .into_iter()
        .filter(|l| l.method == "POST" && l.path == path)
        .map(|l| String::from_utf8_lossy(&l.body).to_string())
        .collect()
}

/// The captured tree's root, Systems (every member, and `extra`), UpdateService and inventory.
fn serve_tree(tree: &Tree, mock: &MockBmc, extra: &[&str]) {
    tree.serve(mock, &["/redfish/v1", "/redfish/v1/UpdateService"]);
    tree.serve(mock, extra);
    tree.serve_collection(mock, "/redfish/v1/Systems");
    tree.serve_collection(mock, "/redfish/v1/UpdateService/FirmwareInventory");
}

#[tokio::test]
async fn captured_gb200_identity_from_the_baseboard_reset_on_system_0() {
    let Some(tree) = captured::tree("nvidia_gb200") else {
        return;
    };
    let mock = MockBmc::start().await;
    serve_tree(&tree, &mock, &["/redfish/v1/Systems/System_0/ResetActionInfo"]);
    let reset = "/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset";
    mock.on("POST", reset, vec![empty(204, &[])]);
    mock.on("PATCH", "/redfish/v1/Systems/System_0", vec![empty(204, &[])]);
    let client = client_for(&mock);

    let report = client.explore().await.expect("explore");
    assert_eq!(report.vendor, "NVIDIA");
    assert_eq!(report.model, "GB200 NVL");
    assert_eq!(report.serial.as_deref(), Some("1643024000315"));
    assert_eq!(report.power_state.as_deref(), Some("On"));
    assert_eq!(report.members.len(), 30);

    let done = client.reset_system(SYSTEM_RESTART).await.expect("reset");
    assert_eq!(done.reset_type, "ForceRestart");
    assert_eq!(posted(&mock, reset), vec![r#"{"ResetType":"ForceRestart"}"#]);

    client.set_boot_override("Pxe", "Once").await.expect("boot override on System_0");
    assert_eq!(mock.hits("PATCH", "/redfish/v1/Systems/System_0"), 1);
    assert_eq!(mock.hits("PATCH", "/redfish/v1/Systems/HGX_Baseboard_0"), 0);
}

#[tokio::test]
async fn captured_dgx_identity_and_reset_on_the_dgx_system() {
    let Some(tree) = captured::tree("nvidia_viking") else {
        return;
    };
    let mock = MockBmc::start().await;
    serve_tree(&tree, &mock, &["/redfish/v1/Systems/DGX/ResetActionInfo"]);
    let reset = "/redfish/v1/Systems/DGX/Actions/ComputerSystem.Reset";
    mock.on("POST", reset, vec![empty(204, &[])]);
    let client = client_for(&mock);
    let report = client.explore().await.expect("explore");
    assert_eq!((report.vendor.as_str(), report.model.as_str()), ("NVIDIA", "DGXH100"));
    client.reset_system(SYSTEM_RESTART).await.expect("reset");
    assert_eq!(posted(&mock, reset), vec![r#"{"ResetType":"ForceRestart"}"#]);
}

/// A GB200-shaped Systems collection, scripted (runs without `../shared`).
fn scripted_gb200(mock: &MockBmc, system_0_has_reset: bool) {
    mock.on(
        "GET",
        "/redfish/v1/",
        vec![json(
            200,
            j!({"Systems": {"@odata.id": "/redfish/v1/Systems"},
                "UpdateService": {"@odata.id": "/redfish/v1/UpdateService"}}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/Systems",
        vec![json(
            200,
            j!({"Members": [{"@odata.id": "/redfish/v1/Systems/System_0"},
                            {"@odata.id": "/redfish/v1/Systems/HGX_Baseboard_0"}]}),
        )],
    );
    let mut system_0 = j!({"@odata.id": "/redfish/v1/Systems/System_0", "Id": "System_0",
        "PowerState": "Off"});
    if system_0_has_reset {
        system_0["Actions"] = j!({"#ComputerSystem.Reset": {
            "target": "/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset"}});
    }
    mock.on("GET", "/redfish/v1/Systems/System_0", vec![json(200, system_0)]);
    mock.on(
        "GET",
        "/redfish/v1/Systems/HGX_Baseboard_0",
        vec![json(
            200,
            j!({"@odata.id": "/redfish/v1/Systems/HGX_Baseboard_0", "Id": "HGX_Baseboard_0",
                "Manufacturer": "NVIDIA", "Model": "GB200 NVL", "SerialNumber": "1643024000315",
                "PowerState": "On"}),
        )],
    );
    mock.on(
        "GET",
        "/redfish/v1/UpdateService",
        vec![json(200, j!({"FirmwareInventory": {"@odata.id": "/redfish/v1/UpdateService/FirmwareInventory"}}))],
    );
    mock.on("GET", "/redfish/v1/UpdateService/FirmwareInventory", vec![json(200, j!({"Members": []}))]);
}

#[tokio::test]
async fn scripted_gb200_identity_and_reset_target_differ() {
    let mock = MockBmc::start().await;
    scripted_gb200(&mock, true);
    let reset = "/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset";
    mock.on("POST", reset, vec![empty(204, &[])]);
    let client = client_for(&mock);
    let report = client.explore().await.expect("explore");
    assert_eq!((report.vendor.as_str(), report.model.as_str()), ("NVIDIA", "GB200 NVL"));
    assert_eq!(report.serial.as_deref(), Some("1643024000315"));
    // The power state is the host's (System_0), not the baseboard's.
    assert_eq!(report.power_state.as_deref(), Some("Off"));
    assert_eq!(client.power_state().await.unwrap().as_deref(), Some("Off"));
    client.reset_system(&["On"]).await.expect("reset");
    assert_eq!(posted(&mock, reset), vec![r#"{"ResetType":"On"}"#]);
}

#[tokio::test]
async fn several_systems_without_reset_is_a_clear_error() {
    let mock = MockBmc::start().await;
    scripted_gb200(&mock, false);
    let client = client_for(&mock);
    // Identity does not need a reset target.
    let report = client.explore().await.expect("explore");
    assert_eq!(report.model, "GB200 NVL");
    let e = client.reset_system(&["ForceRestart"]).await.unwrap_err();
    assert!(matches!(e, RedfishError::Unsupported { .. }), "{e:?}");
    assert!(!e.is_transient());
    let text = e.to_string();
    for part in
        ["#ComputerSystem.Reset", "/redfish/v1/Systems/System_0", "/redfish/v1/Systems/HGX_Baseboard_0", &mock.address]
    {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    assert!(client.power_state().await.is_err());
    assert!(mock.log().iter().all(|l| l.method != "POST"), "nothing was reset");
}
