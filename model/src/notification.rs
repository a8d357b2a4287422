//! The kinds of webhook notification hostfw sends (issue 27 item 7), with their wire names.
//!
//! Owns the list of kinds and their names (`target_paused`, ...), used by the `[notifications]`
//! config (which kinds a webhook wants), the site database's outbox (the `kind` column) and the
//! JSON payload. It must not send, store or sign anything.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What happened, as a webhook is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    /// A rollout target was paused: by its error budget, or by hand (`hostfw budget pause`).
    TargetPaused,
    /// A host spent its retry budget and waits for a reset (exhausted).
    HostExhausted,
    /// An assigned host waits for its tenant's approval (WaitingForApproval).
    ApprovalNeeded,
    /// An assigned host still waits for approval after its deadline (policy `escalate`).
    ApprovalOverdue,
    /// A canary wave of a rollout target opened.
    WaveOpened,
    /// A freeze was set or lifted.
    FreezeChanged,
    /// A runtime catalog revision was stored (set, unset, rollback, approved).
    CatalogChanged,
}

impl NotificationKind {
    /// Every kind, in the documented order.
    pub const ALL: [NotificationKind; 7] = [
        NotificationKind::TargetPaused,
        NotificationKind::HostExhausted,
        NotificationKind::ApprovalNeeded,
        NotificationKind::ApprovalOverdue,
        NotificationKind::WaveOpened,
        NotificationKind::FreezeChanged,
        NotificationKind::CatalogChanged,
    ];

    /// The wire name (`target_paused`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationKind::TargetPaused => "target_paused",
            NotificationKind::HostExhausted => "host_exhausted",
            NotificationKind::ApprovalNeeded => "approval_needed",
            NotificationKind::ApprovalOverdue => "approval_overdue",
            NotificationKind::WaveOpened => "wave_opened",
            NotificationKind::FreezeChanged => "freeze_changed",
            NotificationKind::CatalogChanged => "catalog_changed",
        }
    }
}

impl fmt::Display for NotificationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no notification kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown notification event kind `{0}`; expected one of: target_paused, host_exhausted, approval_needed, approval_overdue, wave_opened, freeze_changed, catalog_changed")]
pub struct UnknownKind(pub String);

impl FromStr for NotificationKind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NotificationKind::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| UnknownKind(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for k in NotificationKind::ALL {
            assert_eq!(k.as_str().parse::<NotificationKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::json!(k.as_str()));
        }
        let err = "target_pause".parse::<NotificationKind>().unwrap_err().to_string();
        assert!(err.contains("`target_pause`") && err.contains("target_paused"), "{err}");
    }
}
