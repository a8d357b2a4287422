//! One upgrade task from receipt to report: check that it is ours, well formed and signed, make its
//! working directory, download and verify the script and every artifact (the script never runs
//! unless all digests match), run the script, and turn the outcome into a `ScoutResult`.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use hostfw_workflows::scout::{ScoutFile, ScoutResult, ScoutTask, SCOUT_OUTPUT_LIMIT};
use tempfile::TempDir;
use tokio::sync::watch;

use crate::download::{fetch_verified, FetchPolicy};
use crate::error::{ScoutError, StepError, TaskFailure};
use crate::settings::ScoutSettings;
use hostfw_script_runner::{Ending, ScriptError, ScriptEvent, ScriptSpec};

/// Name of the artifact directory inside the working directory (the script's `DOWNLOAD_DIR`).
pub const DOWNLOAD_DIR_NAME: &str = "download";

/// What one task needs from the agent.
pub(crate) struct TaskContext<'a> {
    /// The machine this Scout serves.
    pub agent_machine: &'a str,
    pub settings: &'a ScoutSettings,
    pub http: &'a reqwest::Client,
    /// What the task is doing right now, for heartbeats.
    pub phase: &'a watch::Sender<String>,
    /// Told when the script is about to start and when it started (the task record).
    pub on_script: &'a (dyn Fn(ScriptEvent) + Sync),
}

/// Carry out `task`. `Err` only when the agent itself failed; every failure of the task is an
/// `Ok` result with `success: false`.
pub(crate) async fn execute(cx: &TaskContext<'_>, task: &ScoutTask) -> Result<ScoutResult, ScoutError> {
    match run(cx, task).await {
        Ok(result) => Ok(result),
        Err(StepError::Task(failure)) => {
            tracing::warn!(error = %failure, "upgrade failed before the script ran");
            Ok(not_run(&failure))
        }
        Err(StepError::Agent(err)) => Err(err),
    }
}

async fn run(cx: &TaskContext<'_>, task: &ScoutTask) -> Result<ScoutResult, StepError> {
    check_task(cx.agent_machine, task)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    crate::signature::check(cx.settings.trusted_key.as_ref(), cx.settings.allow_unsigned, task, now_ms)?;
    let workdir = create_workdir(&cx.settings.work_root, &task.upgrade_task_id)?;
    tracing::info!(workdir = %workdir.path().display(), "working directory created");
    let result = run_in(cx, task, workdir.path()).await;
    let path = workdir.path().to_path_buf();
    match tokio::task::spawn_blocking(move || workdir.close()).await {
        Ok(Ok(())) => tracing::debug!(workdir = %path.display(), "working directory removed"),
        Ok(Err(e)) => tracing::warn!(workdir = %path.display(), error = %e, "could not remove the working directory"),
        Err(e) => tracing::warn!(workdir = %path.display(), error = %e, "working directory removal did not finish"),
    }
    result
}

