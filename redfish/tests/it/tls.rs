//! Redfish over TLS against a `tls = true` bmc-sim fleet: certificates are verified by default,
//! the fleet CA as `ca_bundle` makes them verify, `accept_invalid_certs` skips verification, and
//! a failed verification is a non-transient `Certificate` error naming the BMC and the fix.
//! A bare `ip:port` is https (and never sends the password in clear). Plain http, written, is unchanged. Must not test uploads or resets (their own files).

use crate::common;

use common::*;
use hostfw_bmc_sim::RunningFleet;
use hostfw_redfish::{AuthMode, BmcEndpoint, ClientOptions, RedfishClient, RedfishError};

/// A TLS fleet of one host ("h1"); its base URL is `https://127.0.0.1:port`.
async fn tls_fleet() -> RunningFleet {
    start_fleet(&format!("tls = true\n{}", fleet_toml(&[host_toml("h1", "")]))).await
}

/// A client for the fleet's first host at its `https://` base URL with the given trust options.
fn tls_client(fleet: &RunningFleet, auth: AuthMode, tune: impl FnOnce(&mut ClientOptions)) -> RedfishClient {
    let host = fleet.hosts().into_iter().next().expect("one host");
    assert!(host.base_url.starts_with("https://"), "{}", host.base_url);
    let mut opts = options(auth);
    tune(&mut opts);
    RedfishClient::new(
        BmcEndpoint {
            address: host.base_url.parse().expect("sim base URL"),
            username: host.username.clone(),
            password: host.password.clone(),
        },
        opts,
    )
    .expect("client")
}

fn ca_bundle(fleet: &RunningFleet) -> Vec<u8> {
    fleet.ca_pem().expect("TLS fleet CA").as_bytes().to_vec()
}

#[tokio::test]
async fn fleet_ca_as_ca_bundle_explores_over_https() {
    let fleet = tls_fleet().await;
    let ca = ca_bundle(&fleet);
    for auth in [AuthMode::Basic, AuthMode::Session] {
        let client = tls_client(&fleet, auth, |o| o.ca_bundle = Some(ca.clone()));
        let report = client.explore().await.expect("explore over https");
        assert_eq!(report.vendor, "Nvidia");
        assert_eq!(report.members.len(), 2);
        client.logout().await.expect("logout");
    }
    // A bundle with another certificate in front of the right one still works.
    let other = tls_fleet().await;
    let mut two = ca_bundle(&other);
    two.extend_from_slice(&ca);
    let client = tls_client(&fleet, AuthMode::Basic, |o| o.ca_bundle = Some(two));
    client.explore().await.expect("explore with a two-certificate bundle");
    other.shutdown().await;
    fleet.shutdown().await;
}

#[tokio::test]
async fn unverified_certificate_is_a_permanent_error_naming_the_bmc() {
    let fleet = tls_fleet().await;
    let host = fleet.hosts()[0].clone();
    let other = tls_fleet().await;
    let foreign = ca_bundle(&other);
    // Neither the CA nor the opt-out; then the wrong CA.
    for bundle in [None, Some(foreign)] {
        let client = tls_client(&fleet, AuthMode::Basic, |o| o.ca_bundle = bundle);
        let e = client.explore().await.expect_err("must not verify");
        assert!(matches!(e, RedfishError::Certificate { .. }), "{e:?}");
        assert!(!e.is_transient(), "{e}");
        assert_eq!(e.bmc(), host.base_url);
        let s = e.to_string();
        for part in [
            host.base_url.as_str(),
            "certificate could not be verified",
            "UnknownIssuer",
            "[redfish] ca_bundle",
            "insecure_skip_verify",
        ] {
            assert!(s.contains(part), "{part:?} missing from: {s}");
        }
    }
    // Waiting for a BMC to come back does not hide the trust problem behind a timeout.
    let client = tls_client(&fleet, AuthMode::Basic, |_| {});
    let e = client.wait_reachable(std::time::Duration::from_secs(30)).await.expect_err("must not verify");
    assert!(matches!(e, RedfishError::Certificate { .. }), "{e:?}");
    other.shutdown().await;
    fleet.shutdown().await;
}

