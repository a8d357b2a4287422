//! Resets against bmc-sim: ComputerSystem.Reset with the allowable-values check, Manager.Reset
//! followed by the BMC going away and coming back (`wait_unreachable` then `wait_reachable`),
//! in Basic and session mode (sessions die with the BMC and the client logs in again).
//! Must not synchronise with fixed sleeps: state changes are awaited by polling with a bound.

use crate::common;

use std::time::Duration;

use common::*;
use hostfw_redfish::{AuthMode, RedfishError};

#[tokio::test]
async fn system_reset_cycles_power_and_checks_reset_type() {
    let (fleet, host) = one_host("reset_seconds = 0.3").await;
    let client = client(&host, AuthMode::Basic);

    let e = client.reset_system(&["Bogus"]).await.expect_err("not allowed");
    match &e {
        RedfishError::ResetTypeNotAllowed { wanted, allowed, .. } => {
            assert_eq!(wanted, &["Bogus".to_string()]);
            assert!(allowed.contains(&"ForceRestart".to_string()), "{allowed:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("ForceRestart"), "names the allowed values: {e}");
    assert_eq!(fleet.stats().per_host["h1"].system_resets, 0, "nothing was sent");

    client.reset_system(&["ForceOff"]).await.expect("ForceOff");
    eventually("power off", Duration::from_secs(10), || async {
        client.power_state().await.ok().flatten().as_deref() == Some("Off")
    })
    .await;
    client.reset_system(&["On"]).await.expect("On");
    eventually("power on", Duration::from_secs(10), || async {
        client.power_state().await.ok().flatten().as_deref() == Some("On")
    })
    .await;
    assert_eq!(fleet.stats().per_host["h1"].system_resets, 2);
    fleet.shutdown().await;
}

async fn manager_reset_round_trip(auth: AuthMode) {
    let (fleet, host) = one_host("manager_reset_seconds = 0.5").await;
    let client = client(&host, auth);
    client.explore().await.expect("explore before");

    let e = client.reset_manager(&["PowerCycle"]).await.expect_err("not allowed for the Manager");
    assert!(matches!(e, RedfishError::ResetTypeNotAllowed { .. }), "{e:?}");

    client.reset_manager(&["GracefulRestart"]).await.expect("manager reset accepted");
    assert!(client.wait_unreachable(Duration::from_secs(10)).await.unwrap(), "the BMC went down after the reset");
    // While it is down, requests fail transiently.
    if let Err(e) = client.explore().await {
        assert!(e.is_transient(), "{e:?}");
    }
    client.wait_reachable(Duration::from_secs(20)).await.expect("BMC back");
    let report = client.explore().await.expect("explore after the BMC reset");
    assert_eq!(report.members.len(), 2);
    assert_eq!(fleet.stats().per_host["h1"].manager_resets, 1);
    fleet.shutdown().await;
}

#[tokio::test]
async fn manager_reset_then_reachable_basic() {
    manager_reset_round_trip(AuthMode::Basic).await;
}

#[tokio::test]
async fn manager_reset_then_reachable_session() {
    manager_reset_round_trip(AuthMode::Session).await;
}

#[tokio::test]
async fn wait_reachable_times_out_with_the_last_error() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let client = hostfw_redfish::RedfishClient::new(
        hostfw_redfish::BmcEndpoint {
            address: format!("http://{addr}").parse().unwrap(),
            username: "admin".into(),
            password: "password".into(),
        },
        options(AuthMode::Basic),
    )
    .unwrap();
    let e = client.wait_reachable(Duration::from_millis(300)).await.expect_err("nothing listens");
    assert!(matches!(e, RedfishError::NotReachable { .. }), "{e:?}");
    assert!(e.to_string().contains("cannot connect"), "{e}");
    assert!(e.to_string().contains(&addr.to_string()), "{e}");
}

#[tokio::test]
async fn task_survives_a_bmc_reset_mid_task() {
    // The task keeps running on the sim while the BMC is down for a moment; the waiter
    // tolerates the connection errors and still gets the final state.
    let (fleet, host) = one_host(
        "upload_style = \"multipart\"\ntask_style = \"dell\"\ntask_seconds = 1.5\nmanager_reset_seconds = 0.3",
    )
    .await;
    let client = client(&host, AuthMode::Session);
    let dir = tempfile::tempdir().unwrap();
    let path = write_image(&dir, "bios.bin", &image_bytes("BIOS_0", "4.0", 10));
    let accepted = client.upload(&hostfw_redfish::UploadRequest { file: path, ..Default::default() }).await.unwrap();
    client.reset_manager(&["ForceRestart"]).await.unwrap();
    let mut saw_running = 0;
    let outcome = client
        .wait_task(&accepted.task.unwrap(), wait_opts(), |p| {
            if matches!(p, hostfw_redfish::TaskPoll::Running { .. }) {
                saw_running += 1;
            }
        })
        .await
        .expect("wait tolerates the reset");
    assert!(outcome.succeeded(), "{outcome:?}");
    assert!(saw_running > 0);
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("4.0"));
    fleet.shutdown().await;
}

/// Issue 26 item 12: a transport error names its cause once: the URL is in the error's own text
/// and not repeated by the HTTP library's "error sending request for url (...)", and no cause of
/// the chain repeats another.
#[tokio::test]
async fn a_connection_error_says_each_thing_once() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let client = hostfw_redfish::RedfishClient::new(
        hostfw_redfish::BmcEndpoint {
            address: format!("http://{addr}").parse().unwrap(),
            username: "admin".into(),
            password: "password".into(),
        },
        options(AuthMode::Basic),
    )
    .unwrap();
    let e = client.power_state().await.expect_err("nothing listens");
    let text = hostfw_model::error_chain(&e);
    eprintln!("{text}");
    assert!(text.contains("cannot connect"), "{text}");
    assert_eq!(text.matches("/redfish/v1").count(), 1, "the URL once: {text}");
    let parts: Vec<&str> = text.split(": ").collect();
    for (i, part) in parts.iter().enumerate() {
        assert!(!parts[i + 1..].contains(part), "{part:?} repeats in: {text}");
    }
}