async fn run_in(cx: &TaskContext<'_>, task: &ScoutTask, workdir: &Path) -> Result<ScoutResult, StepError> {
    let download_dir = workdir.join(DOWNLOAD_DIR_NAME);
    std::fs::create_dir(&download_dir)
        .map_err(|source| ScoutError::LocalFile { path: download_dir.clone(), source })?;

    let script_path = workdir.join(&task.script.file_name);
    let script_policy = FetchPolicy {
        try_timeout: Some(cx.settings.script_download_try_timeout),
        overall_timeout: None,
        tries: cx.settings.download_tries,
        first_backoff: cx.settings.download_first_backoff,
    };
    cx.phase.send_replace(format!("downloading {}", task.script.file_name));
    fetch_verified(cx.http, &task.script, &script_path, &script_policy).await?;

    let artifact_policy = FetchPolicy {
        try_timeout: None,
        overall_timeout: Some(Duration::from_secs(task.artifact_download_timeout_secs)),
        ..script_policy
    };
    for artifact in &task.artifacts {
        cx.phase.send_replace(format!("downloading {}", artifact.file_name));
        fetch_verified(cx.http, artifact, &download_dir.join(&artifact.file_name), &artifact_policy).await?;
    }

    cx.phase.send_replace(format!("running {}", task.script.file_name));
    let run = hostfw_script_runner::run(ScriptSpec {
        on_event: cx.on_script,
        script: &script_path,
        via_sh: true,
        workdir: Some(workdir),
        env: vec![
            ("DOWNLOAD_DIR", download_dir.to_string_lossy().into_owned()),
            ("COMPONENT_TYPE", task.component.as_str().to_string()),
            ("TARGET_VERSION", task.target_version.clone()),
            ("MACHINE_ID", task.machine_id.clone()),
        ]
        .into_iter()
        .chain(cx.settings.script_env.iter().cloned())
        .collect(),
        timeout: Duration::from_secs(task.execution_timeout_secs),
        hard_deadline: None,
        output_limit: SCOUT_OUTPUT_LIMIT,
        secrets: Vec::new(),
        run_as: None,
        drain_grace: cx.settings.output_drain_grace,
    })
    .await
    .map_err(|e| match e {
        ScriptError::Spawn { source, .. } => ScoutError::Spawn { script: script_path.clone(), source },
        ScriptError::Wait { source, .. } => ScoutError::Wait { script: script_path.clone(), source },
    })?;
    let (exit_code, error) = match run.ending {
        Ending::Exited(code) => (Some(code), None),
        Ending::Signalled(signal) => (None, Some(TaskFailure::ScriptKilled { signal })),
        Ending::TimedOut => (None, Some(TaskFailure::ScriptTimedOut { seconds: task.execution_timeout_secs })),
    };
    let success = exit_code == Some(0);
    tracing::info!(success, ?exit_code, error = ?error.as_ref().map(ToString::to_string), "upgrade finished");
    Ok(ScoutResult { success, exit_code, stdout: run.stdout, stderr: run.stderr, error: error.map(|e| e.to_string()) })
}

/// The result of a task that failed before (or instead of) running its script.
fn not_run(failure: &TaskFailure) -> ScoutResult {
    ScoutResult {
        success: false,
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        error: Some(failure.to_string()),
    }
}

/// Refuse tasks for another host, and tasks whose files or timeouts make no sense.
fn check_task(agent_machine: &str, task: &ScoutTask) -> Result<(), TaskFailure> {
    if task.machine_id != agent_machine {
        return Err(TaskFailure::WrongMachine {
            task_machine: task.machine_id.clone(),
            agent_machine: agent_machine.to_string(),
        });
    }
    let bad = |problem: String| TaskFailure::BadTask { problem };
    if task.execution_timeout_secs == 0 {
        return Err(bad("execution_timeout_secs is 0".to_string()));
    }
    if task.artifact_download_timeout_secs == 0 && !task.artifacts.is_empty() {
        return Err(bad("artifact_download_timeout_secs is 0".to_string()));
    }
    for file in std::iter::once(&task.script).chain(&task.artifacts) {
        check_file(file).map_err(|e| bad(e.to_string()))?;
    }
    if task.script.file_name == DOWNLOAD_DIR_NAME {
        return Err(bad(format!("the script may not be named {DOWNLOAD_DIR_NAME:?}")));
    }
    let mut names = HashSet::new();
    for file in &task.artifacts {
        if !names.insert(file.file_name.as_str()) {
            return Err(bad(format!("two artifacts are named {:?}", file.file_name)));
        }
    }
    Ok(())
}

/// A file name must be a plain name (it is joined to our directories) and the digest 64 hex digits.
fn check_file(file: &ScoutFile) -> Result<(), BadFile> {
    let name = file.file_name.as_str();
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(BadFile::Name(name.to_string()));
    }
    if file.sha256.len() != 64 || !file.sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(BadFile::Digest { name: name.to_string(), sha256: file.sha256.clone() });
    }
    Ok(())
}

/// A file of a task that Scout refuses before downloading anything.
#[derive(Debug, thiserror::Error)]
enum BadFile {
    #[error("file name {0:?} is not a plain file name")]
    Name(String),
    #[error("sha256 of {name} ({sha256:?}) is not 64 hex digits")]
    Digest { name: String, sha256: String },
}

/// A fresh directory for one task, named after it (`scout-<task id>-XXXXXX`).
fn create_workdir(root: &Path, task_id: &str) -> Result<TempDir, ScoutError> {
    let safe_id: String = task_id
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    tempfile::Builder::new()
        .prefix(&format!("scout-{safe_id}-"))
        .tempdir_in(root)
        .map_err(|source| ScoutError::WorkDir { root: root.to_path_buf(), source })
}
