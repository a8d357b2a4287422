//! [`run`]: one script, in its own process group, to its end or its timeout (see the crate doc).

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::identity::{RunAs, DEFAULT_PATH, INHERITED_ENV};
use crate::process::kill_group;
use crate::tail::{pump, Tail};

/// How the script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Killed by a signal the runner did not send.
    Signalled(i32),
    /// Killed (with its whole group) at the timeout.
    TimedOut,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct ScriptRun {
    pub ending: Ending,
    /// The last `output_limit` characters of stdout, secrets scrubbed.
    pub stdout: String,
    /// The last `output_limit` characters of stderr, secrets scrubbed.
    pub stderr: String,
}

/// What [`run`] reports while it starts the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptEvent {
    /// About to spawn: from now on the script may be running.
    Spawning,
    /// Spawned: its pid, the leader of its process group.
    Started(u32),
}

/// Why a script could not be run or waited for (how it ended is [`Ending`]).
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("starting {program}: {source}")]
    Spawn {
        /// The command line's program and script, e.g. `sh /path/upgrade.sh`.
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("waiting for {program}: {source}")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// How to run one script.
pub struct ScriptSpec<'a> {
    pub script: &'a Path,
    /// Run it as `sh <script>` (else the file itself, which must be executable).
    pub via_sh: bool,
    /// Working directory; `None` keeps this process's.
    pub workdir: Option<&'a Path>,
    /// The script's environment, beside the few variables it inherits from this process
    /// ([`INHERITED_ENV`]); nothing else of this process's environment reaches it. `HOME` is the
    /// working directory when there is one.
    pub env: Vec<(&'static str, String)>,
    /// Start the script as this user (this process must be root to switch); `None`: as this
    /// process's own user.
    pub run_as: Option<RunAs>,
    /// The group is killed at this timeout ([`Ending::TimedOut`]).
    pub timeout: Duration,
    /// Run under coreutils `timeout -s KILL`, which kills the group this long after the start on
    /// its own, even if this process is dead by then. `None`: no such wrapper.
    pub hard_deadline: Option<Duration>,
    /// Characters of each stream's tail to keep.
    pub output_limit: usize,
    /// Replaced by `****` in the tails, in every form `scrub::forms` knows (itself,
    /// percent-encoded, base64 at any alignment), scrubbed before the tails are cut (e.g. the
    /// BMC password the script was given).
    pub secrets: Vec<String>,
    /// How long to wait for the streams to close once the group is dead.
    pub drain_grace: Duration,
    /// Told before the spawn and after it.
    pub on_event: &'a (dyn Fn(ScriptEvent) + Sync),
}

impl ScriptSpec<'_> {
    /// The program and arguments, before the environment.
    fn argv(&self) -> Vec<OsString> {
        let mut argv: Vec<OsString> = Vec::new();
        if let Some(hard) = self.hard_deadline {
            argv.extend(["timeout".into(), "-s".into(), "KILL".into(), format!("{}s", hard.as_secs().max(1)).into()]);
        }
        if self.via_sh {
            argv.push("sh".into());
        }
        argv.push(self.script.as_os_str().to_owned());
        argv
    }
}

/// The script's process group, SIGKILLed on request and on drop.
struct ProcessGroup {
    pgid: Option<u32>,
}

impl ProcessGroup {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            kill_group(pgid);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run the script to its end or its timeout. Dropping the returned future kills the whole group.
pub async fn run(spec: ScriptSpec<'_>) -> Result<ScriptRun, ScriptError> {
    let argv = spec.argv();
    let program = argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    if let Some(dir) = spec.workdir {
        command.current_dir(dir);
    }
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
    // Nothing of this process's environment (database URLs, the site key, Temporal settings)
    // is the script's business: it starts from an empty one.
    command.env_clear();
    for key in INHERITED_ENV {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    if std::env::var_os("PATH").is_none() {
        command.env("PATH", DEFAULT_PATH);
    }
    if let Some(dir) = spec.workdir {
        command.env("HOME", dir);
    }
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(user) = &spec.run_as {
        // std drops the supplementary groups when root switches to another uid.
        command.uid(user.uid).gid(user.gid);
    }
    (spec.on_event)(ScriptEvent::Spawning);
    let mut child = command.spawn().map_err(|source| ScriptError::Spawn { program: program.clone(), source })?;
    if let Some(pid) = child.id() {
        (spec.on_event)(ScriptEvent::Started(pid));
    }
    let group = ProcessGroup { pgid: child.id() };
    tracing::info!(pid = ?child.id(), timeout_secs = spec.timeout.as_secs(), "script started");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut out_tail = Tail::new(spec.output_limit, &spec.secrets);
    let mut err_tail = Tail::new(spec.output_limit, &spec.secrets);
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
        ending.map_err(|source| ScriptError::Wait { program: program.clone(), source })
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
