//! Approval deadlines (`[machine_updater] approval_deadline`, `approval_deadline_policy`): an
//! assigned host's request waits for its tenant's approval (or the instance autoreboot period)
//! at most this long after it was made. At the deadline the policy applies:
//! - `skip`: the host's workflow gives the request up (the slot is free again) and the host is
//!   held, not selected again, until its next window ([`hold_until`]);
//! - `escalate`: the wait goes on, and the host is flagged as overdue in `plan`, the metrics
//!   (`hostfw_approval_overdue_hosts`) and the Web UI (`HostfwApprovalOverdue = true`).
//!
//! Owns the deadline's arithmetic, the hold's end, the overdue list and the hold gate. It must not
//! read the requests or the holds (the site database keeps them: `Store::approval_holds`) nor a
//! clock: the caller passes `now_ms`.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::host_view::HostView;
use super::reason::SkipReason;
use crate::TimeWindow;

/// What happens when an assigned host's approval deadline passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DeadlinePolicy {
    /// Give the request up and select the host again at its next window.
    Skip,
    /// Keep waiting, flagged as overdue.
    #[default]
    Escalate,
}

impl DeadlinePolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            DeadlinePolicy::Skip => "skip",
            DeadlinePolicy::Escalate => "escalate",
        }
    }
}

impl fmt::Display for DeadlinePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The site's approval deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ApprovalDeadline {
    /// How long after the request the deadline falls, ms; 0: no deadline (the derived default).
    pub after_ms: i64,
    pub policy: DeadlinePolicy,
}

impl ApprovalDeadline {
    /// `machine_updater.approval_deadline` and `approval_deadline_policy` of `cfg`.
    pub fn from_config(cfg: &crate::config::SiteConfig) -> Self {
        let mu = &cfg.machine_updater;
        ApprovalDeadline {
            after_ms: i64::try_from(mu.approval_deadline.as_millis()).unwrap_or(i64::MAX),
            policy: mu.approval_deadline_policy,
        }
    }

    /// The deadline of a request made at `requested_at_ms`, if the site sets one.
    pub fn deadline_ms(&self, requested_at_ms: i64) -> Option<i64> {
        (self.after_ms > 0).then(|| requested_at_ms.saturating_add(self.after_ms))
    }
}

/// An assigned host's request that has not started: it waits for approval since `since_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalWait {
    pub machine_id: String,
    /// When the request was made.
    pub since_ms: i64,
}

/// A host whose request was given up at its approval deadline (`skip`): not selected again
/// before `until_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalHold {
    pub machine_id: String,
    pub skipped_at_ms: i64,
    pub until_ms: i64,
}

/// The approval facts of a pass: the waits of unstarted assigned requests and the holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ApprovalFacts {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<ApprovalWait>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<ApprovalHold>,
}

impl ApprovalFacts {
    pub fn is_empty(&self) -> bool {
        self.waits.is_empty() && self.holds.is_empty()
    }

    /// The holds in force at `now_ms`: machine id → the hold's end (ended holds are left out).
    pub fn holds_in_force(&self, now_ms: i64) -> HashMap<&str, i64> {
        self.holds.iter().filter(|h| h.until_ms > now_ms).map(|h| (h.machine_id.as_str(), h.until_ms)).collect()
    }
}

/// An assigned host still waiting for approval after its deadline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OverdueApproval {
    pub machine_id: String,
    pub requested_at_ms: i64,
    pub deadline_ms: i64,
    pub policy: DeadlinePolicy,
}

/// Each waiting request past its deadline at `now_ms`, in `waits` order.
pub fn overdue_approvals(deadline: &ApprovalDeadline, facts: &ApprovalFacts, now_ms: i64) -> Vec<OverdueApproval> {
    facts
        .waits
        .iter()
        .filter_map(|w| {
            let at = deadline.deadline_ms(w.since_ms)?;
            (at <= now_ms).then(|| OverdueApproval {
                machine_id: w.machine_id.clone(),
                requested_at_ms: w.since_ms,
                deadline_ms: at,
                policy: deadline.policy,
            })
        })
        .collect()
}

/// Until when a host skipped at `now_ms` is held: the next opening of one of its windows (its
/// own update window, or the site's instance autoreboot period, whichever starts first after
/// now); with no window ahead, one more deadline period (`after_ms`), so the tenant is asked
/// again only after as long as they were given to answer.
pub fn hold_until(now_ms: i64, host_window: Option<TimeWindow>, autoreboot: Option<TimeWindow>, after_ms: i64) -> i64 {
    [host_window, autoreboot]
        .into_iter()
        .flatten()
        .map(|w| w.start_ms)
        .filter(|&start| start > now_ms)
        .min()
        .unwrap_or_else(|| now_ms.saturating_add(after_ms.max(1)))
}

/// A host held after a skipped approval waits (`SkipReason::ApprovalSkipped`); `holds` are
/// [`ApprovalFacts::holds_in_force`].
pub(super) fn hold_gate(host: &HostView, holds: &HashMap<&str, i64>) -> Result<(), SkipReason> {
    match holds.get(host.machine_id.as_str()).copied() {
        Some(until_ms) => Err(SkipReason::ApprovalSkipped { until_ms }),
        None => Ok(()),
    }
}