#[tokio::test]
async fn accept_invalid_certs_skips_verification() {
    let fleet = tls_fleet().await;
    let client = tls_client(&fleet, AuthMode::Basic, |o| o.accept_invalid_certs = true);
    let report = client.explore().await.expect("explore without verification");
    assert_eq!(report.members.len(), 2);
    fleet.shutdown().await;
}

#[tokio::test]
async fn unusable_ca_bundle_fails_at_client_build() {
    let fleet = tls_fleet().await;
    let host = fleet.hosts()[0].clone();
    for bad in [&b"no certificate here"[..], b""] {
        let mut opts = options(AuthMode::Basic);
        opts.ca_bundle = Some(bad.to_vec());
        let e = RedfishClient::new(
            BmcEndpoint {
                address: host.base_url.parse().unwrap(),
                username: host.username.clone(),
                password: host.password.clone(),
            },
            opts,
        )
        .expect_err("a bundle without certificates is refused");
        assert!(matches!(e, RedfishError::ClientBuild { .. }), "{e:?}");
        assert!(e.to_string().contains("CA bundle"), "{e}");
    }
    fleet.shutdown().await;
}

#[tokio::test]
async fn plain_http_still_works_with_verification_on() {
    let (fleet, host) = one_host("").await;
    assert!(fleet.ca_pem().is_none());
    assert!(host.base_url.starts_with("http://"), "{}", host.base_url);
    // Default options (verification on) and even a CA bundle change nothing for http.
    for bundle in [None, Some(ca_bundle(&tls_fleet().await))] {
        let mut opts = options(AuthMode::Basic);
        opts.ca_bundle = bundle;
        let client = RedfishClient::new(
            BmcEndpoint {
                address: host.base_url.parse().unwrap(),
                username: host.username.clone(),
                password: host.password.clone(),
            },
            opts,
        )
        .expect("client");
        client.explore().await.expect("explore over http");
    }
    fleet.shutdown().await;
}

/// Finding 12: a bare `ip:port` is https. Against a TLS BMC it just works, with no scheme written.
#[tokio::test]
async fn a_bare_address_is_https() {
    let fleet = tls_fleet().await;
    let host = fleet.hosts()[0].clone();
    let mut opts = options(AuthMode::Basic);
    opts.ca_bundle = Some(ca_bundle(&fleet));
    let client = RedfishClient::new(
        BmcEndpoint {
            address: host.addr.to_string().parse().unwrap(),
            username: host.username.clone(),
            password: host.password.clone(),
        },
        opts,
    )
    .expect("client");
    assert_eq!(client.address().to_string(), host.base_url);
    assert_eq!(client.explore().await.expect("explore over https").members.len(), 2);
    fleet.shutdown().await;
}

/// Finding 12: a bare address never sends the Basic-auth password in clear. A plain-TCP listener
/// records what the client sends first: a TLS ClientHello, not an HTTP request with credentials.
#[tokio::test]
async fn a_bare_address_never_sends_the_password_in_clear() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let first_bytes = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 512];
        let n = stream.read(&mut buf).await.unwrap();
        buf.truncate(n);
        buf
    });
    let client = RedfishClient::new(
        BmcEndpoint {
            address: addr.to_string().parse().unwrap(),
            username: "root".into(),
            password: "clear-text-secret".into(),
        },
        options(AuthMode::Basic),
    )
    .unwrap();
    client.explore().await.expect_err("the listener speaks no TLS");
    let bytes = first_bytes.await.unwrap();
    assert_eq!(bytes.first(), Some(&0x16), "a TLS handshake record, got {:?}", String::from_utf8_lossy(&bytes));
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("GET ") && !text.contains("Authorization"), "{text}");
}
