//! The waits inside the BMC activities (activation and platform steps, inventory reads) and the
//! worst-case time each activity can spend in them: what `options` derives the activities'
//! start-to-close timeouts from, so that no configured wait is longer than the timeout around it.
//!
//! Owns [`BmcWaits`] (carried in the workflow's settings and in the activation and platform
//! inputs, so an activity waits exactly as long as its timeout was computed for) and the
//! per-step budgets. It must not choose timeouts' margins or retry policies (`options`) nor
//! perform anything (the activities wait).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::contracts::{ActivationStep, PlatformStep};
pub use crate::tunables::{
    INVENTORY_FIXED_GETS, INVENTORY_MEMBERS_BOUND, ISSUE_REQUESTS, POLL_PAUSE, PREFLIGHT_REQUESTS,
};

fn d_request_timeout_ms() -> u64 {
    30_000
}
fn d_inventory_concurrency() -> u32 {
    4
}
fn d_reset_task_within_ms() -> u64 {
    5 * 60_000
}
fn d_reachable_within_ms() -> u64 {
    10 * 60_000
}
fn d_power_state_within_ms() -> u64 {
    10 * 60_000
}
fn d_goes_down_within_ms() -> u64 {
    30_000
}
fn d_task_poll_interval_ms() -> u64 {
    2_000
}

/// The waits of the BMC activities, from the site config (milliseconds, so test sites can use
/// sub-second values). The defaults are the values these waits had as constants, so histories
/// recorded before this struct existed decode to what their runs did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BmcWaits {
    /// `[redfish] timeout`: one HTTP request.
    #[serde(default = "d_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// `[redfish] inventory_concurrency`: inventory members read at once.
    #[serde(default = "d_inventory_concurrency")]
    pub inventory_concurrency: u32,
    /// `[redfish] reset_task_timeout`: following the Task a reset answers with.
    #[serde(default = "d_reset_task_within_ms")]
    pub reset_task_within_ms: u64,
    /// `[host_reprovision] bmc_reachable_within`: a reset keeping the BMC unreachable (or, after a
    /// BMC reset, not yet answering its healthy reads).
    #[serde(default = "d_reachable_within_ms")]
    pub reachable_within_ms: u64,
    /// `[host_reprovision] power_state_within`: the host reaching the wanted power state.
    #[serde(default = "d_power_state_within_ms")]
    pub power_state_within_ms: u64,
    /// `[host_reprovision] bmc_goes_down_within`: a BMC going down after Manager.Reset.
    #[serde(default = "d_goes_down_within_ms")]
    pub goes_down_within_ms: u64,
    /// `[host_reprovision] task_poll_interval`: pause between task monitor polls.
    #[serde(default = "d_task_poll_interval_ms")]
    pub task_poll_interval_ms: u64,
}

impl Default for BmcWaits {
    fn default() -> Self {
        BmcWaits {
            request_timeout_ms: d_request_timeout_ms(),
            inventory_concurrency: d_inventory_concurrency(),
            reset_task_within_ms: d_reset_task_within_ms(),
            reachable_within_ms: d_reachable_within_ms(),
            power_state_within_ms: d_power_state_within_ms(),
            goes_down_within_ms: d_goes_down_within_ms(),
            task_poll_interval_ms: d_task_poll_interval_ms(),
        }
    }
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

impl BmcWaits {
    /// The waits inside the BMC activities, from the site config; the workflow derives those
    /// activities' timeouts from them and hands them to the activities.
    pub fn from_site(site: &hostfw_model::SiteConfig) -> BmcWaits {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let hr = &site.host_reprovision;
        BmcWaits {
            request_timeout_ms: ms(site.redfish.timeout),
            inventory_concurrency: site.redfish.inventory_concurrency,
            reset_task_within_ms: ms(site.redfish.reset_task_timeout),
            reachable_within_ms: ms(hr.bmc_reachable_within),
            power_state_within_ms: ms(hr.power_state_within),
            goes_down_within_ms: ms(hr.bmc_goes_down_within),
            task_poll_interval_ms: ms(hr.task_poll_interval),
        }
    }

