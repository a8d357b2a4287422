//! Drift: does a host's reported firmware equal its catalog model's default versions?
//!
//! Equality-based (seed "Drift detection"): a component drifts when any matching inventory member
//! reports a version other than the default (older, newer or formatted differently; versions are
//! opaque strings) or when no member matches at all (reported as such, so callers can say so
//! instead of churning). Components without a managed default are ignored. Unlike NICo, *all*
//! matching members count, not just the first. Must not choose what to install (see `selection`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::component::ComponentType;
use crate::host_model::HostModel;
use crate::inventory::InventoryReport;

/// For each component with a default: the versions of all matching members, in report order.
/// Components with no matching member are absent.
pub fn reported_versions(
    model: &HostModel,
    report: &InventoryReport,
) -> BTreeMap<ComponentType, Vec<String>> {
    let mut out = BTreeMap::new();
    for (&component, c) in &model.components {
        if model.default_entry(component).is_none() {
            continue;
        }
        let versions: Vec<String> = report
            .matching(&c.current_version_reported_as)
            .map(|m| m.version.clone())
            .collect();
        if !versions.is_empty() {
            out.insert(component, versions);
        }
    }
    out
}

/// Why one component counts as drifted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DriftKind {
    /// At least one matching member reports a version other than the default.
    Differs,
    /// No inventory member matches the component's matcher: nothing can be installed or verified
    /// until the matcher or the inventory is fixed.
    NoInventoryMatch { matcher: String },
}

/// One drifted component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentDrift {
    pub component: ComponentType,
    pub desired: String,
    /// Versions of all matching members (empty for `NoInventoryMatch`).
    pub reported: Vec<String>,
    pub kind: DriftKind,
}

/// Desired against reported, per component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    pub desired: BTreeMap<ComponentType, String>,
    pub reported: BTreeMap<ComponentType, Vec<String>>,
    /// Drifted components in `ComponentType` order.
    pub differences: Vec<ComponentDrift>,
}

impl Drift {
    pub fn is_drifted(&self) -> bool {
        !self.differences.is_empty()
    }
}

/// Compares `report` with `model`'s defaults.
pub fn drift(model: &HostModel, report: &InventoryReport) -> Drift {
    let desired = model.desired_versions();
    let reported = reported_versions(model, report);
    let mut differences = Vec::new();
    for (&component, c) in &model.components {
        let Some(want) = desired.get(&component) else {
            continue;
        };
        let got = reported.get(&component);
        let kind = match got {
            None => DriftKind::NoInventoryMatch {
                matcher: c.current_version_reported_as.as_str().to_string(),
            },
            Some(got) if got.iter().any(|v| v != want) => DriftKind::Differs,
            Some(_) => continue,
        };
        differences.push(ComponentDrift {
            component,
            desired: want.clone(),
            reported: got.cloned().unwrap_or_default(),
            kind,
        });
    }
    Drift {
        desired,
        reported,
        differences,
    }
}
