//! Shared helpers of the integration tests: starting a bmc-sim fleet, building clients for its
//! hosts, writing simulator firmware images, and a tiny HTTP file server for SimpleUpdate.
//! Helpers only: no assertions about the client live here.
#![allow(dead_code)]

pub mod captured;
pub mod mock;

use std::path::PathBuf;
use std::time::Duration;

use hostfw_bmc_sim::{FleetSpec, RunningFleet, SimHost};
use hostfw_redfish::{AuthMode, BmcEndpoint, ClientOptions, RedfishClient, WaitOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One host's TOML, firmware BMC_0 1.0 and BIOS_0 1.0; `extra` adds `key = value` lines.
pub fn host_toml(id: &str, extra: &str) -> String {
    format!(
        r#"
[[host]]
id = "{id}"
vendor = "Nvidia"
model = "DGX H100"
serial = "SN-{id}"
bmc_address = "127.0.0.1:0"
{extra}
firmware = [ {{ id = "BMC_0", version = "1.0" }}, {{ id = "BIOS_0", version = "1.0", name = "System BIOS" }} ]
"#
    )
}

/// A fleet TOML with fast timings and the given hosts.
pub fn fleet_toml(hosts: &[String]) -> String {
    let mut s = String::from(
        "[defaults]\nusername = \"admin\"\npassword = \"password\"\ntask_seconds = 0.3\nreset_seconds = 0.2\nmanager_reset_seconds = 0.5\n",
    );
    for h in hosts {
        s.push_str(h);
    }
    s
}

/// Starts a fleet from TOML.
pub async fn start_fleet(toml: &str) -> RunningFleet {
    let spec = FleetSpec::from_toml_str(toml).expect("fleet TOML");
    hostfw_bmc_sim::start(spec).await.expect("fleet starts")
}

/// Starts a one-host fleet; returns the fleet and its host.
pub async fn one_host(extra: &str) -> (RunningFleet, SimHost) {
    let fleet = start_fleet(&fleet_toml(&[host_toml("h1", extra)])).await;
    let host = fleet.hosts().into_iter().next().expect("one host");
    (fleet, host)
}

pub fn options(auth: AuthMode) -> ClientOptions {
    ClientOptions {
        request_timeout: Duration::from_secs(10),
        auth,
        accept_invalid_certs: false,
        ca_bundle: None,
        ..ClientOptions::default()
    }
}

/// A client for a scripted BMC (`mock`), with these options.
pub fn mock_client(mock: &mock::MockBmc, options: ClientOptions) -> RedfishClient {
    RedfishClient::new(
        BmcEndpoint { address: mock.bmc(), username: "admin".into(), password: "password".into() },
        options,
    )
    .expect("client")
}

/// A client for a sim host, addressed by its base URL (`http://ip:port`).
pub fn client(host: &SimHost, auth: AuthMode) -> RedfishClient {
    RedfishClient::new(
        BmcEndpoint {
            address: host.base_url.parse().expect("sim base URL"),
            username: host.username.clone(),
            password: host.password.clone(),
        },
        options(auth),
    )
    .expect("client")
}

/// Fast polling for tests; the bound only matters when something is broken.
pub fn wait_opts() -> WaitOptions {
    WaitOptions { poll_interval: Duration::from_millis(50), timeout: Duration::from_secs(20) }
}

/// The simulator's image format: a header line then padding.
pub fn image_bytes(applies_to: &str, version: &str, padding: usize) -> Vec<u8> {
    hostfw_bmc_sim::firmware_image(applies_to, version, padding)
}

/// Writes an image into `dir` and returns its path.
pub fn write_image(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write image");
    path
}

/// The version the sim reports for a member.
pub fn sim_version(fleet: &RunningFleet, host: &str, member: &str) -> Option<String> {
    fleet.versions(host).into_iter().find(|(id, _)| id == member).map(|(_, v)| v)
}

/// A minimal HTTP/1.1 server answering every GET with `body` (for SimpleUpdate ImageURIs).
pub struct FileServer {
    pub url: String,
    handle: JoinHandle<()>,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

pub async fn serve_file(body: Vec<u8>, name: &str) -> FileServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind file server");
    let addr = listener.local_addr().expect("addr");
    let handle = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            tokio::spawn(async move {
                // Read the request head (we answer the same file to any path).
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let header = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(header.as_bytes()).await;
                let _ = stream.write_all(&body).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    FileServer { url: format!("http://{addr}/images/{name}"), handle }
}

/// Polls `check` every 20 ms until it returns true or `timeout` passes (then panics with `what`).
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
