//! `HostModel`: the validated catalog definition of one vendor/model, and the one identity rule
//! ("vendor and model compared trimmed and ASCII-case-insensitively") used everywhere.
//!
//! Owns the model's derived views: effective ordering, the managed default entry per component,
//! desired versions. It must not parse, merge or validate files (see `catalog`) nor read inventory
//! (see `drift`, `selection`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::component::{Component, ComponentType, FirmwareEntry};

/// True when two vendor (or model) names denote the same thing: trimmed, ASCII case ignored.
pub fn same_name(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// One vendor/model entry of the effective (merged, validated) firmware catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostModel {
    /// BMC vendor as reported by the ComputerSystem `Manufacturer` (compared with `same_name`).
    pub vendor: String,
    /// Host model as reported by the ComputerSystem `Model` (compared with `same_name`).
    pub model: String,
    /// Install order as configured; empty means "all configured components in `ComponentType`
    /// declaration order" (see `effective_ordering`).
    #[serde(default)]
    pub ordering: Vec<ComponentType>,
    /// Updates of this model need a per-machine start window.
    #[serde(default)]
    pub explicit_start_needed: bool,
    /// hostfw extension: the model is MNNVL-capable (GB200 class), so
    /// `firmware_global.requires_manual_upgrade` pauses it in `WaitingForManualUpgrade`.
    #[serde(default)]
    pub mnnvl_capable: bool,
    /// hostfw extension: where the model keeps its platform lockdown; `None` = it has none
    /// (the platform step then counts lockdown as already in the wanted state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockdown: Option<crate::lockdown::LockdownSetting>,
    /// hostfw extension: how the model's AC power cycle is done; `None` = not configured (an
    /// activation that needs a power drain is refused with that reason, never guessed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ac_cycle: Option<crate::ac_cycle::AcCycleSetting>,
    /// Configured components.
    #[serde(default)]
    pub components: BTreeMap<ComponentType, Component>,
}

impl HostModel {
    /// True when this model is the catalog entry for the reported `vendor`/`model`.
    pub fn is_for(&self, vendor: &str, model: &str) -> bool {
        same_name(&self.vendor, vendor) && same_name(&self.model, model)
    }

    /// The install order: `ordering` when non-empty, else every configured component in
    /// `ComponentType` declaration order.
    pub fn effective_ordering(&self) -> Vec<ComponentType> {
        if self.ordering.is_empty() {
            self.components.keys().copied().collect()
        } else {
            self.ordering.clone()
        }
    }

    /// The component's target: the (single) `default = true` entry that is not
    /// `preingestion_exclusive_config`. The catalog loader rejects two such entries; for a model
    /// built by hand with two, the first wins.
    pub fn default_entry(&self, component: ComponentType) -> Option<&FirmwareEntry> {
        self.components.get(&component)?.known_firmware.iter().find(|e| e.is_managed_default())
    }

    /// Target version per component, for the components that have a managed default entry.
    pub fn desired_versions(&self) -> BTreeMap<ComponentType, String> {
        self.components.keys().filter_map(|&c| self.default_entry(c).map(|e| (c, e.version.clone()))).collect()
    }
}
