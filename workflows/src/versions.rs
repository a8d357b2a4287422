//! The one registry of workflow changes: every change to what a running workflow does is an entry
//! here, numbered in the order it landed, as the site database's migrations are
//! (`store/migrations/`).
//!
//! Owns the patch ids ([`Change`], [`REGISTRY`]) and the only call of the SDK's `patched`: every
//! branch between an old and a new behaviour asks [`Change::applies`]. It must not hold workflow
//! logic beyond that question.
//!
//! # The rule for a change
//! A change that alters the commands a workflow issues (an activity, a timer, a marker, a search
//! attribute upsert, a child, their order or their options) for a history that may be running:
//! 1. add the next [`Change`] variant and its [`Entry`] at the end of [`REGISTRY`] (never renumber,
//!    never reuse an id: the ids are in stored histories);
//! 2. branch on `Change::New.applies(ctx)` where the behaviour differs, keeping the old branch;
//! 3. record a history that takes the new branch (`HOSTFW_RECORD_HISTORIES=1`, see the README's
//!    "Changing a workflow") and name it in the entry's `pinned_by`; keep every old history.
//!
//! The tests check that no `patched(` call bypasses the registry (below) and that every entry is
//! pinned by a recorded history carrying its marker (`tests/tests/e2e/replay.rs`), and the replay
//! test replays every history on the current code.
//!
//! # Lean runs
//! The host workflow's lean history shape ([`Change::LeanHistory`], `host/lean.rs`) implies the
//! changes that landed before it and that it was built on (`implied_by_lean`): a lean run takes
//! them without a marker of its own, so histories of the classic shape pin them.
//!
//! Deterministic code only (see the crate docs).

use temporalio_workflow::WorkflowContext;

use crate::{HostReprovisionWorkflow, MachineUpdateManagerWorkflow};

/// One change to running workflows, by its number in [`REGISTRY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Change {
    /// 1: the install route is chosen by an activity (Scout, script or Redfish).
    InstallRoutes = 1,
    /// 2: a reset received while an attempt runs clears the retry count.
    ResetDuringAttempt,
    /// 3: a failed platform step is a failed attempt, retried under the budget.
    PlatformFailures,
    /// 4: a component whose matcher finds no member is passed over.
    SkipUnmatched,
    /// 5: resets applied are counted before the failure is recorded.
    ResetWhileRecording,
    /// 6: the approval wait reads the stored approval and autoreboot period when it wakes.
    ApprovalInputs,
    /// 7: continue-as-new at the top of the attempt loop when the history grows large.
    ContinueAsNew,
    /// 8: the retry budget and interval are read from the current site config.
    RetryLimitsRead,
    /// 9: a run cleared while waiting for approval ends with substate Completed.
    ClearedIsCompleted,
    /// 10: `HostfwRetriesExhausted` follows the spent budget.
    ExhaustedAttribute,
    /// 11: the lean history shape.
    LeanHistory,
    /// 12: the lean approval wait (deferred record, local-activity read).
    LeanApproval,
    /// 13: the scheduler's pass runs as a local activity.
    ManagerPassLocal,
    /// 14: the approval wait keeps the request's deadline and applies its policy.
    ApprovalDeadline,
    /// 15: infrastructure faults are waited out without spending a retry.
    InfrastructureFaults,
    /// 16: a host powered off by a failed step is powered back on.
    PowerSafety,
    /// 17: the power preflight before a power action.
    PowerPreflight,
    /// 18: a host in flight holds under a freeze between components.
    FreezeHold,
    /// 19: `host reprovision abort`.
    Abort,
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
    /// A lean run (`Change::LeanHistory`) takes it without a marker.
    pub implied_by_lean: bool,
    /// Recorded histories (paths under `tests/histories/`) that carry its marker.
    pub pinned_by: &'static [&'static str],
}

const HOST: &str = "HostReprovision";
const MANAGER: &str = "MachineUpdateManager";

