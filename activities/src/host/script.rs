//! The Core-local script route: run the catalog entry's `script` on the worker with the BMC
//! address and credentials in its environment, under a timeout, heartbeating while it runs.
//!
//! The address reaches the script as `BMC_URL` (`scheme://host:port[/prefix]`, the canonical
//! `BmcAddress`), `BMC_SCHEME`, `BMC_IP` (the host, no brackets), `BMC_PORT` and `BMC_ADDRESS`
//! (`host:port`). Scripts build URLs from `BMC_URL`, so an https BMC is never spoken to in clear.
//!
//! The script starts with a cleared environment: the `BMC_*` variables, `MACHINE_ID`,
//! `COMPONENT_TYPE`, `TARGET_VERSION` and the few `hostfw_script_runner::INHERITED_ENV` ones
//! (`PATH`, the locale, `TZ`, `TMPDIR`); nothing else of the worker's (database URL, site key,
//! Temporal settings). It runs as `[scripts] run_as` when set; without it, as the worker's user,
//! and not at all when the worker got its site key through `HOSTFW_SITE_KEY` (see
//! docs/security.md). The password reaches only the script's environment: every form of it
//! (itself, percent-encoded, base64) is scrubbed from the captured output before the output is
//! cut, and it is never logged. A worker that dies mid-script stops heartbeating; Temporal ends the attempt
//! and the workflow judges the result from fresh inventory.
//!
//! The script is run by `hostfw_script_runner` (as Scout runs its scripts): in its own process
//! group, under coreutils `timeout`, which bounds it even if the worker dies, the group killed at
//! the timeout, when the script ends and when the activity is cancelled or dropped, the tails of
//! its output kept in bounded memory with the password scrubbed. It outlives a SIGKILLed worker. Each run therefore holds a lock on its
//! machine and component in the site database, with its process identity; a later run that finds
//! the lock waits for that earlier run to end and does not start the script (see
//! [`crate::host::script_lock`]). The lock is released, and stragglers in the group killed, when the
//! script ends.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use hostfw_model::config::ScriptsSection;
use hostfw_model::BmcAddress;
use hostfw_script_runner::{Ending, RunAs, ScriptError, ScriptEvent, ScriptSpec};
use hostfw_store::{ScriptLock, Store};
use hostfw_workflows::{ScriptInput, ScriptResult};
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;

use crate::bmc;
use crate::error;
use crate::host::script_lock::{
    self, claim_or_wait, kill_group, Claim, ClaimError, ThisHost, WaitPolicy, HARD_TIMEOUT_MARGIN, POLL_EVERY,
    STALE_MARGIN,
};
use crate::Deps;

use crate::heartbeat::HEARTBEAT_EVERY;
pub use crate::tunables::OUTPUT_DRAIN_GRACE;
pub use crate::tunables::OUTPUT_LIMIT;

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

/// The script's lock and process group while it runs: on drop (the activity future dropped, e.g.
/// at worker shutdown) the group is killed and the lock released, so nothing outlives the run
/// unrecorded. [`RunGuard::finish`] does the same on every normal way out.
struct RunGuard {
    store: Store,
    lock: ScriptLock,
    pgid: Option<u32>,
    done: bool,
}

impl RunGuard {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            kill_group(pgid);
        }
    }

    /// Kill whatever the script left in its group, then release the lock. A release that fails
    /// (a site-database blip) is retried in the background ([`crate::release_retry`]): a finished run's lock left behind would make the next run refuse to
    /// start (it cannot tell a finished run from an orphan), costing the host a retry.
    async fn finish(mut self) {
        self.done = true;
        self.kill();
        let lock = self.lock.clone();
        match self.store.script_lock_release(&lock.machine_id, &lock.component, &lock.holder).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(machine_id = %lock.machine_id, component = %lock.component,
                "the script lock was taken over by another run before this one released it"),
            Err(e) => {
                tracing::warn!(machine_id = %lock.machine_id, component = %lock.component, error = %hostfw_model::error_chain(&e),
                    "could not release the script lock; retrying in the background");
                let store = self.store.clone();
                let what = format!("script lock of {} {}", lock.machine_id, lock.component);
                crate::release_retry::in_background(what, move || {
                    let (store, lock) = (store.clone(), lock.clone());
                    async move {
                        store.script_lock_release(&lock.machine_id, &lock.component, &lock.holder).await.map(|_| ())
                    }
                });
            }
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.kill();
        let (store, lock) = (self.store.clone(), self.lock.clone());
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                let _ = store.script_lock_release(&lock.machine_id, &lock.component, &lock.holder).await;
            });
        }
    }
}

