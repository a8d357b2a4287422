//! What `site-explorer get-report managed-host` shows of a stored report: every inventory member
//! and every component with a default, reported against desired, each value quoted exactly as
//! sent (so a trailing space, an NBSP or a zero-width character shows), and for a member whose
//! version is unknown the reason "version not reported".
//!
//! Owns the get-report view (its JSON shape and its text lines). It must not decide drift: the
//! status of each component comes from `hostfw_model::drift`.

use hostfw_model::VERSION_NOT_REPORTED;
use hostfw_model::{drift, ComponentType, DriftKind, HostModel, InventoryMember, InventoryReport, UnknownVersion};
use serde::Serialize;

/// One inventory member as get-report shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemberView {
    pub id: String,
    /// The `Version` exactly as the BMC sent it (`""` when absent or null).
    pub reported: String,
    /// Why the version is not known; absent when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_unknown: Option<UnknownVersion>,
}

impl MemberView {
    pub fn of(m: &InventoryMember) -> MemberView {
        MemberView {
            id: m.id.clone(),
            reported: m.raw_version().to_string(),
            version_unknown: m.version_unknown.clone(),
        }
    }

    /// `"2.3.5"`, or `(none)` for an absent or null `Version`.
    pub fn value(&self) -> String {
        if self.reported.is_empty() && self.version_unknown == Some(UnknownVersion::Missing) {
            "(none)".to_string()
        } else {
            quote(&self.reported)
        }
    }

    /// `version not reported: placeholder Version` for an unknown version, else empty.
    pub fn note(&self) -> String {
        self.version_unknown.as_ref().map(|why| format!("{VERSION_NOT_REPORTED}: {why}")).unwrap_or_default()
    }
}

/// A component's standing against its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ComponentStatus {
    #[serde(rename = "compliant")]
    Compliant,
    #[serde(rename = "drifted")]
    Drifted,
    #[serde(rename = "no inventory match")]
    NoInventoryMatch,
    /// Neither drifted nor compliant: a matching member does not report its version.
    #[serde(rename = "version not reported")]
    VersionNotReported,
}

impl ComponentStatus {
    fn mark(self) -> &'static str {
        match self {
            ComponentStatus::Compliant => "ok",
            ComponentStatus::Drifted | ComponentStatus::NoInventoryMatch => "DRIFT",
            ComponentStatus::VersionNotReported => VERSION_NOT_REPORTED,
        }
    }
}

/// One component with a default: desired, the matching members, and its status.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComponentView {
    pub component: ComponentType,
    pub desired: String,
    pub status: ComponentStatus,
    pub members: Vec<MemberView>,
}

impl ComponentView {
    /// `uefi: "2.1.0" / "2.3.5"  [DRIFT]`, `bmc: (none) (no Version) / "7.10.30.00"  [version not reported]`.
    pub fn line(&self) -> String {
        let reported = if self.members.is_empty() {
            "no matching entry".to_string()
        } else {
            let each: Vec<String> = self
                .members
                .iter()
                .map(|m| match &m.version_unknown {
                    None => m.value(),
                    Some(why) => format!("{} ({why})", m.value()),
                })
                .collect();
            each.join(", ")
        };
        format!("{}: {reported} / {}  [{}]", self.component, quote(&self.desired), self.status.mark())
    }
}

/// Every component of `model` with a default, in `ComponentType` order.
pub fn components(model: &HostModel, report: &InventoryReport) -> Vec<ComponentView> {
    let d = drift(model, report);
    d.desired
        .iter()
        .map(|(component, desired)| {
            let status = match d.differences.iter().find(|x| x.component == *component).map(|x| &x.kind) {
                Some(DriftKind::Differs) => ComponentStatus::Drifted,
                Some(DriftKind::NoInventoryMatch { .. }) => ComponentStatus::NoInventoryMatch,
                None if d.not_reported.iter().any(|x| x.component == *component) => ComponentStatus::VersionNotReported,
                None => ComponentStatus::Compliant,
            };
            let members = model
                .components
                .get(component)
                .map(|c| report.matching(&c.current_version_reported_as).map(MemberView::of).collect())
                .unwrap_or_default();
            ComponentView { component: *component, desired: desired.clone(), status, members }
        })
        .collect()
}

/// `value` in double quotes with every invisible or non-ASCII character escaped (`"2.3.5\u{a0}"`).
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quoting_shows_invisible_characters() {
        assert_eq!(quote("2.3.5"), "\"2.3.5\"");
        assert_eq!(quote("2.3.5 "), "\"2.3.5 \"");
        assert_eq!(quote("2.3.5\u{a0}"), "\"2.3.5\\u{a0}\"");
        assert_eq!(quote("2.3\u{200b}.5\t"), "\"2.3\\u{200b}.5\\u{9}\"");
        assert_eq!(quote("a\"b\\"), "\"a\\\"b\\\\\"");
    }
}
