//! Activity contracts of the site workflows (Machine Update Manager, Site Explorer, Site Notifier): names,
//! inputs and outputs. Declarations only; `hostfw-activities` implements them.

use serde::{Deserialize, Serialize};
use temporalio_common::ActivityError;
use temporalio_macros::activity_definitions;

/// Input of `hostfw.manager.pass`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassRequest {
    /// Why this pass runs ("interval", "host m1 finished", ...), for the log and the Web UI.
    pub reasons: Vec<String>,
}

/// A host the pass tried to start but could not (the request was rolled back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartFailure {
    pub machine_id: String,
    pub error: String,
}

/// What one scheduler pass saw and did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassSummary {
    /// Managed hosts, and how many of them count as unhealthy.
    pub total: u32,
    pub unhealthy: u32,
    /// The site-wide ceiling and how it was computed.
    pub ceiling: u32,
    pub ceiling_how: String,
    /// Hosts consuming the budget before this pass started any.
    pub in_flight: u32,
    /// Hosts at their catalog versions.
    pub compliant: u32,
    /// Hosts given a request and a workflow by this pass.
    pub started: Vec<String>,
    pub start_failures: Vec<StartFailure>,
    /// Drifted (or undecidable) hosts not started, by reason kind (e.g. "CeilingReached": 12).
    pub waiting: Vec<(String, u32)>,
    /// The configured pause between passes (read each pass, so a config change applies).
    pub run_interval_secs: u64,
    /// Sooner than the interval when an update window opens before it.
    pub next_wake_secs: Option<u64>,
    /// What opens at `next_wake_secs` ("update window opens at ...", "canary wave of ... opens at
    /// ..."): the reason of the pass that timer starts. Absent in passes recorded before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_wake_reason: Option<String>,
    /// Wake-up signals start a pass at once (`machine_updater.event_driven`); when false only the
    /// interval does (NICo's policy).
    #[serde(default = "yes")]
    pub event_driven: bool,
    /// The operator's brakes in force (freezes, then targets paused by hand), one line each with
    /// who set them: the scheduler's current details in the Web UI. Absent in passes recorded
    /// before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brakes: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Input of `hostfw.explorer.crawl`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlRequest {
    /// Explore only these BMC addresses (`ip` or `ip:port`); empty = every managed host.
    pub only: Vec<String>,
}

/// What one crawl did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlSummary {
    pub explored: u32,
    /// BMCs that could not be explored (the error is stored with the report), `(machine, error)`.
    pub failed: Vec<(String, String)>,
    /// Requested addresses that belong to no managed host.
    pub unknown: Vec<String>,
    /// The configured pause between crawls (read each crawl).
    pub run_interval_secs: u64,
}

/// Input of `hostfw.notifier.round`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifierRoundRequest {
    /// How long the round goes on delivering (polling the outbox every
    /// `notifications.poll_interval`) before it returns.
    pub run_for_secs: u64,
}

/// What one notifier round did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifierRoundSummary {
    /// POSTs answered 2xx.
    pub delivered: u32,
    /// POSTs that failed and will be retried.
    pub failed: u32,
    /// Deliveries given up (`notifications.give_up_after`).
    pub gave_up: u32,
    /// Events and deliveries pruned (`notifications.retention`).
    pub pruned: u64,
}

/// The activities of the site workflows, as the workflows see them.
pub struct SiteActivities;

#[activity_definitions]
impl SiteActivities {
    /// One scheduler pass: read the site, apply the gates, request and start the selected hosts.
    #[activity(name = crate::names::ACT_MANAGER_PASS)]
    pub fn manager_pass(input: PassRequest) -> Result<PassSummary, ActivityError> {
        unimplemented!()
    }

    /// Explore BMCs (bounded concurrency) and store their reports and errors.
    #[activity(name = crate::names::ACT_EXPLORER_CRAWL)]
    pub fn explorer_crawl(input: CrawlRequest) -> Result<CrawlSummary, ActivityError> {
        unimplemented!()
    }

    /// Deliver due webhook notifications for a while (heartbeating), then return what it did.
    #[activity(name = crate::names::ACT_NOTIFIER_ROUND)]
    pub fn notifier_round(input: NotifierRoundRequest) -> Result<NotifierRoundSummary, ActivityError> {
        unimplemented!()
    }
}

/// Markers of the activities above, for `#[activity(definition = ...)]` in other crates.
pub mod site_defs {
    pub use super::site_activities::*;
}
