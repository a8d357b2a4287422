//! The per-host scheduling gates, in the seed's order, except site capacity: firmware status →
//! automatic update policy → host state → existing work → explicit start. The first failing
//! gate is the host's reason.
//!
//! Owns the order and each gate's rule for one host. It must not count or compare hosts with
//! each other (capacity and ordering belong to `gates::pass`).

use super::firmware::FirmwareStatus;
use super::host_view::HostView;
use super::policy::SchedulingPolicy;
use super::reason::SkipReason;
use crate::HostState;

/// One host's outcome before capacity is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Nothing to update.
    Compliant,
    Skip(SkipReason),
    /// Passed every gate but capacity.
    Candidate,
}

pub(super) fn check(host: &HostView, policy: &SchedulingPolicy, now_ms: i64) -> Verdict {
    if host.firmware.is_compliant() {
        return Verdict::Compliant;
    }
    let gates = || -> Result<(), SkipReason> {
        firmware_gate(&host.firmware)?;
        policy.auto_update_gate(&host.machine_id, host.auto_update)?;
        host_state_gate(host, policy.instance_updates_manual_tagging)?;
        existing_work_gate(host)?;
        explicit_start_gate(host, now_ms)
    };
    match gates() {
        Ok(()) => Verdict::Candidate,
        Err(reason) => Verdict::Skip(reason),
    }
}

/// Something installable is known: explored, in the catalog, and at least one component whose
/// matching members report another version (unmatched-only and version-not-reported-only hosts
/// are reported, not started).
pub fn firmware_gate(status: &FirmwareStatus) -> Result<(), SkipReason> {
    match status {
        FirmwareStatus::NotExplored => Err(SkipReason::NotExplored),
        FirmwareStatus::ExploreFailed { error } => Err(SkipReason::ExploreFailed { error: error.clone() }),
        FirmwareStatus::NoCatalogEntry { vendor, model } => {
            Err(SkipReason::NoCatalogEntry { vendor: vendor.clone(), model: model.clone() })
        }
        FirmwareStatus::VersionNotReported { not_reported } => {
            Err(SkipReason::VersionNotReported { not_reported: not_reported.clone() })
        }
        FirmwareStatus::Drifted { differing, unmatched, not_reported, .. }
            if differing.is_empty() && unmatched.is_empty() =>
        {
            Err(SkipReason::VersionNotReported { not_reported: not_reported.clone() })
        }
        FirmwareStatus::Drifted { differing, unmatched, .. } if differing.is_empty() => {
            Err(SkipReason::NoInventoryMatch { unmatched: unmatched.clone() })
        }
        FirmwareStatus::Drifted { .. } | FirmwareStatus::Compliant => Ok(()),
    }
}

/// S7. Ready/Assigned per `instance_updates_manual_tagging`; updating and maintenance hosts pass
/// on to the existing-work gate (which names them).
fn host_state_gate(host: &HostView, manual_tagging: bool) -> Result<(), SkipReason> {
    match host.state {
        HostState::Ready | HostState::Assigned if manual_tagging && host.is_assigned() => {
            Err(SkipReason::AssignedManualTagging)
        }
        HostState::Ready | HostState::Assigned | HostState::HostReprovision | HostState::Maintenance => Ok(()),
    }
}

/// S8, S9.
fn existing_work_gate(host: &HostView) -> Result<(), SkipReason> {
    if host.has_request {
        Err(SkipReason::AlreadyRequested)
    } else if host.state.is_busy() {
        Err(SkipReason::Busy { state: host.state })
    } else {
        Ok(())
    }
}

/// S10. Models without `explicit_start_needed` need no window.
fn explicit_start_gate(host: &HostView, now_ms: i64) -> Result<(), SkipReason> {
    let needed = matches!(host.firmware, FirmwareStatus::Drifted { explicit_start_needed: true, .. });
    match host.window {
        _ if !needed => Ok(()),
        Some(w) if w.contains(now_ms) => Ok(()),
        window => Err(SkipReason::WindowClosed { window }),
    }
}
