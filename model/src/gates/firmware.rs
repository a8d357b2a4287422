//! A host's firmware status for scheduling: not explored, exploration failed, no catalog entry,
//! compliant, version not reported (nothing differs, but some component's version is unknown:
//! neither drifted nor compliant), or drifted (with what differs, what has no inventory match,
//! what is not reported, and whether the model needs an explicit start window).
//!
//! Owns the mapping from (catalog, reported vendor/model, stored inventory, last exploration
//! error) to `FirmwareStatus`, built on `Catalog::find` and `drift::drift`. It must not compare
//! versions itself (see `drift`) nor apply any scheduling gate (see `gates::host_gates`).

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::component::ComponentType;
use crate::drift::{drift, DriftKind, NotReportedComponent};
use crate::inventory::InventoryReport;

/// A drifted component whose matcher finds no inventory member (S54): nothing to install or
/// verify until the matcher or the inventory is fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnmatchedComponent {
    pub component: ComponentType,
    /// The component's `current_version_reported_as` regex.
    pub matcher: String,
}

/// What the scheduler knows of a host's firmware.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum FirmwareStatus {
    /// No inventory report stored yet.
    NotExplored,
    /// The last exploration failed (the stored inventory, if any, is not fresh).
    ExploreFailed {
        error: String,
    },
    /// The catalog has no entry for the reported vendor/model.
    NoCatalogEntry {
        vendor: String,
        model: String,
    },
    Compliant,
    /// Nothing differs and every component matches, but these components do not report their
    /// version: neither drifted nor compliant, never started.
    VersionNotReported {
        not_reported: Vec<NotReportedComponent>,
    },
    Drifted {
        /// The catalog model has `explicit_start_needed = true`.
        explicit_start_needed: bool,
        /// Components where a matching member reports another version than the default.
        differing: Vec<ComponentType>,
        /// Components with a default but no matching inventory member.
        unmatched: Vec<UnmatchedComponent>,
        /// Components left out of drift because a version is not reported.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        not_reported: Vec<NotReportedComponent>,
    },
}

impl FirmwareStatus {
    /// Nothing to update: `Compliant`, or (hand-built) `Drifted` with no components at all.
    pub fn is_compliant(&self) -> bool {
        match self {
            FirmwareStatus::Compliant => true,
            FirmwareStatus::Drifted { differing, unmatched, not_reported, .. } => {
                differing.is_empty() && unmatched.is_empty() && not_reported.is_empty()
            }
            _ => false,
        }
    }

    /// The components whose version is not reported (empty for the other statuses).
    pub fn not_reported(&self) -> &[NotReportedComponent] {
        match self {
            FirmwareStatus::VersionNotReported { not_reported } | FirmwareStatus::Drifted { not_reported, .. } => {
                not_reported
            }
            _ => &[],
        }
    }
}

/// The firmware status of one host.
///
/// `explore_error` wins over any stored report (the inventory is not fresh). Without an error,
/// a missing vendor, model or report means not explored. `vendor`/`model` are the reported
/// names the catalog is looked up with (`Catalog::find`: trimmed, ASCII-case-insensitive).
pub fn firmware_status(
    catalog: &Catalog,
    vendor: Option<&str>,
    model: Option<&str>,
    report: Option<&InventoryReport>,
    explore_error: Option<&str>,
) -> FirmwareStatus {
    if let Some(error) = explore_error {
        return FirmwareStatus::ExploreFailed { error: error.to_string() };
    }
    let (Some(vendor), Some(model), Some(report)) = (vendor, model, report) else {
        return FirmwareStatus::NotExplored;
    };
    let Some(host_model) = catalog.find(vendor, model) else {
        return FirmwareStatus::NoCatalogEntry { vendor: vendor.to_string(), model: model.to_string() };
    };
    let d = drift(host_model, report);
    if d.is_compliant() {
        return FirmwareStatus::Compliant;
    }
    if !d.is_drifted() {
        return FirmwareStatus::VersionNotReported { not_reported: d.not_reported };
    }
    let mut differing = Vec::new();
    let mut unmatched = Vec::new();
    for c in d.differences {
        match c.kind {
            DriftKind::Differs => differing.push(c.component),
            DriftKind::NoInventoryMatch { matcher } => {
                unmatched.push(UnmatchedComponent { component: c.component, matcher })
            }
        }
    }
    FirmwareStatus::Drifted {
        explicit_start_needed: host_model.explicit_start_needed,
        differing,
        unmatched,
        not_reported: d.not_reported,
    }
}
