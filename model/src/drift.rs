//! Drift: does a host's reported firmware equal its catalog model's default versions?
//!
//! Equality-based (seed "Drift detection"): a component drifts when any matching inventory member
//! reports a version other than the default (older, newer or formatted differently; versions are
//! opaque strings, surrounding whitespace is not part of them) or when no member matches at all
//! (reported as such, so callers can say so instead of churning). A member whose version is
//! unknown (`reported_version`) is left out of the comparison: a component where no known version
//! differs but some member's is unknown is neither drifted nor compliant, it is reported as
//! "version not reported" (`Drift::not_reported`). Components without a managed default are
//! ignored. Unlike NICo, *all* matching members count, not just the first. Must not choose what to
//! install (see `selection`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::component::ComponentType;
use crate::host_model::HostModel;
use crate::inventory::{InventoryMember, InventoryReport};
use crate::reported_version::UnknownVersion;

/// For each component with a default: the versions of all matching members, in report order
/// (`""` or a placeholder text for a member whose version is unknown). Components with no
/// matching member are absent.
pub fn reported_versions(model: &HostModel, report: &InventoryReport) -> BTreeMap<ComponentType, Vec<String>> {
    let mut out = BTreeMap::new();
    for (&component, c) in &model.components {
        if model.default_entry(component).is_none() {
            continue;
        }
        let versions: Vec<String> =
            report.matching(&c.current_version_reported_as).map(|m| m.version.clone()).collect();
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

/// A matching member whose version is unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownMember {
    /// The member's `Id`.
    pub id: String,
    /// The `Version` as the BMC sent it (`""` when absent or null).
    pub raw_version: String,
    pub reason: UnknownVersion,
}

impl UnknownMember {
    pub(crate) fn of(m: &InventoryMember) -> Option<UnknownMember> {
        m.version_unknown.as_ref().map(|reason| UnknownMember {
            id: m.id.clone(),
            raw_version: m.raw_version().to_string(),
            reason: reason.clone(),
        })
    }
}

/// `BMC_0: no Version`, `BIOS_0 "Not Present": placeholder Version` (the text as sent, quoted).
impl fmt::Display for UnknownMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.raw_version.is_empty() && self.reason == UnknownVersion::Missing {
            write!(f, "{}: {}", self.id, self.reason)
        } else {
            write!(f, "{} {:?}: {}", self.id, self.raw_version, self.reason)
        }
    }
}

/// A component that is neither drifted nor compliant: no matching member reports a version other
/// than the default, and at least one does not report its version ("version not reported").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotReportedComponent {
    pub component: ComponentType,
    pub desired: String,
    /// The matching members whose version is unknown, in report order.
    pub members: Vec<UnknownMember>,
}

/// `uefi (BIOS_0 "Not Present": placeholder Version)`.
impl fmt::Display for NotReportedComponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let members: Vec<String> = self.members.iter().map(ToString::to_string).collect();
        write!(f, "{} ({})", self.component, members.join(", "))
    }
}

/// Desired against reported, per component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    pub desired: BTreeMap<ComponentType, String>,
    pub reported: BTreeMap<ComponentType, Vec<String>>,
    /// Drifted components in `ComponentType` order.
    pub differences: Vec<ComponentDrift>,
    /// Components left out of drift because a version is not reported, in `ComponentType` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_reported: Vec<NotReportedComponent>,
}

impl Drift {
    pub fn is_drifted(&self) -> bool {
        !self.differences.is_empty()
    }

    /// Nothing drifted and every version reported.
    pub fn is_compliant(&self) -> bool {
        !self.is_drifted() && self.not_reported.is_empty()
    }
}

/// One component's matching members against its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ComponentCheck {
    /// No member matches.
    NoMember,
    /// Some member's known version is not the default.
    Differs,
    /// No known version differs; these members' versions are unknown.
    NotReported(Vec<UnknownMember>),
    /// Every member reports the default.
    Compliant,
}

/// The one comparison rule of drift and selection (see the module doc).
pub(crate) fn check_component<'a>(members: impl Iterator<Item = &'a InventoryMember>, desired: &str) -> ComponentCheck {
    let mut any = false;
    let mut unknown = Vec::new();
    for m in members {
        any = true;
        match m.known_version() {
            Some(v) if v != desired => return ComponentCheck::Differs,
            Some(_) => {}
            None => unknown.extend(UnknownMember::of(m)),
        }
    }
    if !any {
        ComponentCheck::NoMember
    } else if unknown.is_empty() {
        ComponentCheck::Compliant
    } else {
        ComponentCheck::NotReported(unknown)
    }
}

/// Compares `report` with `model`'s defaults.
pub fn drift(model: &HostModel, report: &InventoryReport) -> Drift {
    let desired = model.desired_versions();
    let reported = reported_versions(model, report);
    let mut differences = Vec::new();
    let mut not_reported = Vec::new();
    for (&component, c) in &model.components {
        let Some(want) = desired.get(&component) else {
            continue;
        };
        let kind = match check_component(report.matching(&c.current_version_reported_as), want) {
            ComponentCheck::NoMember => {
                DriftKind::NoInventoryMatch { matcher: c.current_version_reported_as.as_str().to_string() }
            }
            ComponentCheck::Differs => DriftKind::Differs,
            ComponentCheck::NotReported(members) => {
                not_reported.push(NotReportedComponent { component, desired: want.clone(), members });
                continue;
            }
            ComponentCheck::Compliant => continue,
        };
        differences.push(ComponentDrift {
            component,
            desired: want.clone(),
            reported: reported.get(&component).cloned().unwrap_or_default(),
            kind,
        });
    }
    Drift { desired, reported, differences, not_reported }
}
