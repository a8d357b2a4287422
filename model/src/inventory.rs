//! Firmware inventory as read from a BMC: the reported side of drift.
//!
//! Owns the plain data types that the Redfish client produces, the site database stores and the
//! rules in this crate read. It must not know how the inventory was fetched or where it is stored.

use serde::{Deserialize, Serialize};

/// One member of the BMC's `UpdateService/FirmwareInventory` collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryMember {
    /// The member's Redfish `Id` (what `current_version_reported_as` matches against).
    pub id: String,
    /// The member's `Name`, when the BMC reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The reported `Version`, verbatim (versions are opaque strings, never parsed).
    pub version: String,
    /// The member's `@odata.id`, usable as an update target.
    pub odata_id: String,
    /// The version of an image the BMC holds staged for this member until its activation (a
    /// SoftwareInventory entry with `Staged: true` whose `Links.StagedTargets` names this member).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_version: Option<String>,
}

/// What one exploration of a host's BMC found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub fn staged_at(&self, matcher: &crate::matcher::Matcher, target: &str) -> bool {
        let mut any_staged = false;
        let mut any = false;
        for m in self.matching(matcher) {
            any = true;
            if m.version == target {
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
