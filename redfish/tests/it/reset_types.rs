//! The ResetType is chosen from what the BMC advertises: the caller gives an ordered preference,
//! the client sends the first one allowed (inline `ResetType@Redfish.AllowableValues` or the
//! action's `@Redfish.ActionInfo`, fetched), the first preference when nothing is advertised,
//! and a clear error naming the allowed values when none is allowed. The captured Dell,
//! Supermicro, DGX and GB200 managers are served from `../shared` when present; scripted
//! managers always run. Scripted mock only; no sleeps.

use crate::common;

use common::captured;
use common::mock::{empty, json, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, RedfishClient, RedfishError};
use serde_json::json as j;

/// What the activation of a BMC image asks for (see `hostfw_activities::reset_types`).
const BMC_RESTART: &[&str] = &["ForceRestart", "GracefulRestart"];

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

/// Serves a captured vendor's root, Managers (every member) and `extra`; the Manager.Reset
/// target answers 204. `None` when `../shared` is absent.
fn captured_manager(vendor: &str, mock: &MockBmc, target: &str, extra: &[&str]) -> Option<()> {
    let tree = captured::tree(vendor)?;
    tree.serve(mock, &["/redfish/v1"]);
    tree.serve(mock, extra);
    tree.serve_collection(mock, "/redfish/v1/Managers");
    mock.on("POST", target, vec![empty(204, &[])]);
    Some(())
}

async fn captured_case(vendor: &str, manager: &str, extra: &[&str], want: &str) {
    let mock = MockBmc::start().await;
    let target = format!("{manager}/Actions/Manager.Reset");
    if captured_manager(vendor, &mock, &target, extra).is_none() {
        return;
    }
    let done = client_for(&mock).reset_manager(BMC_RESTART).await.unwrap_or_else(|e| panic!("{vendor}: {e}"));
    assert_eq!(done.reset_type, want, "{vendor}");
    assert_eq!(posted(&mock, &target), vec![format!(r#"{{"ResetType":"{want}"}}"#)], "{vendor}");
}

#[tokio::test]
async fn captured_dell_manager_gets_graceful_restart() {
    // Inline ResetType@Redfish.AllowableValues: ["GracefulRestart"].
    captured_case("dell", "/redfish/v1/Managers/iDRAC.Embedded.1", &[], "GracefulRestart").await;
}

#[tokio::test]
async fn captured_supermicro_manager_gets_graceful_restart() {
    captured_case("supermicro", "/redfish/v1/Managers/1", &[], "GracefulRestart").await;
}

#[tokio::test]
async fn captured_dgx_manager_gets_force_restart_from_its_action_info() {
    captured_case(
        "nvidia_viking",
        "/redfish/v1/Managers/BMC",
        &["/redfish/v1/Managers/BMC/ResetActionInfo"],
        "ForceRestart",
    )
    .await;
}

#[tokio::test]
async fn captured_gb200_manager_gets_the_callers_first_choice() {
    // ActionInfo lists GracefulRestart first; the caller's order decides.
    captured_case(
        "nvidia_gb200",
        "/redfish/v1/Managers/BMC_0",
        &["/redfish/v1/Managers/BMC_0/ResetActionInfo"],
        "ForceRestart",
    )
    .await;
}

const TARGET: &str = "/redfish/v1/Managers/BMC/Actions/Manager.Reset";

/// A scripted BMC whose one Manager has `reset` as its `#Manager.Reset` action, and an
/// ActionInfo allowing `info_allows`.
fn scripted_manager(mock: &MockBmc, reset: serde_json::Value, info_allows: &[&str]) {
    mock.on("GET", "/redfish/v1/", vec![json(200, j!({"Managers": {"@odata.id": "/redfish/v1/Managers"}}))]);
    mock.on(
        "GET",
        "/redfish/v1/Managers",
        vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Managers/BMC"}]}))],
    );
    mock.on(
        "GET",
        "/redfish/v1/Managers/BMC",
        vec![json(200, j!({"Id": "BMC", "ManagerType": "BMC", "Actions": {"#Manager.Reset": reset}}))],
    );
    mock.on(
        "GET",
        "/redfish/v1/Managers/BMC/ResetActionInfo",
        vec![json(200, j!({"Parameters": [{"Name": "ResetType", "Required": true, "AllowableValues": info_allows}]}))],
    );
    mock.on("POST", TARGET, vec![empty(204, &[])]);
}

#[tokio::test]
async fn action_info_allowing_only_graceful_restart_gets_graceful_restart() {
    let mock = MockBmc::start().await;
    scripted_manager(
        &mock,
        j!({"target": TARGET, "@Redfish.ActionInfo": "/redfish/v1/Managers/BMC/ResetActionInfo"}),
        &["GracefulRestart"],
    );
    let done = client_for(&mock).reset_manager(BMC_RESTART).await.unwrap();
    assert_eq!(done.reset_type, "GracefulRestart");
    assert_eq!(posted(&mock, TARGET), vec![r#"{"ResetType":"GracefulRestart"}"#]);
    assert_eq!(mock.hits("GET", "/redfish/v1/Managers/BMC/ResetActionInfo"), 1);
}

#[tokio::test]
async fn no_advertised_list_sends_the_first_preference() {
    let mock = MockBmc::start().await;
    scripted_manager(&mock, j!({"target": TARGET}), &[]);
    let done = client_for(&mock).reset_manager(BMC_RESTART).await.unwrap();
    assert_eq!(done.reset_type, "ForceRestart");
    assert_eq!(posted(&mock, TARGET), vec![r#"{"ResetType":"ForceRestart"}"#]);
}

#[tokio::test]
async fn none_allowed_is_a_clear_error_and_nothing_is_sent() {
    let mock = MockBmc::start().await;
    scripted_manager(&mock, j!({"target": TARGET, "ResetType@Redfish.AllowableValues": ["GracefulShutdown"]}), &[]);
    let e = client_for(&mock).reset_manager(BMC_RESTART).await.unwrap_err();
    match &e {
        RedfishError::ResetTypeNotAllowed { wanted, allowed, .. } => {
            assert_eq!(wanted, &["ForceRestart".to_string(), "GracefulRestart".to_string()]);
            assert_eq!(allowed, &["GracefulShutdown".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    assert!(!e.is_transient());
    let text = e.to_string();
    for part in ["ForceRestart", "GracefulRestart", "allowed values: GracefulShutdown", TARGET] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    assert!(posted(&mock, TARGET).is_empty());
}
