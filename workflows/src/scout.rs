//! The contract between hostfw and Scout, the agent on each host: one activity, dispatched on the
//! host's own task queue, that downloads a packaged upgrade script and its artifacts, verifies
//! their SHA-256 digests, runs the script and reports the result.
//!
//! Declarations only; the implementation is the `scout` binary.

pub use crate::tunables::SCOUT_OUTPUT_LIMIT;
use hostfw_model::ComponentType;
use serde::{Deserialize, Serialize};
use temporalio_common::ActivityError;
use temporalio_macros::activity_definitions;

/// Prefix of the task queue a host's Scout polls: `scout/<machine-id>`.
pub const SCOUT_TASK_QUEUE_PREFIX: &str = "scout/";

/// The task queue of `machine_id`'s Scout.
pub fn scout_task_queue(machine_id: &str) -> String {
    format!("{SCOUT_TASK_QUEUE_PREFIX}{machine_id}")
}

/// A file Scout downloads: where from, and the SHA-256 it must have (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoutFile {
    pub url: String,
    pub sha256: String,
    /// File name to save it under in the download directory.
    pub file_name: String,
}

/// One upgrade task for Scout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoutTask {
    /// Unique per attempt; Scout uses it to name its working directory and in its logs.
    pub upgrade_task_id: String,
    pub machine_id: String,
    /// The host's vendor and model as its BMC reports them, normalised as the package directory
    /// names them (`<scripts>/<vendor>/<model>/<component>`: `Nvidia` / `DGX H100` are `nvidia` /
    /// `dgx_h100`). Scout refuses a package signed for another vendor/model. Empty in a task from
    /// a worker older than this binding (Scout then refuses it: fail closed).
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub model: String,
    pub component: ComponentType,
    /// The firmware version to install; Scout refuses a package signed for another version.
    pub target_version: String,
    /// The packaged `upgrade.sh`.
    pub script: ScoutFile,
    /// Firmware artifacts, downloaded into `DOWNLOAD_DIR` before the script runs.
    pub artifacts: Vec<ScoutFile>,
    /// The script is killed after this long.
    pub execution_timeout_secs: u64,
    /// Bound on downloading each artifact.
    pub artifact_download_timeout_secs: u64,
    /// The package's signed manifest (`upgrade.manifest`, format in `hostfw_model::scout_manifest`),
    /// verbatim; `None` for an unsigned package (tasks recorded before signing existed decode so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// `upgrade.sig`: the base64 ed25519 signature over `manifest`'s bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// What Scout reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScoutResult {
    /// True only when every digest matched and the script exited 0.
    pub success: bool,
    /// The script's exit code; None when it never ran or was killed.
    pub exit_code: Option<i32>,
    /// The last [`SCOUT_OUTPUT_LIMIT`] characters of stdout and stderr.
    pub stdout: String,
    pub stderr: String,
    /// Why it failed without an exit code: digest mismatch, download failure, timeout.
    pub error: Option<String>,
}

/// Scout's activities, as the workflow sees them.
pub struct ScoutActivities;

#[activity_definitions]
impl ScoutActivities {
    /// Download, verify, run. Runs on the host's task queue ([`scout_task_queue`]).
    #[activity(name = crate::names::ACT_SCOUT_RUN_UPGRADE)]
    pub fn run_upgrade(task: ScoutTask) -> Result<ScoutResult, ActivityError> {
        unimplemented!()
    }
}

/// Markers of the activities above, for `#[activity(definition = ...)]` in the scout crate.
pub mod scout_defs {
    pub use super::scout_activities::*;
}