    pub fn request_timeout(&self) -> Duration {
        ms(self.request_timeout_ms.max(1))
    }
    pub fn reset_task_within(&self) -> Duration {
        ms(self.reset_task_within_ms)
    }
    pub fn reachable_within(&self) -> Duration {
        ms(self.reachable_within_ms)
    }
    pub fn power_state_within(&self) -> Duration {
        ms(self.power_state_within_ms)
    }
    pub fn goes_down_within(&self) -> Duration {
        ms(self.goes_down_within_ms)
    }
    pub fn task_poll_interval(&self) -> Duration {
        ms(self.task_poll_interval_ms)
    }

    /// Issuing one reset or power action: its requests, then following the Task it may answer with.
    fn issue(&self) -> Duration {
        self.request_timeout() * ISSUE_REQUESTS + self.reset_task_within()
    }

    /// One polled wait of `bound`: it may overrun by a pause and one request in flight.
    fn polled(&self, bound: Duration) -> Duration {
        bound + POLL_PAUSE + self.request_timeout()
    }

    /// The most one activation step can spend: every action it issues and every wait it runs
    /// (see the activity `activation::activate`).
    pub fn activation_budget(&self, step: &ActivationStep) -> Duration {
        let power = self.polled(self.power_state_within());
        let reachable = self.polled(self.reachable_within());
        match step {
            ActivationStep::PowerOff | ActivationStep::PowerOn => self.issue() + power,
            ActivationStep::SystemReset { .. } => self.issue() + reachable + power,
            // The model's AC action (an inventory read when no report names the model), Off
            // first (when the model asks), the AC action, back up, On again.
            ActivationStep::AcPowerCycle => self.inventory_budget() + self.issue() * 3 + power * 2 + reachable,
            // Up to `bmc_reachable_within` for the healthy reads, each one request.
            ActivationStep::ManagerReset { .. } => {
                self.issue() + self.polled(self.goes_down_within()) + reachable + self.request_timeout()
            }
        }
    }

    /// The most an activation preflight can spend: the model's identity (an inventory read when
    /// no report names the model) and [`PREFLIGHT_REQUESTS`] reads, each up to the request
    /// timeout. It only reads.
    pub fn preflight_budget(&self) -> Duration {
        self.inventory_budget() + self.request_timeout() * PREFLIGHT_REQUESTS
    }

    /// The most one platform step can spend: a lockdown change is the model's setting (an
    /// inventory read when no report names the model) and a few requests, and may be deferred to
    /// the next reset; a boot is a restart and the wait for power On.
    pub fn platform_budget(&self, step: &PlatformStep) -> Duration {
        match step {
            PlatformStep::Lockdown { .. } => {
                self.inventory_budget() + self.issue() + self.request_timeout() * ISSUE_REQUESTS
            }
            PlatformStep::DiscoveryBoot | PlatformStep::BootToOs => {
                // Boot image read, boot override PATCH, the restart and the wait for On.
                self.request_timeout() * 2 + self.issue() + self.polled(self.power_state_within())
            }
        }
    }

    /// The most an inventory crawl of up to [`INVENTORY_MEMBERS_BOUND`] members can spend: its
    /// fixed reads one after the other, the members `inventory_concurrency` at a time, every
    /// request up to the request timeout.
    pub fn inventory_budget(&self) -> Duration {
        let k = self.inventory_concurrency.max(1);
        self.request_timeout() * (INVENTORY_FIXED_GETS + INVENTORY_MEMBERS_BOUND.div_ceil(k))
    }

    /// The most following an update task bounded by `task_timeout` can spend: the bound, plus
    /// one poll pause and one poll in flight when it runs out.
    pub fn task_budget(&self, task_timeout: Duration) -> Duration {
        task_timeout + self.task_poll_interval() + self.request_timeout()
    }
}
