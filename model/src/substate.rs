//! Host lifecycle names: the top-level `HostState` and the firmware-update `HostSubstate`, with
//! exactly the seed's names (Display, serde and `FromStr` use the name as written).
//!
//! Owns the names, and the two rules every crate asks of a state (`steady`, `is_assigned`). It must
//! not encode transitions (the host reprovision workflow owns those).

use crate::names::named_enum;

named_enum! {
    /// Where a host is in a firmware update. The first ten are the seed's substates; the rest are
    /// hostfw's own steps around them.
    pub enum HostSubstate ("host substate") {
        /// Refresh inventory and select the next mismatched component.
        CheckingFirmwareV2 => "CheckingFirmwareV2",
        /// Same, after a component was installed.
        CheckingFirmwareRepeatV2 => "CheckingFirmwareRepeatV2",
        /// Waiting for the operator to finish the approved platform procedure.
        WaitingForManualUpgrade => "WaitingForManualUpgrade",
        /// Waiting for Scout to run the packaged upgrade script and report.
        WaitingForScoutUpgrade => "WaitingForScoutUpgrade",
        /// Waiting for the Core-local (worker-local) script.
        WaitingForScript => "WaitingForScript",
        /// A Redfish upload is running.
        WaitingForUpload => "WaitingForUpload",
        /// The upload completed; polling the Redfish task.
        WaitingForFirmwareUpgrade => "WaitingForFirmwareUpgrade",
        /// Activation resets, reboots or power drains.
        ResetForNewFirmware => "ResetForNewFirmware",
        /// Refreshing inventory until all matching members report the target.
        NewFirmwareReportedWait => "NewFirmwareReportedWait",
        /// The attempt failed; waiting to retry or retries exhausted.
        FailedFirmwareUpgrade => "FailedFirmwareUpgrade",
        /// hostfw: recording the health report, disabling lockdown where needed.
        Protecting => "Protecting",
        /// hostfw: an assigned host waits for tenant approval or the autoreboot period.
        WaitingForApproval => "WaitingForApproval",
        /// hostfw: assigned host's platform configuration before discovery boot.
        PlatformConfiguration => "PlatformConfiguration",
        /// hostfw: assigned host boots into its discovery environment.
        DiscoveryBoot => "DiscoveryBoot",
        /// hostfw: restoring lockdown and the host's prior state.
        Restoring => "Restoring",
        /// hostfw: nothing left to do; the request is cleared.
        Completed => "Completed",
        /// hostfw: a freeze (`hostfw freeze`) holds the host before its next component.
        HeldByFreeze => "HeldByFreeze",
    }
}

named_enum! {
    /// A host's top-level lifecycle state.
    pub enum HostState ("host state") {
        Ready => "Ready",
        Assigned => "Assigned",
        HostReprovision => "HostReprovision",
        Maintenance => "Maintenance",
    }
}

impl HostState {
    /// The one rule for "what is this host's steady state": the state itself, except that a host
    /// in an update (`HostReprovision`) returns to `Assigned` when it carries a tenant instance and
    /// to `Ready` otherwise (what a retried protect, the repair and the restore go back to).
    pub fn steady(self, has_instance: bool) -> HostState {
        match self {
            HostState::HostReprovision if has_instance => HostState::Assigned,
            HostState::HostReprovision => HostState::Ready,
            other => other,
        }
    }

    /// The one rule for "is this host assigned": it carries a tenant instance, or its state is
    /// `Assigned`. An assigned host's update waits for tenant approval (or the autoreboot period).
    pub fn is_assigned(self, has_instance: bool) -> bool {
        has_instance || self == HostState::Assigned
    }

    /// In a firmware update (`HostReprovision`) or in maintenance: the host uses a slot of the
    /// site budget (S9).
    pub fn is_busy(self) -> bool {
        matches!(self, HostState::HostReprovision | HostState::Maintenance)
    }
}
