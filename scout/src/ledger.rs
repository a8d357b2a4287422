//! The task ledger: a small durable record per upgrade task id in Scout's state directory, so a
//! retried activity (Temporal retries the Scout activity; a script is not idempotent) never runs
//! a task's script a second time and reports what the first run did.
//!
//! Owns the record (`<state_dir>/<task id>.json`: which agent took the task, the script's process
//! once started, and the result once finished) and writing it atomically (temporary file, fsync,
//! rename, fsync of the directory), so a crash leaves either the old or the new record. Records
//! older than [`KEEP_RECORDS`] are pruned when an agent starts (a task's retries are long over).

use std::io::Write;
use std::path::{Path, PathBuf};

use hostfw_workflows::scout::ScoutResult;
use serde::{Deserialize, Serialize};

use std::time::Duration;

use crate::error::ScoutError;

use crate::process::ProcessId;
pub use crate::settings::KEEP_RECORDS;

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
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c.to_string()
                } else {
                    format!("%{:x}", c as u32)
                }
            })
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

impl Ledger {
    /// Remove records last written more than `keep` ago; returns how many.
    pub fn prune(&self, keep: Duration) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return 0 };
        let old = |e: &std::fs::DirEntry| {
            e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > keep)
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json") && old(e))
            .filter(|e| std::fs::remove_file(e.path()).is_ok())
            .count()
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_old_ones_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path().join("state"));
        assert_eq!(ledger.read("t/1").unwrap(), None);
        let record = TaskRecord {
            task_id: "t/1".into(),
            agent: None,
            agent_instance: "i".into(),
            spawning: false,
            script: None,
            deadline_ms: None,
            result: None,
        };
        ledger.write(&record).unwrap();
        assert_eq!(ledger.read("t/1").unwrap(), Some(record));
        assert_eq!(ledger.read("t_1").unwrap(), None, "distinct ids stay distinct files");
        assert_eq!(ledger.prune(KEEP_RECORDS), 0, "a fresh record is kept");
        assert_eq!(ledger.prune(Duration::ZERO), 1);
        assert_eq!(ledger.read("t/1").unwrap(), None);
    }
}
