//! The workflow's input: which host, who asked, and the site's timings and limits.
//!
//! Settings travel in the input so a replay sees the values the run started with. Fields added
//! after the first recorded histories carry `#[serde(default)]`, so those histories still decode.

use hostfw_model::SiteConfig;
use serde::{Deserialize, Serialize};

pub use crate::waits::BmcWaits;
pub use hostfw_model::TimeWindow;

/// Waits of one power-drain cycle (ForceOff, AC power cycle, On), in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerDrainWaits {
    pub after_off_secs: u64,
    pub after_cycle_secs: u64,
    pub after_on_secs: u64,
}

impl Default for PowerDrainWaits {
    fn default() -> Self {
        PowerDrainWaits { after_off_secs: 60, after_cycle_secs: 90, after_on_secs: 5 }
    }
}

fn d_retry_interval() -> u64 {
    3600
}
fn d_max_retries() -> u32 {
    5
}
fn d_max_reactivations() -> u32 {
    3
}
fn d_max_upload_retries() -> u32 {
    3
}
fn d_hgx_delay() -> u64 {
    30
}
fn d_pre_update_wait() -> u64 {
    1200
}
fn d_script_timeout() -> u64 {
    3600
}
fn d_heartbeat_timeout() -> u64 {
    30
}
fn d_approval_recheck() -> u64 {
    3600
}

/// Timings and limits of the per-host loop, from the site config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReprovisionSettings {
    /// Pause between inventory reads while waiting for the new version to be reported.
    pub verify_poll_interval_secs: u64,
    /// Inventory reads after one activation before it counts as not taking effect.
    pub verify_max_polls: u32,
    /// Bound on one Redfish update task.
    pub task_timeout_secs: u64,
    /// Consecutive healthy reads required after a BMC reset.
    pub bmc_healthy_reads: u32,
    /// `firmware_global.host_firmware_upgrade_retry_interval`.
    #[serde(default = "d_retry_interval")]
    pub retry_interval_secs: u64,
    /// Retries after FailedFirmwareUpgrade before the host is exhausted.
    #[serde(default = "d_max_retries")]
    pub max_retries: u32,
    /// Re-activations when the new version is not reported, before the attempt fails.
    #[serde(default = "d_max_reactivations")]
    pub max_reactivations: u32,
    /// Transient upload failures per component and attempt before the attempt fails.
    #[serde(default = "d_max_upload_retries")]
    pub max_upload_retries: u32,
    /// `firmware_global.requires_manual_upgrade`.
    #[serde(default)]
    pub requires_manual_upgrade: bool,
    /// `firmware_global.hgx_bmc_gpu_reboot_delay`.
    #[serde(default = "d_hgx_delay")]
    pub hgx_reboot_delay_secs: u64,
    #[serde(default)]
    pub power_drain: PowerDrainWaits,
    /// Wait after the pre-update resets.
    #[serde(default = "d_pre_update_wait")]
    pub pre_update_wait_secs: u64,
    /// Bound on a Core-local script.
    #[serde(default = "d_script_timeout")]
    pub script_timeout_secs: u64,
    /// `machine_updater.instance_autoreboot_period`: assigned hosts start without tenant approval
    /// inside it.
    #[serde(default)]
    pub autoreboot_period: Option<TimeWindow>,
    /// Heartbeat timeout of long activities: how soon a dead worker's activity moves to another.
    #[serde(default = "d_heartbeat_timeout")]
    pub heartbeat_timeout_secs: u64,
    /// The waits inside the BMC activities; their timeouts are derived from them (`options`).
    #[serde(default)]
    pub bmc_waits: BmcWaits,
    /// `host_reprovision.approval_recheck`: how often the approval wait reads the stored
    /// approval again when nothing wakes it ([`Change::ApprovalRecheck`](crate::versions::Change::ApprovalRecheck)).
    #[serde(default = "d_approval_recheck")]
    pub approval_recheck_secs: u64,
}

