//! The Core-local script route: run the catalog entry's `script` on the worker with the BMC
//! address and credentials in its environment, under a timeout, heartbeating while it runs.
//!
//! The password reaches only the script's environment: it is scrubbed from the captured output
//! and never logged. A worker that dies mid-script stops heartbeating; Temporal ends the attempt
//! and the workflow judges the result from fresh inventory.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

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

/// `ip` and `port` of a BMC address (`ip:port` or `http(s)://ip:port`).
fn split_address(address: &str) -> (String, String) {
    let rest = address.split_once("://").map(|(_, r)| r).unwrap_or(address).trim_end_matches('/');
    match rest.rsplit_once(':') {
        Some((ip, port)) if port.chars().all(|c| c.is_ascii_digit()) => (ip.to_string(), port.to_string()),
        _ => (rest.to_string(), String::new()),
    }
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
    let (ip, port) = split_address(&machine.bmc_address);
    command
        .env("BMC_IP", &ip)
        .env("BMC_PORT", &port)
        .env("BMC_ADDRESS", &machine.bmc_address)
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

    #[test]
    fn splits_bmc_addresses() {
        assert_eq!(split_address("10.0.0.1:443"), ("10.0.0.1".into(), "443".into()));
        assert_eq!(split_address("https://10.0.0.1:8443/"), ("10.0.0.1".into(), "8443".into()));
        assert_eq!(split_address("bmc-1"), ("bmc-1".into(), String::new()));
    }

    #[test]
    fn output_is_scrubbed_and_bounded() {
        let out = tail(b"login root:hunter2 ok", "hunter2");
        assert_eq!(out, "login root:**** ok");
        let long = vec![b'a'; OUTPUT_LIMIT + 10];
        assert_eq!(tail(&long, "").len(), OUTPUT_LIMIT);
    }
}
