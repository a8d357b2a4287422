//! The site's scheduling policy: `firmware_global.autoupdate`,
//! `firmware_global.instance_updates_manual_tagging`, the legacy
//! `firmware_global.host_disable_autoupdate` list and the `[machine_updater]` ceiling limits,
//! failure-domain caps, error budget, canary waves, window fit and approval deadline.
//!
//! Owns reading those keys out of `SiteConfig` and the per-host automatic-update decision (S6,
//! S15). It must not look at host state, requests, windows or capacity (see `gates::host_gates`).
//! `host_enable_autoupdate` is deliberately not read (seed: the scheduler ignores it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::approval::ApprovalDeadline;
use super::budget::ErrorBudget;
use super::ceiling::CeilingLimits;
use super::reason::SkipReason;
use super::waves::WavePolicy;
use crate::config::SiteConfig;

/// The policy a pass runs under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SchedulingPolicy {
    /// `firmware_global.autoupdate`: the site default of the per-machine policy.
    pub autoupdate: bool,
    /// `firmware_global.instance_updates_manual_tagging`.
    pub instance_updates_manual_tagging: bool,
    /// `firmware_global.host_disable_autoupdate`: legacy list of machine ids.
    pub host_disable_autoupdate: Vec<String>,
    /// `machine_updater.max_concurrent_machine_updates_absolute` / `_percent`.
    pub limits: CeilingLimits,
    /// `machine_updater.max_concurrent_per_label`: label key → hosts of one value at once.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub label_caps: BTreeMap<String, u32>,
    /// `machine_updater.error_budget_*`.
    #[serde(default)]
    pub error_budget: ErrorBudget,
    /// `machine_updater.canary_waves` and `canary_soak` (the derived default here is off; the
    /// site config's default is on).
    #[serde(default)]
    pub waves: WavePolicy,
    /// `machine_updater.window_fit_min_samples`: past runs needed before window fit estimates
    /// an update (0, the derived default here: off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub window_fit_min_samples: u32,
    /// `machine_updater.approval_deadline` and `approval_deadline_policy` (the derived default
    /// here: no deadline).
    #[serde(default)]
    pub approval_deadline: ApprovalDeadline,
    /// `machine_updater.max_hosts_in_repair`: hosts in repair set apart from the ceiling; at this
    /// many, no new update starts (`None`, the derived default here: no cap, repair hosts hold
    /// update slots as in-flight work, NICo's behaviour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_hosts_in_repair: Option<u32>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl SchedulingPolicy {
    pub fn from_config(cfg: &SiteConfig) -> Self {
        let fg = &cfg.firmware_global;
        let mu = &cfg.machine_updater;
        SchedulingPolicy {
            autoupdate: fg.autoupdate,
            instance_updates_manual_tagging: fg.instance_updates_manual_tagging,
            host_disable_autoupdate: fg.host_disable_autoupdate.clone(),
            limits: CeilingLimits {
                absolute: mu.max_concurrent_machine_updates_absolute,
                percent: mu.max_concurrent_machine_updates_percent,
            },
            label_caps: mu.max_concurrent_per_label.clone(),
            error_budget: ErrorBudget {
                failed_hosts: mu.error_budget_failed_hosts,
                failed_percent: mu.error_budget_failed_percent,
                min_hosts: mu.error_budget_min_hosts,
            },
            waves: WavePolicy {
                waves: mu.canary_waves.clone(),
                soak_ms: i64::try_from(mu.canary_soak.as_millis()).unwrap_or(i64::MAX),
            },
            window_fit_min_samples: mu.window_fit_min_samples,
            approval_deadline: ApprovalDeadline::from_config(cfg),
            max_hosts_in_repair: Some(mu.max_hosts_in_repair),
        }
    }

    /// The automatic-update gate for one machine (S6, S15): an override decides alone
    /// (`Some(true)` enables even with the site off or the machine on the legacy list); without
    /// one, a legacy list entry (exact machine id) disables this machine only, else the site
    /// default applies.
    pub fn auto_update_gate(&self, machine_id: &str, auto_update: Option<bool>) -> Result<(), SkipReason> {
        match auto_update {
            Some(true) => Ok(()),
            Some(false) => Err(SkipReason::AutoUpdateOffHost),
            None if self.host_disable_autoupdate.iter().any(|m| m == machine_id) => Err(SkipReason::LegacyDisableList),
            None if !self.autoupdate => Err(SkipReason::AutoUpdateOffSite),
            None => Ok(()),
        }
    }
}
