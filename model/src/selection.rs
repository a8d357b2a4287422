//! Component selection and verification for one host (seed "Update workflow" steps 3 and 5).
//!
//! Selection walks `effective_ordering()` and picks the FIRST component with a managed default
//! (pre-ingestion-only entries excluded) for which ANY matching inventory member differs from the
//! default. A component whose matcher finds no member stops the walk with `NoInventoryMatch`: the
//! caller reports it and must not loop. Verification uses the same matcher and the same "all
//! members" rule. Must not decide routes, retries or timing (workflows do).

use serde::{Deserialize, Serialize};

use crate::component::{ComponentType, FirmwareEntry};
use crate::host_model::HostModel;
use crate::inventory::InventoryReport;

/// What to do next for a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// Install `entry` (version `target_version`) on `component`; `current` are the versions of all
    /// matching members, in report order.
    Install {
        component: ComponentType,
        target_version: String,
        entry: FirmwareEntry,
        current: Vec<String>,
    },
    /// `component`'s matcher finds no inventory member: nothing can be installed or verified.
    NoInventoryMatch {
        component: ComponentType,
        matcher: String,
    },
    /// Every component with a default reports it on every matching member.
    Compliant,
}

/// Picks the next component to install (see the module doc).
pub fn select_component(model: &HostModel, report: &InventoryReport) -> Selection {
    for component in model.effective_ordering() {
        let (Some(c), Some(entry)) = (
            model.components.get(&component),
            model.default_entry(component),
        ) else {
            continue;
        };
        let current: Vec<String> = report
            .matching(&c.current_version_reported_as)
            .map(|m| m.version.clone())
            .collect();
        if current.is_empty() {
            return Selection::NoInventoryMatch {
                component,
                matcher: c.current_version_reported_as.as_str().to_string(),
            };
        }
        if current.iter().any(|v| *v != entry.version) {
            return Selection::Install {
                component,
                target_version: entry.version.clone(),
                entry: entry.clone(),
                current,
            };
        }
    }
    Selection::Compliant
}

/// Whether an installed component now reports its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verification {
    /// At least one member matches and every matching member reports the target.
    AllAtTarget,
    /// Some matching member does not report the target yet; `reported` lists every matching
    /// member as `(member id, version)`, in report order.
    Pending { reported: Vec<(String, String)> },
    /// No member matches. `matcher` is the component's regex source, or empty when the component
    /// is not (or no longer) configured for this model.
    NoInventoryMatch { matcher: String },
}

/// Checks `report` for `component` at `target` (see `Verification`).
pub fn verify(
    model: &HostModel,
    component: ComponentType,
    target: &str,
    report: &InventoryReport,
) -> Verification {
    let Some(c) = model.components.get(&component) else {
        return Verification::NoInventoryMatch {
            matcher: String::new(),
        };
    };
    let reported: Vec<(String, String)> = report
        .matching(&c.current_version_reported_as)
        .map(|m| (m.id.clone(), m.version.clone()))
        .collect();
    if reported.is_empty() {
        Verification::NoInventoryMatch {
            matcher: c.current_version_reported_as.as_str().to_string(),
        }
    } else if reported.iter().all(|(_, v)| v == target) {
        Verification::AllAtTarget
    } else {
        Verification::Pending { reported }
    }
}
