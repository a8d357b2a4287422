//! The `bmc-sim` binary: exit code 2 and a message naming file/host/key for a bad fleet file;
//! host lines, a ready file and a clean exit on SIGTERM for a good one; `--ca-out` for a TLS
//! fleet.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bmc-sim-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const FLEET: &str = r#"
[defaults]
task_seconds = 0.2
firmware = [ { id = "BMC", version = "1.0" } ]

[[host]]
id = "host-001"
vendor = "Dell"
model = "PowerEdge R760"
bmc_address = "127.0.0.1:0"

[[host]]
id = "host-002"
vendor = "Lenovo"
model = "SR650"
bmc_address = "127.0.0.1:0"
"#;

#[test]
fn bad_fleet_file_exits_2_naming_file_host_and_key() {
    let dir = temp_dir("bad");
    let file = dir.join("fleet.toml");
    std::fs::write(&file, FLEET.replace("model = \"SR650\"", "model = \"SR650\"\ntask_style = \"ilo\"")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bmc-sim")).arg("--fleet").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fleet.toml") && err.contains("host-002") && err.contains("task_style"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_bmc-sim")).arg("--fleet").arg(dir.join("absent.toml")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The host list the simulator writes to its `--ready-file` once it serves, when it appears.
async fn read_ready(ready: &std::path::Path) -> serde_json::Value {
    eventually("ready file", || async { serde_json::from_slice(&std::fs::read(ready).ok()?).ok() }).await
}

/// SIGTERM the simulator and wait for it: it must exit 0 within 20 s. Its output.
async fn terminate(child: tokio::process::Child) -> std::process::Output {
    let pid = child.id().unwrap().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(0));
    out
}

#[tokio::test]
async fn runs_writes_ready_file_and_stops_on_sigterm() {
    let dir = temp_dir("good");
    let file = dir.join("fleet.toml");
    let ready = dir.join("ready.json");
    let _ = std::fs::remove_file(&ready);
    std::fs::write(&file, FLEET).unwrap();
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bmc-sim"))
        .arg("--fleet")
        .arg(&file)
        .arg("--ready-file")
        .arg(&ready)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let list = read_ready(&ready).await;
    let list = list.as_array().unwrap().clone();
    assert_eq!(list.len(), 2);
    assert_eq!(list[1]["id"], "host-002");
    let base = list[0]["base_url"].as_str().unwrap();
    let root: serde_json::Value = reqwest::get(format!("{base}/redfish/v1")).await.unwrap().json().await.unwrap();
    assert_eq!(root["Vendor"], "Dell");

    let out = terminate(child).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("host-001 Dell PowerEdge R760 at {base}")), "{stdout}");
    assert!(stdout.contains("host-002 Lenovo SR650 at http://127.0.0.1:"), "{stdout}");
}

#[tokio::test]
async fn tls_fleet_writes_the_ca_file_and_https_base_urls() {
    let dir = temp_dir("tls");
    let file = dir.join("fleet.toml");
    let ready = dir.join("ready.json");
    let ca_file = dir.join("ca.pem");
    let _ = std::fs::remove_file(&ready);
    let _ = std::fs::remove_file(&ca_file);
    std::fs::write(&file, format!("tls = true\n{FLEET}")).unwrap();
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bmc-sim"))
        .arg("--fleet")
        .arg(&file)
        .arg("--ready-file")
        .arg(&ready)
        .arg("--ca-out")
        .arg(&ca_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let list = read_ready(&ready).await;
    // The CA file is written before the ready file.
    let ca = std::fs::read(&ca_file).expect("CA file written");
    let base = list[0]["base_url"].as_str().unwrap().to_string();
    assert!(base.starts_with("https://127.0.0.1:"), "{base}");
    let http =
        reqwest::Client::builder().add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap()).build().unwrap();
    let root: serde_json::Value = http.get(format!("{base}/redfish/v1")).send().await.unwrap().json().await.unwrap();
    assert_eq!(root["Vendor"], "Dell");
    terminate(child).await;
}

#[test]
fn ca_out_without_tls_exits_2() {
    let dir = temp_dir("ca-no-tls");
    let file = dir.join("fleet.toml");
    std::fs::write(&file, FLEET).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bmc-sim"))
        .arg("--fleet")
        .arg(&file)
        .arg("--ca-out")
        .arg(dir.join("ca.pem"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ca-out") && err.contains("tls = true"), "{err}");
}

/// Issue 13 item 12: the binary serves its fleet-wide statistics (what the tests read in-process)
/// on a control endpoint.
#[tokio::test]
async fn serves_fleet_statistics_on_the_control_endpoint() {
    let dir = temp_dir("control");
    let file = dir.join("fleet.toml");
    let ready = dir.join("ready.json");
    let _ = std::fs::remove_file(&ready);
    std::fs::write(&file, FLEET).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bmc-sim"))
        .args(["--fleet", file.to_str().unwrap(), "--ready-file", ready.to_str().unwrap()])
        .args(["--control-listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let list = read_ready(&ready).await;
    let base = list[0]["base_url"].as_str().unwrap().to_string();
    let reset = serde_json::json!({ "ResetType": "ForceRestart" });
    let http = reqwest::Client::new();
    let answer = http
        .post(format!("{base}/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset"))
        .basic_auth(hostfw_bmc_sim::DEFAULT_USERNAME, Some(hostfw_bmc_sim::DEFAULT_PASSWORD))
        .json(&reset)
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    let stats: serde_json::Value =
        reqwest::get(format!("http://127.0.0.1:{port}/stats")).await.unwrap().json().await.unwrap();
    assert_eq!(stats["resets_system"], 1, "{stats}");
    assert_eq!(stats["per_host"]["host-001"]["system_resets"], 1, "{stats}");
    assert!(stats["max_concurrent_uploads"].is_u64() && stats["per_host"]["host-002"].is_object(), "{stats}");
    let out = terminate(child).await;
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("control http://127.0.0.1:{port}/stats")));
}
