//! Component selection and verification for one host (seed "Update workflow" steps 3 and 5).
//!
//! Selection walks `effective_ordering()` and picks the FIRST component with a managed default
//! (pre-ingestion-only entries excluded) for which ANY matching inventory member differs from the
//! default (the comparison rule of `drift`). A component whose matcher finds no member cannot be
//! installed or verified: under [`UnmatchedRule::Skip`] (today's rule) it is passed over and the
//! walk goes on, so the drifted components after it are still installed; when nothing else is left
//! to install, `NotFullyInstallable` names it with its matcher. (`UnmatchedRule::Stop` is the rule
//! of workflow runs recorded before that: the walk stopped with `NoInventoryMatch`, and the host
//! burned its retries.) A component left out of
//! drift because a version is not reported is passed over (never installed: it could not be
//! verified) and named in `VersionNotReported` when nothing else is to install. Verification uses
//! the same matcher and the same "all members" rule; an unknown version never counts as the
//! target. Must not decide routes, retries or timing (workflows do).

use serde::{Deserialize, Serialize};

use crate::component::{ComponentType, FirmwareEntry};
use crate::drift::{check_component, ComponentCheck, UnknownMember};
use crate::gates::UnmatchedComponent;
use crate::host_model::HostModel;
use crate::inventory::{InventoryMember, InventoryReport};
use crate::matcher::Matcher;

/// What to do next for a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// Install `entry` (version `target_version`) on `component`; `current` are the versions of all
    /// matching members, in report order.
    Install { component: ComponentType, target_version: String, entry: FirmwareEntry, current: Vec<String> },
    /// `component`'s matcher finds no inventory member: nothing can be installed or verified.
    /// Only under [`UnmatchedRule::Stop`].
    NoInventoryMatch { component: ComponentType, matcher: String },
    /// Every component with a default reports it on every matching member.
    Compliant,
    /// Nothing to install, but these components are neither drifted nor compliant: a matching
    /// member does not report its version (in `effective_ordering()` order).
    VersionNotReported { components: Vec<ComponentType> },
    /// Nothing more can be installed, but `unmatched` components find no inventory member (their
    /// typed reason: the matcher), so the host cannot be brought fully to the catalog. Components
    /// in `not_reported` do not report a version either. Only under [`UnmatchedRule::Skip`].
    NotFullyInstallable { unmatched: Vec<UnmatchedComponent>, not_reported: Vec<ComponentType> },
}

/// What the walk does at a component whose matcher finds no inventory member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnmatchedRule {
    /// Pass over it and go on (see the module doc).
    Skip,
    /// Stop the walk with `NoInventoryMatch` (workflow runs recorded before the skip).
    Stop,
}

/// Picks the next component to install, passing over unmatched components (see the module doc).
pub fn select_component(model: &HostModel, report: &InventoryReport) -> Selection {
    select_with(model, report, UnmatchedRule::Skip)
}

/// Picks the next component to install under `rule`.
pub fn select_with(model: &HostModel, report: &InventoryReport, rule: UnmatchedRule) -> Selection {
    let mut not_reported = Vec::new();
    let mut unmatched = Vec::new();
    for component in model.effective_ordering() {
        let (Some(c), Some(entry)) = (model.components.get(&component), model.default_entry(component)) else {
            continue;
        };
        let matching = || report.matching(&c.current_version_reported_as);
        match check_component(matching(), &entry.version) {
            ComponentCheck::NoMember => {
                let matcher = c.current_version_reported_as.as_str().to_string();
                match rule {
                    UnmatchedRule::Stop => return Selection::NoInventoryMatch { component, matcher },
                    UnmatchedRule::Skip => unmatched.push(UnmatchedComponent { component, matcher }),
                }
            }
            ComponentCheck::Differs => {
                return Selection::Install {
                    component,
                    target_version: entry.version.clone(),
                    entry: entry.clone(),
                    current: matching().map(|m| m.version.clone()).collect(),
                };
            }
            ComponentCheck::NotReported(_) => not_reported.push(component),
            ComponentCheck::Compliant => {}
        }
    }
    if !unmatched.is_empty() {
        Selection::NotFullyInstallable { unmatched, not_reported }
    } else if not_reported.is_empty() {
        Selection::Compliant
    } else {
        Selection::VersionNotReported { components: not_reported }
    }
}

/// Whether an installed component now reports its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verification {
    /// At least one matching member reports a known version, and every known version is the
    /// target. (A member whose version is unknown is not counted either way: an absent GPU slot
    /// must not fail the update of the present ones.)
    AllAtTarget,
    /// Some matching member reports another known version; `reported` lists every matching
    /// member as `(member id, version)`, in report order.
    Pending { reported: Vec<(String, String)> },
    /// Members match but none reports a known version: not a success ("version not reported").
    VersionNotReported { members: Vec<UnknownMember> },
    /// No member matches. `matcher` is the component's regex source, or empty when the component
    /// is not (or no longer) configured for this model.
    NoInventoryMatch { matcher: String },
}

/// Checks `report` for `component` at `target` (see `Verification`).
pub fn verify(model: &HostModel, component: ComponentType, target: &str, report: &InventoryReport) -> Verification {
    let Some(c) = model.components.get(&component) else {
        return Verification::NoInventoryMatch { matcher: String::new() };
    };
    verify_matching(report, &c.current_version_reported_as, target)
}

/// `verify` for the members `matcher` selects (the "already at target?" precheck has only the
/// matcher).
pub fn verify_matching(report: &InventoryReport, matcher: &Matcher, target: &str) -> Verification {
    let members: Vec<&InventoryMember> = report.matching(matcher).collect();
    if members.is_empty() {
        return Verification::NoInventoryMatch { matcher: matcher.as_str().to_string() };
    }
    let known: Vec<&str> = members.iter().filter_map(|m| m.known_version()).collect();
    if known.is_empty() {
        Verification::VersionNotReported { members: members.iter().filter_map(|m| UnknownMember::of(m)).collect() }
    } else if known.iter().all(|v| *v == target) {
        Verification::AllAtTarget
    } else {
        Verification::Pending { reported: members.iter().map(|m| (m.id.clone(), m.version.clone())).collect() }
    }
}
