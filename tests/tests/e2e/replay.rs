//! Determinism guard: every recorded history in `tests/histories/` must replay on the current
//! workflow code. A change that alters the commands a workflow issues fails here; register such
//! changes in `workflows/src/versions.rs` and record a new history (see docs/workflow-versions.md). The registry and the histories' patch markers agree (each entry pinned).
//!
//! Histories are recorded by the end-to-end tests with `HOSTFW_RECORD_HISTORIES=1`.

use std::path::{Path, PathBuf};

use hostfw_workflows::{
    HostReprovisionWorkflow, MachineUpdateManagerWorkflow, SiteExplorerWorkflow, SiteNotifierWorkflow,
};
use temporalio_client::WorkflowHistory;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::workflow_replayer::{WorkflowReplayFailure, WorkflowReplayer, WorkflowReplayerOptions};
use temporalio_sdk::{WorkflowContext, WorkflowResult};

fn histories() -> Vec<(PathBuf, WorkflowHistory)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("histories");
    // Recorded on the 1.0 code and after; pre-1.0 histories do not replay on 1.0 (see
    // `hostfw_workflows::versions`).
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let history = WorkflowHistory::from_json(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, history)
        })
        .collect()
}

#[tokio::test]
async fn recorded_histories_replay_on_current_code() {
    let histories = histories();
    assert!(histories.len() >= 12, "expected the recorded fixtures, found {}", histories.len());
    let options = WorkflowReplayerOptions::new()
        .register_workflow::<HostReprovisionWorkflow>()
        .and_then(|o| o.register_workflow::<MachineUpdateManagerWorkflow>())
        .and_then(|o| o.register_workflow::<SiteExplorerWorkflow>())
        .and_then(|o| o.register_workflow::<SiteNotifierWorkflow>())
        .unwrap()
        .build();
    let replayer = WorkflowReplayer::new(options).unwrap();
    let names: Vec<PathBuf> = histories.iter().map(|(p, _)| p.clone()).collect();
    let results = replayer.replay_workflows(histories.into_iter().map(|(_, h)| h)).await.unwrap();
    for (path, result) in names.iter().zip(results) {
        assert!(result.replay_failure.is_none(), "{}: {:?}", path.display(), result.replay_failure);
    }
}

/// The registry of workflow changes (`workflows/src/versions.rs`) and the recorded histories
/// agree: every entry's `pinned_by` histories exist and carry its marker, and every marker in a
/// history is a registered change.
#[test]
fn every_registered_change_is_pinned_by_a_recorded_history() {
    use hostfw_workflows::versions::REGISTRY;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("histories");
    for entry in REGISTRY {
        for file in entry.pinned_by {
            let path = dir.join(file);
            let text =
                std::fs::read(&path).unwrap_or_else(|e| panic!("{:?} pinned by {}: {e}", entry.change, path.display()));
            let history: serde_json::Value = serde_json::from_slice(&text).unwrap();
            assert!(
                hostfw_tests::history::patch_markers(&history).iter().any(|id| id == entry.id),
                "{}: no {:?} marker, yet {:?} names it in pinned_by",
                path.display(),
                entry.id,
                entry.change
            );
        }
    }
    for (path, _) in histories() {
        let history: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for id in hostfw_tests::history::patch_markers(&history) {
            assert!(
                REGISTRY.iter().any(|e| e.id == id),
                "{}: marker {id:?} is not in workflows/src/versions.rs",
                path.display()
            );
        }
    }
}

/// A workflow registered under the same wire name that skips every step: replaying a real history
/// on it must be reported as nondeterminism. This proves the guard above can fail.
#[workflow]
#[derive(Default)]
pub struct ChangedHostReprovision;

#[workflow_methods]
impl ChangedHostReprovision {
    #[run(name = "HostReprovision")]
    pub async fn run(_ctx: &mut WorkflowContext<Self>, _input: serde_json::Value) -> WorkflowResult<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_changed_workflow_is_caught_as_nondeterministic() {
    let (path, history) = histories().into_iter().next().expect("a recorded history");
    let options = WorkflowReplayerOptions::new().register_workflow::<ChangedHostReprovision>().unwrap().build();
    let replayer = WorkflowReplayer::new(options).unwrap();
    let results = replayer.replay_workflows([history]).await.unwrap();
    match &results[0].replay_failure {
        Some(WorkflowReplayFailure::Nondeterminism { .. }) => {}
        other => panic!("{}: expected nondeterminism, got {other:?}", path.display()),
    }
}
