//! The Core-local script route: run the catalog entry's `script` on the worker with the BMC
//! address and credentials in its environment, under a timeout, heartbeating while it runs.
//!
//! The address reaches the script as `BMC_URL` (`scheme://host:port[/prefix]`, the canonical
//! `BmcAddress`), `BMC_SCHEME`, `BMC_IP` (the host, no brackets), `BMC_PORT` and `BMC_ADDRESS`
//! (`host:port`). Scripts build URLs from `BMC_URL`, so an https BMC is never spoken to in clear.
//!
//! The password reaches only the script's environment: it is scrubbed from the captured output
//! and never logged. A worker that dies mid-script stops heartbeating; Temporal ends the attempt
//! and the workflow judges the result from fresh inventory.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hostfw_model::BmcAddress;
use hostfw_workflows::{ScriptInput, ScriptResult};
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;
use tokio::process::Command;

use crate::bmc;
use crate::error;
use crate::Deps;

/// Longest output tail kept, per stream, in characters.
pub const OUTPUT_LIMIT: usize = 1500;
use crate::heartbeat::HEARTBEAT_EVERY;

fn tail(bytes: &[u8], secret: &str) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    if !secret.is_empty() {
        text = text.replace(secret, "****");
    }
    let count = text.chars().count();
    if count > OUTPUT_LIMIT {
        text.chars().skip(count - OUTPUT_LIMIT).collect()
    } else {
        text
    }
}

/// The script's environment variables describing where the BMC is (see the module doc).
fn address_env(address: &BmcAddress) -> [(&'static str, String); 5] {
    [
        ("BMC_URL", address.to_string()),
        ("BMC_SCHEME", address.scheme().to_string()),
        ("BMC_IP", address.host().to_string()),
        ("BMC_PORT", address.port().to_string()),
        ("BMC_ADDRESS", address.authority()),
    ]
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        let _ = std::process::Command::new("kill").arg("-KILL").arg(format!("-{pid}")).status();
    }
}

/// Run the script and report how it ended.
pub async fn run_script(deps: &Deps, ctx: &ActivityContext, input: ScriptInput) -> Result<ScriptResult, ActivityError> {
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let (username, password) = bmc::login(deps, &machine).await?;
    let path = crate::artifacts::resolve(&deps.settings, &input.script)?.path;
    let executable = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    let mut command = if executable {
        Command::new(&path)
    } else {
        let mut c = Command::new("sh");
        c.arg(&path);
        c
    };
    command
        .envs(address_env(&machine.bmc_address))
        .env("BMC_USERNAME", &username)
        .env("BMC_PASSWORD", &password)
        .env("MACHINE_ID", &machine.id)
        .env("COMPONENT_TYPE", input.component.to_string())
        .env("TARGET_VERSION", &input.target_version)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| error::bad_input(format!("script {}: cannot start: {e}", path.display())))?;
    let pid = child.id();
    tracing::info!(machine = %machine.id, script = %path.display(), component = %input.component,
        target = %input.target_version, "running Core-local script");
    let started = Instant::now();
    let timeout = Duration::from_secs(input.timeout_secs);
    let output = child.wait_with_output();
    tokio::pin!(output);
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let output = loop {
        tokio::select! {
            out = &mut output => break out,
            _ = beat.tick() => {
                let _ = ctx.record_heartbeat(format!("script running for {} s", started.elapsed().as_secs())).await;
            }
            _ = &mut deadline => {
                kill_group(pid);
                tracing::warn!(machine = %machine.id, script = %path.display(), "script timed out; killed");
                return Ok(ScriptResult {
                    success: false,
                    exit_code: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    error: Some(format!("timed out after {} s", input.timeout_secs)),
                });
            }
            _ = ctx.cancelled() => {
                kill_group(pid);
                return Err(ActivityError::cancelled());
            }
        }
    };
    let output = output.map_err(|e| error::bad_input(format!("script {}: {e}", path.display())))?;
    let result = ScriptResult {
        success: output.status.success(),
        exit_code: output.status.code(),
        stdout: tail(&output.stdout, &password),
        stderr: tail(&output.stderr, &password),
        error: None,
    };
    tracing::info!(machine = %machine.id, script = %path.display(), exit = ?result.exit_code,
        seconds = started.elapsed().as_secs(), "script finished");
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(address: &str) -> Vec<(&'static str, String)> {
        address_env(&address.parse().unwrap()).to_vec()
    }

    #[test]
    fn the_script_gets_the_whole_address() {
        let e = |url: &str, scheme: &str, ip: &str, port: &str, addr: &str| {
            vec![
                ("BMC_URL", url.to_string()),
                ("BMC_SCHEME", scheme.to_string()),
                ("BMC_IP", ip.to_string()),
                ("BMC_PORT", port.to_string()),
                ("BMC_ADDRESS", addr.to_string()),
            ]
        };
        // A bare address is https on 443: the script is told so, not left to guess http.
        assert_eq!(env("10.0.0.1"), e("https://10.0.0.1:443", "https", "10.0.0.1", "443", "10.0.0.1:443"));
        assert_eq!(env("HTTPS://10.0.0.1:8443/"), e("https://10.0.0.1:8443", "https", "10.0.0.1", "8443", "10.0.0.1:8443"));
        assert_eq!(env("http://bmc-1"), e("http://bmc-1:80", "http", "bmc-1", "80", "bmc-1:80"));
        assert_eq!(
            env("http://[fe80::1]:8000/bmc/h1"),
            e("http://[fe80::1]:8000/bmc/h1", "http", "fe80::1", "8000", "[fe80::1]:8000")
        );
    }

    #[test]
    fn output_is_scrubbed_and_bounded() {
        let out = tail(b"login root:hunter2 ok", "hunter2");
        assert_eq!(out, "login root:**** ok");
        let long = vec![b'a'; OUTPUT_LIMIT + 10];
        assert_eq!(tail(&long, "").len(), OUTPUT_LIMIT);
    }
}
