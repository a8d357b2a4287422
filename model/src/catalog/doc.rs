//! The catalog *as written*: one `[host_models.<key>]` table of the site config, or one overlay
//! `<firmware_directory>/<subdir>/metadata.toml`. Everything optional so merging can tell "unset".
//!
//! Owns the input shape (unknown keys rejected, regexes compiled, component names kept as text so
//! an error can name the exact key). It must not merge or validate (see `merge`, `validate`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::component::{ComponentType, FirmwareEntry};
use crate::lockdown::LockdownSetting;
use crate::matcher::Matcher;

/// One host model document (top-level `vendor`, `model`, `ordering`, `components`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostModelDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ordering: Vec<ComponentType>,
    #[serde(default)]
    pub explicit_start_needed: bool,
    /// hostfw extension (see `HostModel::mnnvl_capable`).
    #[serde(default)]
    pub mnnvl_capable: bool,
    /// hostfw extension: where this model keeps its platform lockdown (see `LockdownSetting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockdown: Option<LockdownSetting>,
    /// hostfw extension: how this model's AC power cycle is done (see `AcCycleSetting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ac_cycle: Option<crate::ac_cycle::AcCycleSetting>,
    /// Keyed by component type name; an unknown name is rejected by the merge with its key.
    #[serde(default)]
    pub components: BTreeMap<String, ComponentDoc>,
}

/// One `[components.<type>]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version_reported_as: Option<Matcher>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preingest_upgrade_when_below: Option<String>,
    #[serde(default)]
    pub known_firmware: Vec<FirmwareEntry>,
    /// hostfw extension: upload quirks of this component (see `UploadSetting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<crate::upload_setting::UploadSetting>,
}
