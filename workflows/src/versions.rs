//! The one registry of workflow changes: every change to what a running workflow does is an entry
//! here, numbered in the order it landed, as the site database's migrations are
//! (`store/migrations/`).
//!
//! Owns the patch ids ([`Change`], [`REGISTRY`]), the only call of the SDK's `patched`, and the
//! rule that decides when a new change activates ([`activates`]): every branch between an old
//! and a new behaviour asks [`Change::applies`]. It must not hold workflow logic beyond that
//! question.
//!
//! # 1.0
//! hostfw 1.0 is the baseline: the changes made before it (their patch ids are kept in
//! [`FOLDED_AT_1_0`], never to be used again) are folded into the code, with one history shape,
//! and the recorded histories were recorded again on it. A workflow started by a pre-1.0 build
//! does not replay on 1.0: drain or abort such runs before the upgrade (docs/deploy.md).
//!
//! # The rule for a change
//! A change that alters the commands a workflow issues (an activity, a timer, a marker, a search
//! attribute upsert, a child, their order or their options) for a history that may be running:
//! 1. add the next [`Change`] variant and its [`Entry`] at the end of [`REGISTRY`] (never renumber,
//!    never reuse an id: the ids are in stored histories);
//! 2. branch on `Change::New.applies(ctx)` where the behaviour differs, keeping the old branch
//!    (the old branch is exactly what the build before it does);
//! 3. record a history that takes the new branch (`HOSTFW_RECORD_HISTORIES=1`, see
//!    docs/workflow-versions.md) and name it in the entry's `pinned_by`; keep every old history.
//!
//! Once no run older than a change can exist at any site, the old branch may go: the call
//! becomes `deprecate_patch` (a later entry says so) and, one release after, nothing.
//!
//! # Rolling upgrades
//! A run that recorded a change's marker must never be replayed by a worker without it. So a
//! change activates on a run (its marker is written) only when the worker's
//! `[worker] workflow_changes_through` allows it ([`activates`], given to the SDK as its patch
//! activation callback): set it to the number of the build still running, roll the workers, then
//! remove it. Replay always follows the history, whatever the setting.
//!
//! The tests check that no `patched(` call bypasses the registry (below), that every entry is
//! pinned by a recorded history carrying its marker (`tests/tests/e2e/replay.rs`), and the replay
//! test replays every history on the current code; `tests/tests/e2e/worker_upgrade.rs` upgrades
//! a worker under a running rollout.
//!
//! Deterministic code only (see the crate docs).

use std::sync::OnceLock;

use temporalio_workflow::WorkflowContext;

use crate::{HostReprovisionWorkflow, MachineUpdateManagerWorkflow};

/// One change to running workflows since 1.0, by its number in [`REGISTRY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// 1: the approval wait reads the stored approval again every `approval_recheck`.
    ApprovalRecheck = 1,
}

/// What the registry says of one [`Change`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub change: Change,
    /// The patch id recorded in histories (a `core_patch` marker). Never changes.
    pub id: &'static str,
    /// The workflow type it changes.
    pub workflow: &'static str,
    /// What changed, for the reader.
    pub what: &'static str,
    /// Recorded histories (paths under `tests/histories/`) that carry its marker.
    pub pinned_by: &'static [&'static str],
}

const HOST: &str = "HostReprovision";

/// Every change since 1.0, in order: entry `n` is `Change` number `n + 1`.
pub const REGISTRY: &[Entry] = &[Entry {
    change: Change::ApprovalRecheck,
    id: "approval-recheck",
    workflow: HOST,
    what: "the approval wait reads the stored approval and the autoreboot period again every \
           `host_reprovision.approval_recheck` (default 1h) even when no signal wakes it: an approval whose \
           signal was lost starts the host within that time, without `hostfw doctor --fix` (before, it waited \
           for a signal, the period or the deadline)",
    pinned_by: &["approval-recheck.json"],
}];

/// The patch ids of the changes made before 1.0, folded into the 1.0 code. They are in no 1.0
/// history and must never name a new change.
pub const FOLDED_AT_1_0: &[&str] = &[
    "install-routes",
    "reset-during-attempt",
    "platform-failures-retry",
    "unmatched-skipped",
    "reset-while-recording-failure",
    "approval-inputs-read",
    "continue-as-new",
    "retry-limits-read",
    "cleared-is-completed",
    "exhausted-search-attribute",
    "lean-history",
    "lean-approval",
    "manager-pass-local",
    "approval-deadline",
    "infrastructure-faults-waited-out",
    "power-safety",
    "power-preflight",
    "freeze-hold",
    "abort",
];

