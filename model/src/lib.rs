//! Pure rules of hostfw (no I/O except reading config files in the loaders, no async): site
//! config, firmware catalog, drift, component selection and verification, the compliance view,
//! host state names, BMC addresses.
//!
//! Owns re-exporting the main types; each module's doc says the one concept it owns.

mod names;
mod toml_doc;

pub mod ac_cycle;
pub mod bmc_address;
pub mod bmc_lookup;
pub mod catalog;
pub mod compliance;
pub mod component;
pub mod config;
pub mod drift;
pub mod duration;
pub mod error;
pub mod gates;
pub mod host_model;
pub mod inventory;
pub mod labels;
pub mod lockdown;
pub mod matcher;
pub mod notification;
pub mod reported_version;
pub mod role;
pub mod scout_manifest;
pub mod secret;
pub mod selection;
pub mod substate;
pub mod time_text;
pub mod update_intervals;
pub mod upload_setting;
pub mod version_order;
pub mod window;

pub use ac_cycle::AcCycleSetting;
pub use bmc_address::{BmcAddress, Scheme};
pub use bmc_lookup::BmcLookup;
pub use catalog::{Catalog, ComponentDoc, HostModelDoc, OverlayScan};
pub use compliance::{
    compliance, ComplianceStatus, ComplianceView, ComponentCompliance, HostCounts, HostFacts, RequestFacts,
    RunningVersion,
};
pub use component::{Component, ComponentType, FirmwareEntry};
pub use config::SiteConfig;
pub use drift::{drift, reported_versions, ComponentDrift, Drift, DriftKind, NotReportedComponent, UnknownMember};
pub use duration::{format_duration, parse_duration};
pub use error::{
    error_chain, BmcAddressError, BmcAddressProblem, CatalogError, ConfigError, DurationError, MatcherError,
    ParseNameError, TextPos,
};
pub use gates::{
    ceiling, firmware_status, plan, Ceiling, CeilingLimits, FirmwareStatus, FleetHealth, HostView, PassInput, Plan,
    SchedulingPolicy, SkipReason, Skipped, UnmatchedComponent,
};
pub use host_model::{same_name, HostModel};
pub use inventory::{InventoryMember, InventoryReport};
pub use labels::{labels_text, parse_label, parse_labels, LabelError, Labels};
pub use lockdown::{LockdownSetting, SettingValue};
pub use matcher::Matcher;
pub use notification::{NotificationKind, UnknownKind};
pub use reported_version::{UnknownVersion, VERSION_NOT_REPORTED};
pub use role::{Role, UnknownRole};
pub use scout_manifest::{parse_not_after, ManifestError, NotAfterError, ScoutManifest};
pub use secret::Secret;
pub use selection::{select_component, select_with, verify, verify_matching, Selection, UnmatchedRule, Verification};
pub use substate::{HostState, HostSubstate};
pub use time_text::{parse_rfc3339, rfc3339_utc, TimeTextError};
pub use upload_setting::{TargetsKeyword, UploadRouteName, UploadSetting, UploadTargets};
pub use version_order::{compare_versions, DefaultMove};
pub use window::TimeWindow;