/// Every change, in order: entry `n` is `Change` number `n + 1`.
pub const REGISTRY: &[Entry] = &[
    Entry {
        change: Change::InstallRoutes,
        id: "install-routes",
        workflow: HOST,
        what: "the install route is chosen by an activity (Scout, Core-local script or Redfish); before, every \
               component took the Redfish route",
        implied_by_lean: false,
        pinned_by: &["classic/activation-kinds.json", "classic/scout-route.json"],
    },
    Entry {
        change: Change::ResetDuringAttempt,
        id: "reset-during-attempt",
        workflow: HOST,
        what: "a reset_reprovisioning signal received while an attempt runs clears the retry count (before, only \
               one received while the host waited in FailedFirmwareUpgrade did)",
        implied_by_lean: true,
        pinned_by: &["classic/reset-during-attempt.json"],
    },
    Entry {
        change: Change::PlatformFailures,
        id: "platform-failures-retry",
        workflow: HOST,
        what: "a platform step (protect, restore, power) that fails is a failed attempt retried under the budget, \
               not the end of the run",
        implied_by_lean: true,
        pinned_by: &["classic/assigned-platform-step-retried.json"],
    },
    Entry {
        change: Change::SkipUnmatched,
        id: "unmatched-skipped",
        workflow: HOST,
        what: "a component whose matcher finds no inventory member is passed over and the drifted components \
               after it are installed; the host ends not fully installable (before, the attempt failed there)",
        implied_by_lean: true,
        pinned_by: &["classic/unmatched-component-skipped.json"],
    },
    Entry {
        change: Change::ResetWhileRecording,
        id: "reset-while-recording-failure",
        workflow: HOST,
        what: "the resets already applied are counted before the failure is recorded, so a reset that arrives \
               meanwhile is not swallowed",
        implied_by_lean: true,
        pinned_by: &["classic/reset-while-recording-failure.json"],
    },
    Entry {
        change: Change::ApprovalInputs,
        id: "approval-inputs-read",
        workflow: HOST,
        what: "the approval wait reads the stored approval and the current autoreboot period when it wakes",
        implied_by_lean: true,
        pinned_by: &["classic/approval-read-from-request.json"],
    },
    Entry {
        change: Change::ContinueAsNew,
        id: "continue-as-new",
        workflow: HOST,
        what: "the run continues as new at the top of its attempt loop when its history grows large",
        implied_by_lean: true,
        pinned_by: &["classic/continued-as-new-run.json"],
    },
    Entry {
        change: Change::RetryLimitsRead,
        id: "retry-limits-read",
        workflow: HOST,
        what: "the retry budget and interval are read from the worker's current site config when a failure is \
               recorded and on settings_changed, not frozen into the request",
        implied_by_lean: true,
        pinned_by: &["classic/retry-limits-read-after-push.json"],
    },
    Entry {
        change: Change::ClearedIsCompleted,
        id: "cleared-is-completed",
        workflow: HOST,
        what: "a run ended by `host reprovision clear` while it waited for approval sets HostfwSubstate = \
               Completed",
        implied_by_lean: true,
        pinned_by: &["classic/cleared-before-start-completed.json"],
    },
    Entry {
        change: Change::ExhaustedAttribute,
        id: "exhausted-search-attribute",
        workflow: HOST,
        what: "the HostfwRetriesExhausted search attribute follows the spent retry budget",
        implied_by_lean: true,
        pinned_by: &["classic/exhausted-attribute-then-reset.json"],
    },
    Entry {
        change: Change::LeanHistory,
        id: "lean-history",
        workflow: HOST,
        what: "the lean history shape: substate records ride on the next activity, search attributes are \
               upserted once before each wait (host/lean.rs)",
        implied_by_lean: false,
        pinned_by: &["redfish-immediate-two-components.json", "nothing-to-update.json"],
    },
    Entry {
        change: Change::LeanApproval,
        id: "lean-approval",
        workflow: HOST,
        what: "in lean runs the WaitingForApproval record is deferred and the approval read is a local activity",
        implied_by_lean: false,
        pinned_by: &["assigned-host-approved.json"],
    },
    Entry {
        change: Change::ManagerPassLocal,
        id: "manager-pass-local",
        workflow: MANAGER,
        what: "the scheduler's pass runs as a local activity (before, an activity)",
        implied_by_lean: false,
        pinned_by: &["machine-update-manager.json"],
    },
    Entry {
        change: Change::ApprovalDeadline,
        id: "approval-deadline",
        workflow: HOST,
        what: "the approval wait keeps the request's approval deadline (a timer) and applies its policy",
        implied_by_lean: false,
        pinned_by: &["approval-deadline-escalated.json", "approval-deadline-skipped.json"],
    },
    Entry {
        change: Change::InfrastructureFaults,
        id: "infrastructure-faults-waited-out",
        workflow: HOST,
        what: "an activity lost to infrastructure (a worker gone on every attempt) is waited out without spending \
               a retry",
        implied_by_lean: false,
        pinned_by: &["activation-worker-lost-every-attempt.json"],
    },
    Entry {
        change: Change::PowerSafety,
        id: "power-safety",
        workflow: HOST,
        what: "a host a failed power step left off is powered back on before the attempt fails",
        implied_by_lean: false,
        pinned_by: &["power-drain-failed-powered-back-on.json"],
    },
    Entry {
        change: Change::PowerPreflight,
        id: "power-preflight",
        workflow: HOST,
        what: "the power preflight: a power action the BMC does not offer is refused before anything is done",
        implied_by_lean: false,
        pinned_by: &["power-preflight-refused.json", "dell-ac-cycle-without-power-off-first.json"],
    },
    Entry {
        change: Change::FreezeHold,
        id: "freeze-hold",
        workflow: HOST,
        what: "a host in flight holds under a freeze covering it before its next component",
        implied_by_lean: false,
        pinned_by: &["freeze-hold.json"],
    },
    Entry {
        change: Change::Abort,
        id: "abort",
        workflow: HOST,
        what: "`host reprovision abort`: the run stops at the next safe point and restores the host",
        implied_by_lean: false,
        pinned_by: &["abort.json"],
    },
];

impl Change {
    /// Its entry in [`REGISTRY`].
    pub fn entry(self) -> &'static Entry {
        &REGISTRY[self as usize - 1]
    }

    /// Its patch id, as recorded in histories.
    pub fn id(self) -> &'static str {
        self.entry().id
    }

    /// Whether this run takes the change: recorded (or found) as a patch marker, or implied by a
    /// lean run. The one place the SDK's `patched` is asked.
    pub fn applies(self, ctx: &impl Run) -> bool {
        (self.entry().implied_by_lean && ctx.lean()) || ctx.marker(self.id())
    }
}

/// A workflow run that can be asked about changes.
pub trait Run {
    /// The SDK's patch marker check (records the marker the first time in a new run).
    fn marker(&self, id: &str) -> bool;
    /// The run takes the lean history shape.
    fn lean(&self) -> bool;
}

impl Run for WorkflowContext<HostReprovisionWorkflow> {
    fn marker(&self, id: &str) -> bool {
        self.patched(id)
    }
    fn lean(&self) -> bool {
        crate::host::lean::on(self)
    }
}

impl Run for WorkflowContext<MachineUpdateManagerWorkflow> {
    fn marker(&self, id: &str) -> bool {
        self.patched(id)
    }
    fn lean(&self) -> bool {
        false
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
        }
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
