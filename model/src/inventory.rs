//! Firmware inventory as read from a BMC: the reported side of drift.
//!
//! Owns the plain data types that the Redfish client produces, the site database stores and the
//! rules in this crate read, and the one constructor that turns a member's reported `Version` and
//! `Status.State` into a known or unknown version (`InventoryMember::reported`; the representation
//! is justified in `reported_version`). It must not know how the inventory was fetched or where it
//! is stored.

use serde::{Deserialize, Serialize};

use crate::reported_version::{classify, UnknownVersion};

/// One member of the BMC's `UpdateService/FirmwareInventory` collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InventoryMember {
    /// The member's Redfish `Id` (what `current_version_reported_as` matches against).
    pub id: String,
    /// The member's `Name`, when the BMC reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The reported `Version` without surrounding whitespace (versions are opaque strings, never
    /// parsed); `""` when absent or null. Compared only when `version_unknown` is `None`.
    pub version: String,
    /// The `Version` exactly as the BMC sent it, when that differs from `version` (surrounding
    /// whitespace); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_raw: Option<String>,
    /// Why `version` is not a known version ("version not reported"); `None` when it is one.
    /// Set when the member is read from the BMC (`InventoryMember::reported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_unknown: Option<UnknownVersion>,
    /// The member's `@odata.id`, usable as an update target.
    pub odata_id: String,
    /// The version of an image the BMC holds staged for this member until its activation (a
    /// SoftwareInventory entry with `Staged: true` whose `Links.StagedTargets` names this member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_version: Option<String>,
}

impl InventoryMember {
    /// A member as the BMC reported it: `version` as sent (`None` when absent or null) and its
    /// `Status.State`, classified by `reported_version::classify`, surrounding whitespace removed
    /// (the text as sent is kept in `version_raw` when that changed it). No name, nothing staged.
    pub fn reported(
        id: impl Into<String>,
        odata_id: impl Into<String>,
        version: Option<&str>,
        state: Option<&str>,
    ) -> InventoryMember {
        let raw = version.unwrap_or_default();
        let trimmed = raw.trim();
        InventoryMember {
            id: id.into(),
            name: None,
            version: trimmed.to_string(),
            version_raw: (trimmed != raw).then(|| raw.to_string()),
            version_unknown: classify(version, state),
            odata_id: odata_id.into(),
            staged_version: None,
        }
    }

    /// The version to compare, or `None` when it is not known ("version not reported").
    pub fn known_version(&self) -> Option<&str> {
        match self.version_unknown {
            None => Some(self.version.as_str()),
            Some(_) => None,
        }
    }

    /// The `Version` as the BMC sent it (`""` when absent or null).
    pub fn raw_version(&self) -> &str {
        self.version_raw.as_deref().unwrap_or(&self.version)
    }
}

/// What one exploration of a host's BMC found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InventoryReport {
    /// BMC vendor as reported by the ComputerSystem `Manufacturer` (e.g. "Dell", "Nvidia").
    pub vendor: String,
    /// Host model as reported by the ComputerSystem `Model` (e.g. "PowerEdge R760").
    pub model: String,
    /// ComputerSystem `SerialNumber`, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// ComputerSystem `PowerState`, when reported ("On", "Off", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_state: Option<String>,
    /// Every firmware inventory member, in the order the BMC listed them.
    pub members: Vec<InventoryMember>,
}

impl InventoryReport {
    /// True when at least one member matches and every matching member runs `target` or holds it
    /// staged, with at least one only staged: the image is on the BMC and waits for activation.
    /// A member whose version is unknown does not run `target`.
    pub fn staged_at(&self, matcher: &crate::matcher::Matcher, target: &str) -> bool {
        let mut any_staged = false;
        let mut any = false;
        for m in self.matching(matcher) {
            any = true;
            if m.known_version() == Some(target) {
                continue;
            }
            if m.staged_version.as_deref() == Some(target) {
                any_staged = true;
                continue;
            }
            return false;
        }
        any && any_staged
    }

    /// The members whose `Id` the matcher matches, in report order.
    pub fn matching<'a>(
        &'a self,
        matcher: &'a crate::matcher::Matcher,
    ) -> impl Iterator<Item = &'a InventoryMember> + 'a {
        self.members.iter().filter(move |m| matcher.is_match(&m.id))
    }
}
