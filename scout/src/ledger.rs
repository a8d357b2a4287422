//! The task ledger: a small durable record per upgrade task id in Scout's state directory, so a
//! retried activity (Temporal retries the Scout activity; a script is not idempotent) never runs
//! a task's script a second time and reports what the first run did.
//!
//! Owns the record (`<state_dir>/<task id>.json`: which agent took the task, the script's process
//! once started, and the result once finished) and writing it atomically (temporary file, fsync,
//! rename, fsync of the directory), so a crash leaves either the old or the new record.

use std::io::Write;
use std::path::{Path, PathBuf};

use hostfw_workflows::scout::ScoutResult;
use serde::{Deserialize, Serialize};

use crate::error::ScoutError;
use crate::process::ProcessId;

/// What is known about one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    /// The agent process that took the task, and its instance (one per `ScoutActivitiesImpl`).
    pub agent: Option<ProcessId>,
    pub agent_instance: String,
    /// Set right before the script is spawned: from then on it may be running.
    pub spawning: bool,
    /// The script's process (its group leader), once started.
    pub script: Option<ProcessId>,
    /// When the script's execution timeout ends (unix ms), once started.
    pub deadline_ms: Option<i64>,
    /// Set when the task is over: what every later attempt reports.
    pub result: Option<ScoutResult>,
}

/// The records of one state directory.
#[derive(Debug, Clone)]
pub struct Ledger {
    dir: PathBuf,
}

impl Ledger {
    pub fn new(dir: impl Into<PathBuf>) -> Ledger {
        Ledger { dir: dir.into() }
    }

    fn path(&self, task_id: &str) -> PathBuf {
        // Task ids are UUIDs; anything else is made a safe, still distinct, file name.
        let safe: String = task_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_string() } else { format!("%{:x}", c as u32) })
            .collect();
        self.dir.join(format!("{safe}.json"))
    }

    /// The record of `task_id`, if any.
    pub fn read(&self, task_id: &str) -> Result<Option<TaskRecord>, ScoutError> {
        let path = self.path(task_id);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| ScoutError::Ledger { path, problem: e.to_string() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ScoutError::Ledger { path, problem: e.to_string() }),
        }
    }

    /// Write `record` atomically.
    pub fn write(&self, record: &TaskRecord) -> Result<(), ScoutError> {
        let path = self.path(&record.task_id);
        let fail = |e: std::io::Error| ScoutError::Ledger { path: path.clone(), problem: e.to_string() };
        std::fs::create_dir_all(&self.dir).map_err(fail)?;
        let body = serde_json::to_vec_pretty(record).expect("a task record serializes");
        let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
        let mut file = std::fs::File::create(&tmp).map_err(fail)?;
        file.write_all(&body).and_then(|()| file.sync_all()).map_err(fail)?;
        std::fs::rename(&tmp, &path).map_err(fail)?;
        sync_dir(&self.dir).map_err(fail)
    }

    /// Forget `task_id` (a task that failed in the agent before its script started, so that a
    /// retry runs it).
    pub fn remove(&self, task_id: &str) -> Result<(), ScoutError> {
        let path = self.path(task_id);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ScoutError::Ledger { path, problem: e.to_string() }),
        }
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}
