//! Inventory crawl and authentication against bmc-sim: explore in Basic and session mode, clear
//! non-transient errors for a wrong password, transient errors for an unreachable BMC.
//! Must not test uploads or resets (their own files) nor synchronise with fixed sleeps.

use crate::common;

use common::*;
use hostfw_redfish::{AuthMode, BmcEndpoint, RedfishClient, RedfishError};

#[tokio::test]
async fn explore_reports_system_and_every_firmware_member() {
    let (fleet, host) = one_host("").await;
    let client = client(&host, AuthMode::Basic);
    assert_eq!(client.address().to_string(), host.base_url);
    let report = client.explore().await.expect("explore");
    assert_eq!(report.vendor, "Nvidia");
    assert_eq!(report.model, "DGX H100");
    assert_eq!(report.serial.as_deref(), Some("SN-h1"));
    assert_eq!(report.power_state.as_deref(), Some("On"));
    let members: Vec<_> =
        report.members.iter().map(|m| (m.id.as_str(), m.version.as_str(), m.odata_id.as_str())).collect();
    assert_eq!(
        members,
        vec![
            ("BMC_0", "1.0", "/redfish/v1/UpdateService/FirmwareInventory/BMC_0"),
            ("BIOS_0", "1.0", "/redfish/v1/UpdateService/FirmwareInventory/BIOS_0"),
        ]
    );
    assert_eq!(report.members[1].name.as_deref(), Some("System BIOS"));
    assert_eq!(client.power_state().await.unwrap().as_deref(), Some("On"));
    fleet.shutdown().await;
}

#[tokio::test]
async fn any_spelling_of_the_base_url_works() {
    let (fleet, host) = one_host("").await;
    let client = RedfishClient::new(
        BmcEndpoint {
            address: format!("HTTP://{}/", host.addr).parse().unwrap(),
            username: host.username.clone(),
            password: host.password.clone(),
        },
        options(AuthMode::Basic),
    )
    .unwrap();
    assert_eq!(client.explore().await.unwrap().members.len(), 2);
    fleet.shutdown().await;
}

#[tokio::test]
async fn session_auth_explores_and_uploads() {
    let (fleet, host) = one_host("upload_style = \"multipart\"\ntask_style = \"bmcweb\"").await;
    let client = client(&host, AuthMode::Session);
    let report = client.explore().await.expect("explore with a session");
    assert_eq!(report.members.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let path = write_image(&dir, "bios.bin", &image_bytes("BIOS_0", "7.7", 100));
    let accepted = client
        .upload(&hostfw_redfish::UploadRequest { file: path, ..Default::default() })
        .await
        .expect("upload with a session");
    let outcome = client.wait_task(&accepted.task.unwrap(), wait_opts(), |_| {}).await.expect("wait with a session");
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(sim_version(&fleet, "h1", "BIOS_0").as_deref(), Some("7.7"));
    client.logout().await.expect("logout");
    // A later call logs in again by itself.
    assert_eq!(client.explore().await.unwrap().members.len(), 2);
    fleet.shutdown().await;
}

fn assert_clear_auth_error(e: &RedfishError, host: &hostfw_bmc_sim::SimHost) {
    let text = e.to_string();
    assert!(matches!(e, RedfishError::Unauthorized { status: 401, .. }), "{e:?}");
    assert!(text.contains(&host.addr.to_string()), "names the BMC: {text}");
    assert!(text.contains("http://"), "names the URL: {text}");
    assert!(text.contains("401"), "names the status: {text}");
    assert!(!text.contains("wrong-password"), "never shows the password: {text}");
    assert!(!e.is_transient(), "a wrong password is not transient");
    assert_eq!(e.http_status(), Some(401));
}

#[tokio::test]
async fn wrong_password_is_clear_and_not_transient() {
    let (fleet, host) = one_host("").await;
    for mode in [AuthMode::Basic, AuthMode::Session] {
        let client = RedfishClient::new(
            BmcEndpoint {
                address: host.base_url.parse().unwrap(),
                username: host.username.clone(),
                password: "wrong-password".into(),
            },
            options(mode),
        )
        .unwrap();
        let e = client.explore().await.expect_err("wrong password must fail");
        assert_clear_auth_error(&e, &host);
        if mode == AuthMode::Session {
            assert!(e.to_string().contains("/SessionService/Sessions"), "{e}");
        }
    }
    fleet.shutdown().await;
}

#[tokio::test]
async fn unreachable_bmc_is_transient_and_named() {
    // Bind then drop a listener: the port is (almost certainly) closed afterwards.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let client = RedfishClient::new(
        BmcEndpoint {
            address: format!("http://{addr}").parse().unwrap(),
            username: "admin".into(),
            password: "password".into(),
        },
        options(AuthMode::Basic),
    )
    .unwrap();
    let e = client.explore().await.expect_err("nothing listens there");
    assert!(matches!(e, RedfishError::Connect { .. }), "{e:?}");
    assert!(e.is_transient());
    assert!(e.to_string().contains(&addr.to_string()), "{e}");
    assert!(e.to_string().contains("/redfish/v1"), "{e}");
}

/// An image the BMC holds staged until a reset is a SoftwareInventory entry of its own
/// (`Staged: true`, `Links.StagedTargets`): the crawl attaches its version to the running member
/// instead of reporting it as one more running member, and forgets it once it is activated.
#[tokio::test]
async fn a_staged_image_is_reported_on_its_member_not_as_a_running_version() {
    let (fleet, host) = one_host("apply_time = \"OnReset\"").await;
    let client = client(&host, AuthMode::Basic);
    let flashed = reqwest::Client::new()
        .post(format!("{}/sim/host-flash", host.base_url))
        .body(image_bytes("^BIOS_0$", "2.0", 8))
        .send()
        .await
        .expect("host flash");
    assert!(flashed.status().is_success(), "{flashed:?}");

    let report = client.explore().await.expect("explore");
    let bios = report.members.iter().find(|m| m.id == "BIOS_0").expect("BIOS_0");
    assert_eq!(bios.version, "1.0", "still running the old version");
    assert_eq!(bios.staged_version.as_deref(), Some("2.0"));
    assert_eq!(report.members.len(), 2, "the staged entry is not a running member: {:?}", report.members);
    let bmc = report.members.iter().find(|m| m.id == "BMC_0").expect("BMC_0");
    assert_eq!(bmc.staged_version, None);

    client.reset_system(&["ForceRestart"]).await.expect("reset");
    let activated = async {
        loop {
            if let Ok(r) = client.explore().await {
                if r.members.iter().any(|m| m.id == "BIOS_0" && m.version == "2.0") {
                    return r;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    let after = tokio::time::timeout(std::time::Duration::from_secs(30), activated)
        .await
        .expect("the staged image runs after the reset");
    let bios = after.members.iter().find(|m| m.id == "BIOS_0").unwrap();
    assert_eq!(bios.staged_version, None, "activated: nothing staged any more");
    fleet.shutdown().await;
}
