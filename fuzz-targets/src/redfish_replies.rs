//! Target `redfish_replies`: the real Redfish client against a BMC whose replies are the input.
//!
//! Owns driving one `RedfishClient` operation (explore with `$expand` and `@odata.nextLink`
//! pages, UpdateService read, upload and its task answer, task monitor poll, running update
//! tasks, reset ActionInfo, power state, booted image) against `scripted_bmc` serving the input's
//! replies (status, headers, bodies: task documents, error bodies, collections), and checking:
//! no panic or hang; every error names the BMC and the URL it was reading; and the body limit
//! (`ClientOptions::max_body_bytes`) holds: no reply body much larger than it is read whole. It
//! must not decode documents itself (`redfish_models` does every model type).
//!
//! Input: byte 0 picks the operation, byte 1 the client flags (bit 0: `$expand` off, bit 1:
//! session login), then the replies, one per request in order, separated by `input::SEPARATOR`;
//! each may start with a line `@<status> [Name:value]...` (see `scripted_bmc::Reply::parse`).

// `RedfishError` is the client's own (large by design: it names the BMC, URL, status and message).
#![allow(clippy::result_large_err)]

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use hostfw_model::{BmcAddress, Secret};
use hostfw_redfish::{
    AuthMode, BmcEndpoint, ClientOptions, RedfishClient, RedfishError, TaskRef, UploadRequest, WaitOptions,
};

use crate::input::assert_names;
use crate::scripted_bmc::{self, Served, Source};

/// The client's body limit in this target: small, so that a script can exceed it cheaply.
pub const BODY_LIMIT: u64 = 1024 * 1024;
/// What the loopback socket buffers may hold past the limit before the client hangs up.
const SOCKET_SLACK: u64 = 16 * 1024 * 1024;
/// An operation that takes longer is a hang (each request has a 5 s timeout).
const SESSION_BOUND: Duration = Duration::from_secs(60);

/// The client operations, by selector byte (modulo their number).
pub const OPERATIONS: &[&str] = &[
    "explore",
    "update_service",
    "poll_task",
    "running_update_tasks",
    "system_resets_allowed",
    "manager_resets_allowed",
    "power_state",
    "booted_image",
    "upload",
];

pub fn run(data: &[u8]) {
    let (op, rest) = crate::input::selector(data);
    let (flags, script) = crate::input::selector(rest);
    let source = Source::Script(scripted_bmc::parse_script(script));
    check(op, flags, source);
}

/// Runs operation `op` with `flags` against `source`; asserts the properties; returns what was
/// served (a tree session's record becomes a seed script).
pub fn check(op: u8, flags: u8, source: Source) -> Vec<Served> {
    let name = OPERATIONS[usize::from(op) % OPERATIONS.len()];
    let (outcome, served) = scripted_bmc::bmc().session(source, |port| async move {
        let client = client(port, flags);
        let bmc = client.address().to_string();
        let result = tokio::time::timeout(SESSION_BOUND, operate(&client, op)).await;
        (bmc, port, result)
    });
    let (bmc, port, result) = outcome;
    let result = result.unwrap_or_else(|_| panic!("redfish {name}: no answer after {SESSION_BOUND:?} (a hang)"));
    if let Err(e) = result {
        let message = e.to_string();
        let url = format!("http://127.0.0.1:{port}");
        match e {
            RedfishError::File { .. } | RedfishError::EmptyImage { .. } => {
                assert_names(&format!("redfish {name}"), &message, &[&bmc])
            }
            _ => assert_names(&format!("redfish {name}"), &message, &[&bmc, &url]),
        }
    }
    for s in &served {
        assert!(
            s.body_written <= BODY_LIMIT + SOCKET_SLACK,
            "redfish {name}: {} {}: the client read {} bytes of a {}-byte body; its limit is {BODY_LIMIT}",
            s.method,
            s.path,
            s.body_written,
            s.body_len
        );
    }
    served
}

fn client(port: u16, flags: u8) -> RedfishClient {
    let address: BmcAddress = format!("http://127.0.0.1:{port}").parse().expect("a loopback BMC address");
    let endpoint = BmcEndpoint { address, username: "root".into(), password: Secret::new("fuzz") };
    let options = ClientOptions {
        request_timeout: Duration::from_secs(5),
        auth: if flags & 2 != 0 { AuthMode::Session } else { AuthMode::Basic },
        max_body_bytes: BODY_LIMIT,
        reset_task_wait: WaitOptions { poll_interval: Duration::from_millis(1), timeout: Duration::from_millis(50) },
        inventory_concurrency: 1,
        expand: flags & 1 == 0,
        ..ClientOptions::default()
    };
    RedfishClient::new(endpoint, options).expect("a client for a loopback BMC")
}

/// A small image file for `upload` (the route answers are what is fuzzed, not the file).
fn image() -> &'static Path {
    static IMAGE: OnceLock<std::path::PathBuf> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("hostfw-fuzz-image-{}.bin", std::process::id()));
        std::fs::write(&path, b"firmware image for the fuzz target").expect("write the fuzz image");
        path
    })
}

async fn operate(client: &RedfishClient, op: u8) -> Result<(), RedfishError> {
    match usize::from(op) % OPERATIONS.len() {
        0 => client.explore().await.map(drop),
        1 => client.update_service().await.map(drop),
        2 => {
            let task = TaskRef { monitor_uri: "/redfish/v1/TaskService/Tasks/1".into(), task_uri: None };
            client.poll_task(&task).await.map(drop)
        }
        3 => client.running_update_tasks().await.map(drop),
        4 => client.system_resets_allowed().await.map(drop),
        5 => client.manager_resets_allowed().await.map(drop),
        6 => client.power_state().await.map(drop),
        7 => client.booted_image().await.map(drop),
        _ => {
            let request = UploadRequest {
                file: image().to_path_buf(),
                image_uri: Some("http://127.0.0.1:1/images/fw.bin".into()),
                targets: Vec::new(),
                apply_time: None,
                force_route: None,
                extra_parts: Vec::new(),
            };
            client.upload(&request).await.map(drop)
        }
    }
}
