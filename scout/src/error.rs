//! Scout's two kinds of failure, kept apart because they go different ways: [`ScoutError`], the
//! agent's own trouble (an `Err` of the activity, retried by Temporal), and [`TaskFailure`], why
//! one upgrade failed (reported in `ScoutResult::error`; retrying it cannot help).

use std::io;
use std::path::PathBuf;

/// The agent itself could not do its job (local disk, process spawning, HTTP client setup).
#[derive(Debug, thiserror::Error)]
pub enum ScoutError {
    #[error("creating a working directory under {root}", root = root.display())]
    WorkDir {
        root: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing {path}", path = path.display())]
    LocalFile {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("starting `sh {script}`", script = script.display())]
    Spawn {
        script: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("waiting for `sh {script}`", script = script.display())]
    Wait {
        script: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("task record {path}: {problem}", path = path.display())]
    Ledger { path: PathBuf, problem: String },
    #[error("building the HTTP client")]
    HttpClient {
        #[source]
        source: reqwest::Error,
    },
}

/// Why one upgrade task failed; its text is what the workflow sees in `ScoutResult::error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskFailure {
    #[error("task for machine {task_machine} reached the Scout of machine {agent_machine}; not running it")]
    WrongMachine { task_machine: String, agent_machine: String },
    #[error("invalid task: {problem}")]
    BadTask { problem: String },
    #[error("scout package {package} refused: {problem}; nothing was downloaded or run")]
    Unsigned { package: String, problem: String },
    #[error("sha256 mismatch for {file_name}: expected {expected}, got {actual}")]
    Digest { file_name: String, expected: String, actual: String },
    #[error("download of {file_name} from {url} failed after {tries} tries: {problem}")]
    Download { file_name: String, url: String, tries: u32, problem: String },
    #[error("download of {file_name} from {url} timed out after {seconds} s")]
    DownloadTimedOut { file_name: String, url: String, seconds: u64 },
    #[error("timed out after {seconds} s")]
    ScriptTimedOut { seconds: u64 },
    #[error("script killed by signal {signal}")]
    ScriptKilled { signal: i32 },
}

/// A step of a task either fails the task or fails the agent.
#[derive(Debug)]
pub(crate) enum StepError {
    Task(TaskFailure),
    Agent(ScoutError),
}

impl From<TaskFailure> for StepError {
    fn from(f: TaskFailure) -> Self {
        StepError::Task(f)
    }
}

impl From<ScoutError> for StepError {
    fn from(e: ScoutError) -> Self {
        StepError::Agent(e)
    }
}
