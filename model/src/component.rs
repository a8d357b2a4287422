//! A host firmware component: its type name (`bmc`, `uefi`, ...) and its catalog definition
//! (matcher plus known firmware entries).
//!
//! Owns `ComponentType`, `Component` and `FirmwareEntry` as plain data with their small accessors.
//! It must not merge, validate across entries, or compare against inventory (see `catalog`,
//! `drift`, `selection`).

use serde::{Deserialize, Serialize};

use crate::matcher::Matcher;
use crate::names::named_enum;

named_enum! {
    /// A firmware component type, NICo's names. Declaration order is the install order used when
    /// a model's `ordering` is empty. An unknown name is an error naming it (no `other` fallback).
    pub enum ComponentType ("component type") {
        Bmc => "bmc",
        Cec => "cec",
        Uefi => "uefi",
        Nic => "nic",
        Cpldmb => "cpldmb",
        Cpldpdb => "cpldpdb",
        Hgxbmc => "hgxbmc",
        Combinedbmcuefi => "combinedbmcuefi",
        Gpu => "gpu",
    }
}

impl ComponentType {
    /// `bmc` or `combinedbmcuefi`.
    pub fn is_bmc(self) -> bool {
        matches!(self, ComponentType::Bmc | ComponentType::Combinedbmcuefi)
    }

    /// `uefi` or `combinedbmcuefi`.
    pub fn is_uefi(self) -> bool {
        matches!(self, ComponentType::Uefi | ComponentType::Combinedbmcuefi)
    }
}

/// One component of a host model in the (validated) catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// Regex on inventory member `Id`s: which members report this component's version.
    pub current_version_reported_as: Matcher,
    /// Pre-ingestion threshold; kept for fidelity, never read by the managed-host path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preingest_upgrade_when_below: Option<String>,
    /// Every known firmware version, in catalog (merge) order.
    #[serde(default)]
    pub known_firmware: Vec<FirmwareEntry>,
    /// hostfw extension: how its image is handed to the BMC, for vendor quirks (see
    /// `UploadSetting`); `None` = as the UpdateService advertises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<crate::upload_setting::UploadSetting>,
}

/// One artifact set for one version of a component (`known_firmware` entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareEntry {
    /// Target version, an opaque string compared exactly with the inventory's `Version`.
    pub version: String,
    /// Marks the target version of the component.
    #[serde(default)]
    pub default: bool,
    /// Single artifact (Redfish route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Multiple artifacts uploaded one after another (Redfish route); wins over `filename`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filenames: Vec<String>,
    /// Where to fetch the artifact when it is not present locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Checksum of the downloaded artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// hostfw extension: the SHA-256 (hex) of each artifact, in the order of `filenames` (or of
    /// `filename`: one string is enough then). `firmware-config set` and the worker refuse an
    /// artifact whose content differs.
    #[serde(default, deserialize_with = "one_or_many", skip_serializing_if = "Vec::is_empty")]
    pub sha256: Vec<String>,
    /// Pass the component type as an update target to the Redfish multipart update.
    #[serde(default)]
    pub install_only_specified: bool,
    /// AC power-drain cycles needed after install to activate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_drains_needed: Option<u32>,
    /// Reset the host and BMC before the first attempt.
    #[serde(default)]
    pub pre_update_resets: bool,
    /// Core-local (worker-local) script route: the script installs and activates by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// Entry used by pre-ingestion only; the managed-host path ignores it.
    #[serde(default)]
    pub preingestion_exclusive_config: bool,
}

impl FirmwareEntry {
    /// An entry with only `version` set.
    pub fn new(version: impl Into<String>) -> FirmwareEntry {
        FirmwareEntry {
            version: version.into(),
            default: false,
            filename: None,
            filenames: Vec::new(),
            url: None,
            checksum: None,
            sha256: Vec::new(),
            install_only_specified: false,
            power_drains_needed: None,
            pre_update_resets: false,
            script: None,
            preingestion_exclusive_config: false,
        }
    }

    /// The artifacts to upload, in order: `filenames` if non-empty, else `filename`, else none.
    pub fn artifacts(&self) -> Vec<String> {
        if !self.filenames.is_empty() {
            self.filenames.clone()
        } else {
            self.filename.iter().cloned().collect()
        }
    }

    /// True for an entry the managed-host path may install: `default = true` and not
    /// pre-ingestion-only.
    pub fn is_managed_default(&self) -> bool {
        self.default && !self.preingestion_exclusive_config
    }
}

/// `"hex"` or `["hex", …]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}
