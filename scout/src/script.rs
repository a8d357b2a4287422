//! Running the upgrade script: `sh <script>` in its own process group, stdin closed, the tails
//! of stdout and stderr kept, the whole group killed at the timeout, when the script exits (no
//! stragglers outlive the task) and when the run is dropped (activity cancelled).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::error::ScoutError;
use crate::tail::{pump, Tail};

/// How the script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Exited(i32),
    /// Killed by a signal Scout did not send.
    Signalled(i32),
    /// Scout killed it at the timeout.
    TimedOut,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub(crate) struct ScriptRun {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
}

/// What [`run_script`] reports while it starts the script, for the task record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScriptEvent {
    /// About to spawn: from now on the script may be running.
    Spawning,
    /// Spawned: its pid (its process group leader).
    Started(u32),
}

/// How to run one script.
pub(crate) struct ScriptSpec<'a> {
    /// Told before the spawn and after it.
    pub on_event: &'a (dyn Fn(ScriptEvent) + Sync),
    pub script: &'a Path,
    pub workdir: &'a Path,
    pub env: Vec<(&'static str, String)>,
    pub timeout: Duration,
    /// Characters of each stream's tail to keep.
    pub output_limit: usize,
    /// How long to wait for the streams to close once the group is dead.
    pub drain_grace: Duration,
}

/// The script's process group, killed (SIGKILL) on request and on drop.
struct ProcessGroup {
    pgid: Option<libc::pid_t>,
}

impl ProcessGroup {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals that process group; it touches no memory.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run the script to its end or its timeout. Dropping the returned future kills the script.
pub(crate) async fn run_script(spec: ScriptSpec<'_>) -> Result<ScriptRun, ScoutError> {
    let mut command = Command::new("sh");
    command
        .arg(spec.script)
        .current_dir(spec.workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // The agent's Temporal settings (addresses, API keys) are none of the script's business.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("TEMPORAL_") {
            command.env_remove(key);
        }
    }
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    (spec.on_event)(ScriptEvent::Spawning);
    let mut child =
        command.spawn().map_err(|source| ScoutError::Spawn { script: spec.script.to_path_buf(), source })?;
    if let Some(pid) = child.id() {
        (spec.on_event)(ScriptEvent::Started(pid));
    }
    let group = ProcessGroup { pgid: child.id().and_then(|id| libc::pid_t::try_from(id).ok()) };
    tracing::info!(pid = ?child.id(), timeout_secs = spec.timeout.as_secs(), "script started");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut out_tail = Tail::new(spec.output_limit);
    let mut err_tail = Tail::new(spec.output_limit);
    let (ended_tx, ended_rx) = tokio::sync::oneshot::channel::<()>();

    let waiter = async {
        let ending = tokio::select! {
            status = child.wait() => status.map(|s| match (s.code(), s.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(signal)) => Ending::Signalled(signal),
                (None, None) => Ending::Signalled(0),
            }),
            _ = tokio::time::sleep(spec.timeout) => {
                group.kill();
                child.wait().await.map(|_| Ending::TimedOut)
            }
        };
        // Whatever the script left running in its group goes too, so its pipes close.
        group.kill();
        let _ = ended_tx.send(());
        ending.map_err(|source| ScoutError::Wait { script: spec.script.to_path_buf(), source })
    };
    let drain = async {
        let streams = futures::future::join(pump(stdout, &mut out_tail), pump(stderr, &mut err_tail));
        let give_up = async {
            let _ = ended_rx.await;
            tokio::time::sleep(spec.drain_grace).await;
        };
        tokio::select! {
            _ = streams => {}
            _ = give_up => tracing::warn!("script output still open after the script ended; reporting what was read"),
        }
    };
    let (ending, ()) = futures::join!(waiter, drain);
    let ending = ending?;
    tracing::info!(?ending, "script ended");
    Ok(ScriptRun { ending, stdout: out_tail.finish(), stderr: err_tail.finish() })
}
