//! Error budgets per rollout target (issue "safe rollouts", piece 1): a target is one catalog
//! model's component at one desired version. The site database keeps, per target, which hosts
//! attempted it and which of them failed (and why); when the failed hosts reach the site's
//! budget, the target is paused: the scheduler starts no new host that would install it, while
//! the other targets go on. `hostfw budget resume` clears the target's record.
//!
//! Owns the target key, the per-target record as the scheduler reads it, the budget arithmetic
//! and the paused verdict with its evidence. It must do no I/O and read no clock: the store
//! gives the records, the config the budget.
//!
//! The rules: hosts are counted once per target however often they retried (a flapping host is
//! one failed host, not a bad image); a target is paused when `failed_hosts` is set (not 0) and
//! at least that many hosts failed, or when `failed_percent` is set (not 0), at least
//! `min_hosts` hosts attempted and failed × 100 ≥ percent × attempted.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::waves::WaveRecord;
use crate::component::ComponentType;

/// One rollout target: a catalog model's component at its desired version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Target {
    pub vendor: String,
    pub model: String,
    pub component: ComponentType,
    pub version: String,
}

impl Target {
    /// The `hostfw budget resume` arguments that name this target.
    pub fn resume_command(&self) -> String {
        format!(
            "hostfw budget resume --vendor {:?} --model {:?} --component {} --version {:?}",
            self.vendor, self.model, self.component, self.version
        )
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {} {}", self.vendor, self.model, self.component, self.version)
    }
}

/// One host's failure on a target: the evidence `plan` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetFailure {
    pub machine_id: String,
    /// Why its last failed attempt failed.
    pub reason: String,
    /// When, unix ms.
    pub at_ms: i64,
}

/// What the site database knows of one target since it was last resumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetRecord {
    pub target: Target,
    /// Hosts that began installing it.
    pub attempted_hosts: u32,
    /// The hosts among them whose attempt failed, oldest failure first.
    pub failures: Vec<TargetFailure>,
    /// The hosts among them whose latest attempt has not ended (neither finished nor failed),
    /// in machine id order: the canary waves' running hosts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<String>,
    /// The hosts among them whose latest attempt finished and that never failed it, in machine
    /// id order: with `open` and `failures`, every attempted host by name, so a host that
    /// finished and has to take the target again (aborted mid-install, a default that moved
    /// back) is one host to the canary waves, not two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finished: Vec<String>,
    /// When the latest attempt ended (finished or failed), unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_done_ms: Option<i64>,
    /// When the latest attempt began, unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempt_ms: Option<i64>,
    /// The failed hosts whose latest attempt failed (not retried since, or retried in vain): a
    /// host that failed once and then succeeded on a retry is not among them. Canary waves
    /// decide on these; the budget's own rules count every failed host.
    #[serde(default)]
    pub failed_last: u32,
    /// The target's canary waves as recorded in the site database since its first wave started
    /// (`gates::waves`): the host count its wave sizes come from and the wave reached. `None`:
    /// no wave recorded since its last resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waves: Option<WaveRecord>,
}

impl TargetRecord {
    pub fn failed_hosts(&self) -> u32 {
        u32::try_from(self.failures.len()).unwrap_or(u32::MAX)
    }
}

/// `[machine_updater] error_budget_*`: when a target pauses. 0 turns a rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBudget {
    /// `error_budget_failed_hosts`: pause once this many hosts failed.
    pub failed_hosts: u32,
    /// `error_budget_failed_percent`: pause once this share of the attempted hosts failed...
    pub failed_percent: u32,
    /// `error_budget_min_hosts`: ...and at least this many hosts attempted.
    pub min_hosts: u32,
}

impl Default for ErrorBudget {
    fn default() -> Self {
        ErrorBudget { failed_hosts: 3, failed_percent: 20, min_hosts: 10 }
    }
}

impl ErrorBudget {
    /// Whether `failed` of `attempted` hosts spend the budget, and by which rule (the sentence
    /// `plan` prints).
    pub fn spent(&self, attempted: u32, failed: u32) -> Option<String> {
        if self.failed_hosts > 0 && failed >= self.failed_hosts {
            return Some(format!(
                "{failed} hosts failed, at least machine_updater.error_budget_failed_hosts = {}",
                self.failed_hosts
            ));
        }
        if self.failed_percent > 0
            && attempted >= self.min_hosts.max(1)
            && u64::from(failed) * 100 >= u64::from(self.failed_percent) * u64::from(attempted)
        {
            return Some(format!(
                "{failed} of {attempted} hosts failed, at least machine_updater.error_budget_failed_percent = {} % \
                 (with at least error_budget_min_hosts = {} attempted)",
                self.failed_percent, self.min_hosts
            ));
        }
        None
    }

    /// Whether the failures so far exceed the budget's share with no minimum sample: a canary
    /// wave opens the next one only when this is false (one failed canary of one is 100 %).
    pub fn share_exceeded(&self, attempted: u32, failed: u32) -> bool {
        failed > 0
            && (self.failed_percent == 0
                || u64::from(failed) * 100 > u64::from(self.failed_percent) * u64::from(attempted))
    }
}

/// A paused target and why: the scheduler starts no host that would install it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PausedTarget {
    pub target: Target,
    pub attempted_hosts: u32,
    /// The rule that spent the budget.
    pub rule: String,
    /// Which hosts failed and why.
    pub failures: Vec<TargetFailure>,
    /// Paused because its canary wave ended with too many failures (`gates::waves`), not by
    /// the budget's own rules.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_wave: bool,
}

/// The targets among `records` whose budget is spent, in record order.
pub fn paused_targets(budget: &ErrorBudget, records: &[TargetRecord]) -> Vec<PausedTarget> {
    records
        .iter()
        .filter_map(|r| {
            budget.spent(r.attempted_hosts, r.failed_hosts()).map(|rule| PausedTarget {
                target: r.target.clone(),
                attempted_hosts: r.attempted_hosts,
                rule,
                failures: r.failures.clone(),
                by_wave: false,
            })
        })
        .collect()
}

/// The targets a drifted host of `model` would install: each differing component at its
/// desired version, named by the catalog entry's vendor and model.
pub fn host_targets(model: &crate::HostModel, differing: &[ComponentType]) -> Vec<Target> {
    let desired = model.desired_versions();
    differing
        .iter()
        .filter_map(|c| {
            desired.get(c).map(|v| Target {
                vendor: model.vendor.clone(),
                model: model.model.clone(),
                component: *c,
                version: v.clone(),
            })
        })
        .collect()
}