impl Default for ReprovisionSettings {
    fn default() -> Self {
        ReprovisionSettings {
            verify_poll_interval_secs: 10,
            verify_max_polls: 60,
            task_timeout_secs: 7200,
            bmc_healthy_reads: 3,
            retry_interval_secs: d_retry_interval(),
            max_retries: d_max_retries(),
            max_reactivations: d_max_reactivations(),
            max_upload_retries: d_max_upload_retries(),
            requires_manual_upgrade: false,
            hgx_reboot_delay_secs: d_hgx_delay(),
            power_drain: PowerDrainWaits::default(),
            pre_update_wait_secs: d_pre_update_wait(),
            script_timeout_secs: d_script_timeout(),
            autoreboot_period: None,
            heartbeat_timeout_secs: d_heartbeat_timeout(),
            bmc_waits: BmcWaits::default(),
            approval_recheck_secs: d_approval_recheck(),
        }
    }
}

impl ReprovisionSettings {
    /// The host workflow's settings from the site config: the one place they are derived.
    pub fn from_site(site: &SiteConfig) -> ReprovisionSettings {
        let hr = &site.host_reprovision;
        let fg = &site.firmware_global;
        ReprovisionSettings {
            verify_poll_interval_secs: hr.verify_poll_interval.as_secs().max(1),
            verify_max_polls: hr.verify_max_polls,
            task_timeout_secs: site.redfish.task_timeout.as_secs().max(1),
            bmc_healthy_reads: hr.bmc_healthy_reads,
            retry_interval_secs: fg.host_firmware_upgrade_retry_interval.as_secs().max(1),
            max_retries: hr.max_retries,
            max_reactivations: hr.max_reactivations,
            max_upload_retries: hr.max_upload_retries,
            requires_manual_upgrade: fg.requires_manual_upgrade,
            hgx_reboot_delay_secs: fg.hgx_bmc_gpu_reboot_delay.as_secs(),
            power_drain: PowerDrainWaits {
                after_off_secs: hr.power_drain_off_wait.as_secs(),
                after_cycle_secs: hr.power_drain_cycle_wait.as_secs(),
                after_on_secs: hr.power_drain_on_wait.as_secs(),
            },
            pre_update_wait_secs: hr.pre_update_wait.as_secs(),
            script_timeout_secs: hr.script_timeout.as_secs().max(1),
            autoreboot_period: site.machine_updater.instance_autoreboot_period,
            heartbeat_timeout_secs: hr.heartbeat_timeout.as_secs().max(5),
            bmc_waits: BmcWaits::from_site(site),
            approval_recheck_secs: hr.approval_recheck.as_secs().max(1),
        }
    }

    /// The heartbeat timeout of long activities.
    pub fn heartbeat(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.heartbeat_timeout_secs.max(1))
    }
}

/// Input of the workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostReprovisionInput {
    pub machine_id: String,
    /// `AdminCli` for `host reprovision set`, `Automated` for the scheduler.
    pub initiator: String,
    pub update_message: Option<String>,
    pub settings: ReprovisionSettings,
    /// The host runs a tenant instance: the update waits for approval or the autoreboot period,
    /// and goes through platform configuration and discovery boot.
    #[serde(default)]
    pub assigned: bool,
    #[serde(default)]
    pub instance_id: Option<String>,
    /// Set when an earlier run of this workflow continued as new: where it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<Box<crate::host::carried::CarriedRun>>,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_configured_waits_reach_the_workflow_settings() {
        let text = "[site]\nname = \"x\"\n[redfish]\ntimeout = \"7s\"\ninventory_concurrency = 3\nreset_task_timeout = \"90s\"\n\
                    [host_reprovision]\ntask_poll_interval = \"250ms\"\nbmc_reachable_within = \"20m\"\n\
                    power_state_within = \"15m\"\nbmc_goes_down_within = \"45s\"\n";
        let site = SiteConfig::from_toml_str(text, Path::new("/etc/hostfw/site.toml")).expect("loads");
        let w = ReprovisionSettings::from_site(&site).bmc_waits;
        assert_eq!(
            w,
            BmcWaits {
                request_timeout_ms: 7_000,
                inventory_concurrency: 3,
                reset_task_within_ms: 90_000,
                reachable_within_ms: 1_200_000,
                power_state_within_ms: 900_000,
                goes_down_within_ms: 45_000,
                task_poll_interval_ms: 250,
            }
        );
        let defaults = SiteConfig::from_toml_str("[site]\nname = \"x\"\n", Path::new("/etc/hostfw/site.toml")).unwrap();
        assert_eq!(
            ReprovisionSettings::from_site(&defaults).bmc_waits,
            BmcWaits::default(),
            "defaults agree on both sides"
        );
    }
}
