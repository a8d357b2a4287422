//! The operator's brakes (issue 27): freezes and manual pauses of a rollout target.
//!
//! A freeze stops new starts in its scope: the whole site, one catalog model
//! (`model=<vendor>/<model>` or `model=<model>`) or one label value (`label=<key>=<value>`).
//! Hosts already in flight finish the component they are flashing and then hold before the next
//! one while a freeze covers them, unless the freeze was set with `drain`. A manual pause
//! (`hostfw budget pause --target ...`) stops new starts on one rollout target, like a spent error
//! budget, until `hostfw budget resume`.
//!
//! Owns the freeze scope and its syntax, the freeze and manual pause records as the scheduler
//! reads them, and the one rule "does this freeze cover this host" (used by the pass, by `plan`
//! and by the activity the host workflow asks before each component). It must do no I/O and read
//! no clock: the store gives the records.

use crate::names::text_schema;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::budget::Target;
use crate::host_model::same_name;
use crate::labels::{check_label, Labels};

/// What a freeze covers. Serialized as its key (`site`, `model=...`, `label=...`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum FreezeScope {
    /// Every host of the site.
    Site,
    /// The hosts of one catalog model; `vendor` `None` matches the model of any vendor.
    Model { vendor: Option<String>, model: String },
    /// The hosts labelled `key=value`.
    Label { key: String, value: String },
}

text_schema!(FreezeScope, "What a freeze covers, as its key: `site`, `model=[VENDOR/]MODEL` or `label=KEY=VALUE`.");

/// Why a freeze selector is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FreezeError {
    #[error(
        "freeze selector {selector:?}: {why} (expected model=<vendor>/<model>, model=<model> or label=<key>=<value>)"
    )]
    BadSelector { selector: String, why: String },
    #[error("a freeze needs a reason (--reason): it is shown to every operator who sees the hold")]
    EmptyReason,
}

impl FreezeScope {
    /// Parses a selector: `model=<vendor>/<model>`, `model=<model>` or `label=<key>=<value>`.
    /// The whole site is no selector at all ([`FreezeScope::Site`]).
    pub fn parse(selector: &str) -> Result<FreezeScope, FreezeError> {
        let bad = |why: &str| FreezeError::BadSelector { selector: selector.to_string(), why: why.to_string() };
        let text = selector.trim();
        let Some((kind, rest)) = text.split_once('=') else {
            return Err(bad("it is not kind=value"));
        };
        let rest = rest.trim();
        match kind.trim() {
            "model" => {
                let (vendor, model) = match rest.split_once('/') {
                    Some((v, m)) => (Some(v.trim()), m.trim()),
                    None => (None, rest),
                };
                if vendor.is_some_and(str::is_empty) {
                    return Err(bad("the vendor before '/' is empty"));
                }
                if model.is_empty() {
                    return Err(bad("the model is empty"));
                }
                Ok(FreezeScope::Model { vendor: vendor.map(str::to_string), model: model.to_string() })
            }
            "label" => {
                let Some((key, value)) = rest.split_once('=') else {
                    return Err(bad("a label selector is label=<key>=<value>"));
                };
                let (key, value) = (key.trim(), value.trim());
                check_label(key, value).map_err(|e| bad(&e.to_string()))?;
                Ok(FreezeScope::Label { key: key.to_string(), value: value.to_string() })
            }
            other => Err(bad(&format!("unknown kind {other:?}"))),
        }
    }

    /// The scope as stored and printed: `site`, `model=<vendor>/<model>`, `model=<model>` or
    /// `label=<key>=<value>` ([`FreezeScope::parse_stored`] reads it back).
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// Reads a scope written by [`FreezeScope::key`].
    pub fn parse_stored(text: &str) -> Result<FreezeScope, FreezeError> {
        if text == "site" {
            Ok(FreezeScope::Site)
        } else {
            FreezeScope::parse(text)
        }
    }

    /// The scope covers a host of catalog `vendor`/`model` (`None` when unknown) with `labels`.
    /// Names compare as the catalog compares them (case and surrounding blanks ignored).
    pub fn covers(&self, vendor: Option<&str>, model: Option<&str>, labels: &Labels) -> bool {
        match self {
            FreezeScope::Site => true,
            FreezeScope::Model { vendor: want_vendor, model: want_model } => {
                let model_matches = model.is_some_and(|m| same_name(m, want_model));
                let vendor_matches = match want_vendor {
                    None => true,
                    Some(w) => vendor.is_some_and(|v| same_name(v, w)),
                };
                model_matches && vendor_matches
            }
            FreezeScope::Label { key, value } => labels.get(key).is_some_and(|v| v == value),
        }
    }
}

impl From<FreezeScope> for String {
    fn from(scope: FreezeScope) -> String {
        scope.key()
    }
}

impl TryFrom<String> for FreezeScope {
    type Error = FreezeError;
    fn try_from(text: String) -> Result<FreezeScope, FreezeError> {
        FreezeScope::parse_stored(&text)
    }
}

impl fmt::Display for FreezeScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FreezeScope::Site => write!(f, "site"),
            FreezeScope::Model { vendor: Some(v), model } => write!(f, "model={v}/{model}"),
            FreezeScope::Model { vendor: None, model } => write!(f, "model={model}"),
            FreezeScope::Label { key, value } => write!(f, "label={key}={value}"),
        }
    }
}

/// One freeze as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Freeze {
    pub id: i64,
    pub scope: FreezeScope,
    pub reason: String,
    /// In-flight hosts finish all their components (without it they hold before the next one).
    pub drain: bool,
    /// Who set it (the audit actor).
    pub by: String,
    /// When, unix ms.
    pub at_ms: i64,
}

