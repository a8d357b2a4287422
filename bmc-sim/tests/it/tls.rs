//! `tls = true` fleets: every BMC listener serves HTTPS with a certificate for its bind IP and
//! `localhost` that chains to the CA the fleet generated at start; plain fleets have no CA.

use crate::common;

use std::sync::Arc;

use common::*;
use hostfw_bmc_sim::{FleetSpec, RunningFleet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

async fn tls_fleet() -> RunningFleet {
    let mut spec = FleetSpec::new(vec![host("h1"), host("h2")]);
    spec.tls = true;
    hostfw_bmc_sim::start(spec).await.expect("TLS fleet starts")
}

/// A rustls connector trusting exactly the CA certificates in `pem` (no system roots).
fn connector(pem: &str) -> TlsConnector {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
        roots.add(cert.expect("PEM certificate")).expect("CA accepted");
    }
    assert!(!roots.is_empty(), "no certificate in {pem}");
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn tls_listener_presents_a_cert_chaining_to_the_ca() {
    let fleet = tls_fleet().await;
    let ca = fleet.ca_pem().expect("a TLS fleet has a CA").to_string();
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");
    let trusted = connector(&ca);
    for h in fleet.hosts() {
        assert_eq!(h.base_url, format!("https://{}", h.addr));
        // Verified by rustls against the fleet CA only, for the IP and for `localhost`.
        for name in [h.addr.ip().to_string(), "localhost".to_string()] {
            let tcp = TcpStream::connect(h.addr).await.unwrap();
            let server_name = ServerName::try_from(name.clone()).unwrap();
            let mut tls = trusted
                .connect(server_name, tcp)
                .await
                .unwrap_or_else(|e| panic!("{} as {name}: handshake failed: {e}", h.id));
            let chain = tls.get_ref().1.peer_certificates().expect("peer certs");
            assert_eq!(chain.len(), 2, "leaf + CA");
            // And it is a working Redfish service behind the handshake.
            tls.write_all(b"GET /redfish/v1/ HTTP/1.1\r\nHost: bmc\r\nConnection: close\r\n\r\n").await.unwrap();
            let mut answer = Vec::new();
            tls.read_to_end(&mut answer).await.unwrap();
            let answer = String::from_utf8_lossy(&answer);
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            assert!(answer.contains("ServiceRoot"), "{answer}");
        }
    }

    // Another fleet's CA does not verify this fleet's BMCs.
    let other = tls_fleet().await;
    let h = fleet.hosts()[0].clone();
    let tcp = TcpStream::connect(h.addr).await.unwrap();
    let name = ServerName::try_from(h.addr.ip().to_string()).unwrap();
    let e = connector(other.ca_pem().unwrap()).connect(name, tcp).await.expect_err("a foreign CA must not verify");
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    // Nor does a name the certificate was not made for.
    let tcp = TcpStream::connect(h.addr).await.unwrap();
    let name = ServerName::try_from("bmc.example.org").unwrap();
    let e = trusted.connect(name, tcp).await.expect_err("a foreign name must not verify");
    assert!(e.to_string().contains("not valid for name"), "{e}");
    other.shutdown().await;
    fleet.shutdown().await;
}

#[tokio::test]
async fn plain_fleets_stay_http_without_a_ca() {
    let fleet = start_fleet(vec![host("h1")]).await;
    assert!(fleet.ca_pem().is_none());
    let h = fleet.hosts()[0].clone();
    assert_eq!(h.base_url, format!("http://{}", h.addr));
    let status = reqwest::get(format!("{}/redfish/v1/", h.base_url)).await.unwrap().status();
    assert_eq!(status, 200);
    fleet.shutdown().await;
}

#[tokio::test]
async fn tls_bmc_serves_https_again_after_a_manager_reset() {
    let fleet = tls_fleet().await;
    let h = fleet.hosts()[0].clone();
    let ca = reqwest::Certificate::from_pem(fleet.ca_pem().unwrap().as_bytes()).unwrap();
    let http = reqwest::Client::builder().add_root_certificate(ca).build().unwrap();
    let reset = http
        .post(format!("{}/redfish/v1/Managers/BMC/Actions/Manager.Reset", h.base_url))
        .basic_auth(&h.username, Some(h.password.expose()))
        .json(&serde_json::json!({"ResetType": "GracefulRestart"}))
        .send()
        .await
        .unwrap();
    assert!(reset.status().is_success(), "{}", reset.status());
    let root = format!("{}/redfish/v1/", h.base_url);
    eventually("the BMC going down after the reset", || async { http.get(&root).send().await.is_err().then_some(()) })
        .await;
    eventually("HTTPS back after the reset", || async {
        let r = http.get(&root).send().await.ok()?;
        r.status().is_success().then_some(())
    })
    .await;
    fleet.shutdown().await;
}