fn failed(error: String) -> ScriptResult {
    ScriptResult { success: false, exit_code: None, stdout: String::new(), stderr: String::new(), error: Some(error) }
}

/// As whom the script starts: `[scripts] run_as`, looked up now; without it, the worker's own
/// user, except when this worker was given the site key through `HOSTFW_SITE_KEY`: a script of
/// the worker's user could read it from `/proc/<worker>/environ`, so none is started then.
fn script_identity(scripts: &ScriptsSection, key_in_env: bool) -> Result<Option<RunAs>, String> {
    match &scripts.run_as {
        Some(name) => RunAs::lookup(name).map(Some).map_err(|e| format!("[scripts] run_as: {e}")),
        None if key_in_env => Err(format!(
            "refusing to start a Core-local script: this worker got its site key through {} and \
             [scripts] run_as is not set, so the script (running as the worker's user) could read the key \
             from the worker's environment; give the key as a file ([site] secret_key_file or {}) or set \
             [scripts] run_as to an unprivileged user",
            hostfw_store::SITE_KEY_ENV,
            hostfw_store::SITE_KEY_FILE_ENV,
        )),
        None => Ok(None),
    }
}

/// Run the script and report how it ended. First claim the machine's component in the site
/// database; an earlier run found there is waited for (see [`crate::host::script_lock`]) and the script
/// is then not run: the activity fails with `EarlierScriptRun` and the workflow reads the inventory.
pub async fn run_script(deps: &Deps, ctx: &ActivityContext, input: ScriptInput) -> Result<ScriptResult, ActivityError> {
    let site = deps.site.current();
    let run_as = script_identity(&site.scripts, std::env::var_os(hostfw_store::SITE_KEY_ENV).is_some())
        .map_err(error::bad_input)?;
    let machine = bmc::machine(deps, &input.machine_id).await?;
    let (username, password) = bmc::login(deps, &machine).await?;
    let path = crate::artifacts::resolve(&deps.settings, &input.script)?.path;
    let executable = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    let timeout = Duration::from_secs(input.timeout_secs);
    let here = ThisHost::read();
    let started_ms = chrono::Utc::now().timestamp_millis();
    let lock = ScriptLock {
        machine_id: machine.id.clone(),
        component: input.component.to_string(),
        holder: format!("{}/{}/{}", here.name, std::process::id(), uuid::Uuid::new_v4()),
        script: input.script.clone(),
        worker_host: here.name.clone(),
        boot_id: here.boot_id.clone(),
        pid: None,
        pid_start_ticks: None,
        started_at_ms: started_ms,
        deadline_ms: started_ms + (timeout + HARD_TIMEOUT_MARGIN).as_millis() as i64,
    };
    let scheduled_ms = ctx.info().scheduled_time.map(|t| chrono::DateTime::<chrono::Utc>::from(t).timestamp_millis());
    let policy = WaitPolicy {
        orphan_wait: site.host_reprovision.script_orphan_wait,
        poll: POLL_EVERY,
        stale_before_ms: scheduled_ms.map_or(i64::MIN, |t| t - STALE_MARGIN.as_millis() as i64),
    };
    let heartbeat = |what: String| async move {
        let _ = ctx.record_heartbeat(what).await;
    };
    match claim_or_wait(&deps.store, &lock, &here, &policy, heartbeat, ctx.cancelled()).await {
        Ok(Claim::Claimed) => {}
        Ok(Claim::EarlierRun { report, killed }) => {
            tracing::warn!(machine_id = %machine.id, component = %input.component, killed,
                "not running {}: {report}", path.display());
            return Err(error::earlier_script_run(format!(
                "not run: {report}; its outcome is unknown, so the inventory decides whether {} reached {}",
                input.component, input.target_version
            )));
        }
        Err(ClaimError::Cancelled) => return Err(ActivityError::cancelled()),
        Err(ClaimError::Store(e)) => return Err(error::store(e)),
    }
    let mut guard = RunGuard { store: deps.store.clone(), lock, pgid: None, done: false };

    let mut env = address_env(&machine.bmc_address).to_vec();
    env.extend([
        ("BMC_USERNAME", username.clone()),
        ("BMC_PASSWORD", password.expose().to_string()),
        ("MACHINE_ID", machine.id.clone()),
        ("COMPONENT_TYPE", input.component.to_string()),
        ("TARGET_VERSION", input.target_version.clone()),
    ]);
    let (pid_tx, mut pid_rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
    let on_event = move |event: ScriptEvent| {
        if let ScriptEvent::Started(pid) = event {
            let _ = pid_tx.send(pid);
        }
    };
    let run = hostfw_script_runner::run(ScriptSpec {
        script: &path,
        via_sh: !executable,
        workdir: None,
        env,
        timeout,
        // `timeout(1)` kills the whole group at the hard deadline even if this worker is dead by
        // then, so a run recorded by another host is over by its lock's deadline (see `script_lock`).
        hard_deadline: Some(timeout + HARD_TIMEOUT_MARGIN),
        output_limit: OUTPUT_LIMIT,
        secrets: vec![password.expose().to_string()],
        run_as,
        drain_grace: OUTPUT_DRAIN_GRACE,
        on_event: &on_event,
    });
    tokio::pin!(run);
    let started = Instant::now();
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    let run = loop {
        tokio::select! {
            out = &mut run => break out,
            Some(pid) = pid_rx.recv() => {
                guard.pgid = Some(pid);
                let ticks = script_lock::proc_stat(pid).map(|s| s.start_ticks as i64);
                let l = &guard.lock;
                match deps.store.script_lock_set_process(&l.machine_id, &l.component, &l.holder, i64::from(pid), ticks).await {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(machine_id = %machine.id, "the script lock was lost before its process was recorded"),
                    Err(e) => tracing::warn!(machine_id = %machine.id, error = %hostfw_model::error_chain(&e),
                        "could not record the script's process; a rerun will wait for this run's deadline"),
                }
                tracing::info!(machine_id = %machine.id, script = %path.display(), component = %input.component,
                    target_version = %input.target_version, pid, worker_host = %here.name, "running Core-local script");
            }
            _ = beat.tick() => {
                let _ = ctx.record_heartbeat(format!("script running for {} s", started.elapsed().as_secs())).await;
            }
            _ = ctx.cancelled() => {
                guard.finish().await;
                return Err(ActivityError::cancelled());
            }
        }
    };
    guard.finish().await;
    let run = match run {
        Ok(run) => run,
        Err(ScriptError::Spawn { source, .. }) => {
            return Err(error::bad_input(format!(
                "script {}: cannot start it under coreutils `timeout`: {source}",
                path.display()
            )));
        }
        Err(ScriptError::Wait { source, .. }) => {
            return Err(error::bad_input(format!("script {}: {source}", path.display())));
        }
    };
    let exit_code = match run.ending {
        Ending::TimedOut => {
            tracing::warn!(machine_id = %machine.id, script = %path.display(), "script timed out; killed");
            return Ok(failed(format!("timed out after {} s", input.timeout_secs)));
        }
        Ending::Exited(code) => Some(code),
        Ending::Signalled(_) => None,
    };
    let result =
        ScriptResult { success: exit_code == Some(0), exit_code, stdout: run.stdout, stderr: run.stderr, error: None };
    tracing::info!(machine_id = %machine.id, script = %path.display(), exit = ?result.exit_code,
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
        assert_eq!(
            env("HTTPS://10.0.0.1:8443/"),
            e("https://10.0.0.1:8443", "https", "10.0.0.1", "8443", "10.0.0.1:8443")
        );
        assert_eq!(env("http://bmc-1"), e("http://bmc-1:80", "http", "bmc-1", "80", "bmc-1:80"));
        assert_eq!(
            env("http://[fe80::1]:8000/bmc/h1"),
            e("http://[fe80::1]:8000/bmc/h1", "http", "fe80::1", "8000", "[fe80::1]:8000")
        );
    }

    #[test]
    fn a_key_in_the_environment_needs_run_as() {
        let none = ScriptsSection::default();
        assert_eq!(script_identity(&none, false), Ok(None));
        let e = script_identity(&none, true).unwrap_err();
        assert!(e.contains("HOSTFW_SITE_KEY") && e.contains("[scripts] run_as"), "{e}");
        let nobody = ScriptsSection { run_as: Some("nobody".into()) };
        assert_eq!(script_identity(&nobody, true).unwrap().unwrap().name, "nobody");
        let stranger = ScriptsSection { run_as: Some("no-such-user-hostfw".into()) };
        assert!(script_identity(&stranger, false).unwrap_err().contains("[scripts] run_as: there is no user"));
    }

    #[test]
    fn output_is_scrubbed_and_bounded() {
        use hostfw_script_runner::{last_chars, scrub};
        let tail = |text: &str, secret: &str| last_chars(&scrub(text, &[secret.to_string()]), OUTPUT_LIMIT);
        let out = tail("login root:hunter2 ok", "hunter2");
        assert_eq!(out, "login root:**** ok");
        let long = "a".repeat(OUTPUT_LIMIT + 10);
        assert_eq!(tail(&long, "").len(), OUTPUT_LIMIT);
    }
}