impl Freeze {
    /// One line for people: `freeze 3 on site set by alice at <time>: <reason>` (and `, drain`).
    pub fn describe(&self) -> String {
        let drain = if self.drain { " (drain: hosts in flight finish)" } else { "" };
        let at = crate::time_text::rfc3339_utc(self.at_ms);
        format!("freeze {} on {}{drain} set by {} at {at}: {}", self.id, self.scope, self.by, self.reason)
    }
}

/// Checks a freeze's reason: required, not blank.
pub fn check_reason(reason: &str) -> Result<(), FreezeError> {
    if reason.trim().is_empty() {
        Err(FreezeError::EmptyReason)
    } else {
        Ok(())
    }
}

/// The first freeze (oldest first, as the store lists them) among `freezes` covering a host.
pub fn covering<'f>(
    freezes: &'f [Freeze],
    vendor: Option<&str>,
    model: Option<&str>,
    labels: &Labels,
) -> Option<&'f Freeze> {
    freezes.iter().find(|f| f.scope.covers(vendor, model, labels))
}

/// The freeze an in-flight host holds for before its next component: the first covering freeze
/// set without `drain` (a draining freeze lets in-flight hosts finish).
pub fn holding<'f>(
    freezes: &'f [Freeze],
    vendor: Option<&str>,
    model: Option<&str>,
    labels: &Labels,
) -> Option<&'f Freeze> {
    freezes.iter().find(|f| !f.drain && f.scope.covers(vendor, model, labels))
}

/// A rollout target an operator paused by hand (`hostfw budget pause`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OperatorPause {
    pub target: Target,
    pub by: String,
    pub reason: String,
    /// When, unix ms.
    pub at_ms: i64,
}

impl OperatorPause {
    /// One line for people: `<target> paused by olga at <time>: <reason>`.
    pub fn describe(&self) -> String {
        let at = crate::time_text::rfc3339_utc(self.at_ms);
        format!("{} paused by {} at {at}: {}", self.target, self.by, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn selectors_parse_print_and_read_back() {
        for text in ["model=Dell Inc./PowerEdge R750", "model=R750", "label=rack=r12"] {
            let scope = FreezeScope::parse(text).unwrap();
            assert_eq!(scope.key(), text);
            assert_eq!(FreezeScope::parse_stored(&scope.key()).unwrap(), scope);
        }
        assert_eq!(FreezeScope::parse_stored("site").unwrap(), FreezeScope::Site);
    }

    #[test]
    fn bad_selectors_are_refused_naming_them() {
        for text in ["rack=r12", "model=", "model=/R750", "label=rack", "label=Rack=r1", "nothing"] {
            let err = FreezeScope::parse(text).unwrap_err();
            assert!(err.to_string().contains(&format!("{text:?}")), "{err}");
        }
        assert_eq!(check_reason("  "), Err(FreezeError::EmptyReason));
        assert_eq!(check_reason("change freeze"), Ok(()));
    }

    #[test]
    fn scopes_cover_their_hosts_only() {
        let rack = labels(&[("rack", "r12")]);
        let site = FreezeScope::Site;
        assert!(site.covers(None, None, &Labels::new()));
        let model = FreezeScope::parse("model=dell inc./PowerEdge R750").unwrap();
        assert!(model.covers(Some("Dell Inc."), Some("PowerEdge R750"), &rack));
        assert!(!model.covers(Some("HPE"), Some("PowerEdge R750"), &rack));
        assert!(!model.covers(Some("Dell Inc."), Some("R650"), &rack));
        assert!(!model.covers(None, None, &rack), "an unknown model is not this model");
        let any_vendor = FreezeScope::parse("model=PowerEdge R750").unwrap();
        assert!(any_vendor.covers(Some("Other"), Some("poweredge r750"), &rack));
        let label = FreezeScope::parse("label=rack=r12").unwrap();
        assert!(label.covers(None, None, &rack));
        assert!(!label.covers(None, None, &labels(&[("rack", "r13")])));
        assert!(!label.covers(None, None, &Labels::new()));
    }

    #[test]
    fn a_draining_freeze_does_not_hold_in_flight_hosts() {
        let freeze = |id, drain| Freeze {
            id,
            scope: FreezeScope::Site,
            reason: "r".into(),
            drain,
            by: "alice".into(),
            at_ms: 0,
        };
        let drained = [freeze(1, true)];
        assert!(covering(&drained, None, None, &Labels::new()).is_some());
        assert!(holding(&drained, None, None, &Labels::new()).is_none());
        let both = [freeze(1, true), freeze(2, false)];
        assert_eq!(holding(&both, None, None, &Labels::new()).map(|f| f.id), Some(2));
    }

    #[test]
    fn brakes_describe_themselves_with_who_and_when() {
        let freeze = Freeze {
            id: 3,
            scope: FreezeScope::parse("model=Dell/PowerEdge R760").unwrap(),
            reason: "bad batch".into(),
            drain: false,
            by: "alice (token t1)".into(),
            at_ms: 0,
        };
        assert_eq!(
            freeze.describe(),
            "freeze 3 on model=Dell/PowerEdge R760 set by alice (token t1) at 1970-01-01T00:00:00Z: bad batch"
        );
        let drained = Freeze { drain: true, ..freeze };
        assert!(drained.describe().contains("(drain: hosts in flight finish)"), "{}", drained.describe());
        let pause = OperatorPause {
            target: Target {
                vendor: "Dell".into(),
                model: "PowerEdge R760".into(),
                component: crate::ComponentType::Bmc,
                version: "7.1".into(),
            },
            by: "olga".into(),
            reason: "watching".into(),
            at_ms: 0,
        };
        assert_eq!(pause.describe(), "Dell PowerEdge R760 bmc 7.1 paused by olga at 1970-01-01T00:00:00Z: watching");
    }
}