/// The number of the newest change this build has (0: none since 1.0; under
/// [`emulate_build_through`], the emulated build's).
pub fn newest() -> u32 {
    let len = REGISTRY.len() as u32;
    BUILD_THROUGH.get().map_or(len, |&n| n.min(len))
}

/// Whether a change not yet recorded in a run may activate there now (its marker written), under
/// `[worker] workflow_changes_through` (`None`: every change of this build). A patch id outside
/// the registry (none can be asked: see the tests) activates.
pub fn activates(patch_id: &str, through: Option<u32>) -> bool {
    match (REGISTRY.iter().find(|e| e.id == patch_id), through) {
        (Some(e), Some(through)) => e.change as u32 <= through,
        _ => true,
    }
}

/// Set once per process, only by the worker-upgrade test's emulation of an older build
/// ([`emulate_build_through`]).
static BUILD_THROUGH: OnceLock<u32> = OnceLock::new();

/// Make this process behave as the build whose newest change is `n`: a change after it is
/// absent, as its code is from that build (its old branch runs and its marker is never asked
/// for). For the worker-upgrade test (`HOSTFW_EMULATE_BUILD_THROUGH_CHANGE`), which cannot build
/// two versions of the worker; never set at a site. The first call wins.
pub fn emulate_build_through(n: u32) {
    let _ = BUILD_THROUGH.set(n);
}

impl Change {
    /// Its entry in [`REGISTRY`].
    pub fn entry(self) -> &'static Entry {
        &REGISTRY[self as usize - 1]
    }

    /// Its patch id, as recorded in histories.
    pub fn id(self) -> &'static str {
        self.entry().id
    }

    /// Whether this run takes the change: its marker recorded (or, in a new run, written now if
    /// [`activates`] allows). The one place the SDK's `patched` is asked.
    pub fn applies(self, ctx: &impl Run) -> bool {
        if BUILD_THROUGH.get().is_some_and(|&n| self as u32 > n) {
            return false;
        }
        ctx.marker(self.id())
    }
}

/// A workflow run that can be asked about changes.
pub trait Run {
    /// The SDK's patch marker check (records the marker the first time in a new run, when the
    /// worker's activation callback allows).
    fn marker(&self, id: &str) -> bool;
}

impl Run for WorkflowContext<HostReprovisionWorkflow> {
    fn marker(&self, id: &str) -> bool {
        self.patched(id)
    }
}

impl Run for WorkflowContext<MachineUpdateManagerWorkflow> {
    fn marker(&self, id: &str) -> bool {
        self.patched(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_numbered_in_order_with_unique_ids() {
        let mut ids = std::collections::BTreeSet::new();
        for (n, e) in REGISTRY.iter().enumerate() {
            assert_eq!(e.change as usize, n + 1, "entry {n} is {:?}", e.change);
            assert_eq!(e.change.entry(), e);
            assert!(ids.insert(e.id), "patch id {:?} is registered twice", e.id);
            assert!(!e.pinned_by.is_empty(), "{:?} names no recorded history", e.change);
            assert!(!e.what.is_empty());
            assert!(!FOLDED_AT_1_0.contains(&e.id), "patch id {:?} was used before 1.0", e.id);
        }
    }

    #[test]
    fn a_change_activates_only_through_the_setting() {
        assert!(activates("approval-recheck", None));
        assert!(activates("approval-recheck", Some(1)));
        assert!(!activates("approval-recheck", Some(0)));
        assert_eq!(newest(), REGISTRY.len() as u32);
    }

    /// Every `patched(` call in this crate is the one in this file: a branch on a change outside
    /// the registry would be a change no history pins and no reader finds.
    #[test]
    #[allow(clippy::disallowed_methods)] // a test reading this crate's sources, not workflow code
    fn no_patch_bypasses_the_registry() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") && path != src.join("versions.rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for (n, line) in text.lines().enumerate() {
                        let code = line.split("//").next().unwrap_or("");
                        if code.contains("patched(") || code.contains("deprecate_patch(") {
                            found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
        assert!(found.is_empty(), "patch checks outside workflows/src/versions.rs:\n{}", found.join("\n"));
    }
}
