//! Scout's own timeouts, retries and places: the one file that says how long Scout waits for what,
//! and why. (Per-task bounds, the script's execution timeout and the artifact download timeout,
//! come from the package's `metadata.toml` through the task.)

use std::path::PathBuf;
use std::time::Duration;

/// Bound on one try at downloading the script: it is a small text file, so 30 s means the file
/// server is not answering (NICo's Scout uses the same value).
pub const SCRIPT_DOWNLOAD_TRY_TIMEOUT: Duration = Duration::from_secs(30);

/// Tries per download (script and each artifact): rides out a restarting file server or one
/// dropped connection; more would only delay a real outage that the workflow reports anyway.
pub const DOWNLOAD_TRIES: u32 = 3;

/// Pause before the second try; doubled before each later one (1 s, 2 s): short, since the
/// whole task is bounded and a file server that is down for longer is a real failure.
pub const DOWNLOAD_FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// How often a running task heartbeats. Well under any sensible heartbeat timeout the workflow
/// sets (tens of seconds); the SDK throttles to 0.8 × the timeout anyway, so a short interval
/// only makes cancellation and crash detection prompt.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);

/// After the script exits (or is killed) and its process group has been killed, how long Scout
/// still waits for its stdout/stderr to close: only a process that escaped the group (`setsid`)
/// can hold them open, and its output is not worth blocking the report for.
pub const OUTPUT_DRAIN_GRACE: Duration = Duration::from_secs(2);

/// On SIGTERM, how long running upgrades may go on before the worker cancels them (and Scout
/// kills the script). Long enough for a short script to finish, well inside systemd's default
/// 90 s stop timeout so the cancellation is still reported.
pub const GRACEFUL_SHUTDOWN_PERIOD: Duration = Duration::from_secs(60);

/// Where the `scout` binary keeps its task records (see [`crate::ledger`]) unless `--state-dir`
/// says otherwise. They must outlive an agent restart; a record matters only until the workflow
/// has the task's result, so surviving a reboot is not needed, but a persistent directory costs
/// nothing.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/hostfw-scout";

/// How often a retried task looks again at a script left running by an agent process that died.
pub const ORPHAN_POLL: Duration = Duration::from_secs(1);

/// How long task records are kept in the ledger: far beyond any task's retries.
pub const KEEP_RECORDS: Duration = Duration::from_secs(30 * 24 * 3600);

/// Everything above as values, so tests can shorten them.
#[derive(Debug, Clone)]
pub struct ScoutSettings {
    /// Where per-task working directories are created.
    pub work_root: PathBuf,
    /// Where the per-task records live. The library default is a directory under the temp dir
    /// (so tests and embedded agents need no setup); the binary passes [`DEFAULT_STATE_DIR`].
    pub state_dir: PathBuf,
    pub orphan_poll: Duration,
    pub script_download_try_timeout: Duration,
    pub download_tries: u32,
    pub download_first_backoff: Duration,
    pub heartbeat_interval: Duration,
    pub output_drain_grace: Duration,
    /// The operator's package signing key; tasks must be signed by it (`crate::signature`).
    pub trusted_key: Option<crate::signature::TrustedKey>,
    /// Run unsigned packages when no key is set (development only; logged as a WARN at start).
    pub allow_unsigned: bool,
    /// Variables of Scout's own environment passed on to every package script (`--script-env`),
    /// besides the task's own and the runner's allow-list; nothing else of Scout's environment
    /// reaches a script. Built by [`script_env`].
    pub script_env: Vec<(&'static str, String)>,
}

/// The variables a package script always gets from its task; `--script-env` may not name them.
pub const TASK_ENV: &[&str] = &["DOWNLOAD_DIR", "COMPONENT_TYPE", "TARGET_VERSION", "MACHINE_ID"];

/// `--script-env NAME`s resolved from `lookup` (Scout's environment): each must be a plain
/// variable name, not one of [`TASK_ENV`] nor the runner's own, and set. `Err` names the first
/// that is not. Names live for the whole process (the script runner takes `&'static str` keys).
pub fn script_env(
    names: &[String],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(&'static str, String)>, String> {
    let mut out = Vec::new();
    for name in names {
        let plain = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return Err(format!("--script-env {name:?}: not a variable name (letters, digits and _)"));
        }
        if TASK_ENV.contains(&name.as_str())
            || hostfw_script_runner::INHERITED_ENV.contains(&name.as_str())
            || name == "HOME"
        {
            return Err(format!("--script-env {name}: scripts already get {name} from their task or the runner"));
        }
        let Some(value) = lookup(name) else {
            return Err(format!("--script-env {name}: {name} is not set in Scout's environment"));
        };
        out.push((&*Box::leak(name.clone().into_boxed_str()), value));
    }
    Ok(out)
}

impl Default for ScoutSettings {
    fn default() -> Self {
        ScoutSettings {
            work_root: std::env::temp_dir(),
            state_dir: std::env::temp_dir().join("hostfw-scout-state"),
            orphan_poll: ORPHAN_POLL,
            script_download_try_timeout: SCRIPT_DOWNLOAD_TRY_TIMEOUT,
            download_tries: DOWNLOAD_TRIES,
            download_first_backoff: DOWNLOAD_FIRST_BACKOFF,
            heartbeat_interval: HEARTBEAT_INTERVAL,
            output_drain_grace: OUTPUT_DRAIN_GRACE,
            trusted_key: None,
            allow_unsigned: false,
            script_env: Vec::new(),
        }
    }
}
