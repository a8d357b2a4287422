//! A reported firmware version is either known or unknown ("version not reported"), and the one
//! rule that tells them apart.
//!
//! Real BMCs report "no version" in many ways: `Version` absent or `null`, `""` or whitespace, a
//! placeholder text (Supermicro's backup images say `"Not Present"`; others `"N/A"`, `"NA"`,
//! `"Unknown"`), or a real-looking version on a member whose `Status.State` says it is not there
//! (the captured GB200 tree lists absent GPU slots as `State: "Absent"` with a version). Such a
//! member must never count as drifted (it would be flashed and could never be verified) nor as
//! compliant: drift, selection and verification leave it out and report it as "version not
//! reported".
//!
//! Representation (see `InventoryMember`): `version: String` stays the compared text, now with
//! surrounding whitespace removed (whitespace is not a format difference), and two optional
//! fields are added: `version_unknown` (why the version is not known) and `version_raw` (the text
//! exactly as sent, only when trimming changed it). Both are `#[serde(default,
//! skip_serializing_if = "Option::is_none")]`, so a member with a plain known version serialises
//! exactly as before, and every stored report and Temporal payload written before them still
//! decodes, with the meaning it had: classification happens once, where the member is read from
//! the BMC (`InventoryMember::reported`), and is stored with it. No rule re-derives "unknown" from
//! the text, so a recorded workflow history replays to the same decisions. An enum in place of
//! `version` would have changed the JSON of every report and payload.
//!
//! Owns `UnknownVersion`, the placeholder and `Status.State` lists, `classify` and the wording
//! "version not reported". It must not match members to components nor compare with a catalog
//! (see `drift` and `selection`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// How operators see a member whose version is unknown (plan, get-report, workflow messages).
pub const VERSION_NOT_REPORTED: &str = "version not reported";

/// `Version` texts that mean "no version" (compared trimmed and ASCII-case-insensitively).
pub const PLACEHOLDERS: &[&str] = &["Not Present", "N/A", "NA", "Unknown"];

/// `Status.State` values of a member that runs no firmware to compare (case-insensitive). Of
/// these, the captured vendor trees show `Absent` (GB200 GPU slots); `Disabled` and
/// `UnavailableOffline` are the Redfish `Resource.State` values with the same meaning.
pub const UNKNOWN_STATES: &[&str] = &["Absent", "Disabled", "UnavailableOffline"];

/// Why a member's version is not known.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum UnknownVersion {
    /// `Version` absent or `null` (or not a scalar).
    Missing,
    /// `Version` empty or only whitespace.
    Blank,
    /// `Version` is a placeholder text (one of `PLACEHOLDERS`).
    Placeholder,
    /// `Status.State` (one of `UNKNOWN_STATES`) says the member runs no firmware to compare,
    /// whatever `Version` says.
    State { state: String },
}

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownVersion::Missing => f.write_str("no Version"),
            UnknownVersion::Blank => f.write_str("blank Version"),
            UnknownVersion::Placeholder => f.write_str("placeholder Version"),
            UnknownVersion::State { state } => write!(f, "Status.State {state}"),
        }
    }
}

/// Why `version` (as sent, `None` when absent or null) of a member in `state` is not a known
/// version, or `None` when it is one. A not-present state wins over any text.
pub fn classify(version: Option<&str>, state: Option<&str>) -> Option<UnknownVersion> {
    if let Some(state) = state.map(str::trim) {
        if UNKNOWN_STATES.iter().any(|s| s.eq_ignore_ascii_case(state)) {
            return Some(UnknownVersion::State { state: state.to_string() });
        }
    }
    let Some(text) = version.map(str::trim) else {
        return Some(UnknownVersion::Missing);
    };
    if text.is_empty() {
        Some(UnknownVersion::Blank)
    } else if PLACEHOLDERS.iter().any(|p| p.eq_ignore_ascii_case(text)) {
        Some(UnknownVersion::Placeholder)
    } else {
        None
    }
}
