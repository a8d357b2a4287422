//! hostfw-redfish: the Redfish client hostfw uses to talk to BMCs.
//!
//! This file only wires the modules and re-exports the public API; it must not hold logic.
//! One concept per module: `client` (transport + auth), `body` (reply bodies read up to a
//! bound), `etag` (ETags and If-Match on writes), `expand`
//! (`$expand` support and query), `inventory` (resource walking, explore),
//! `firmware_inventory` (the crawl's FirmwareInventory read), `link_cache` (FirmwareInventory links
//! remembered between crawls),
//! `systems` (which ComputerSystem names the machine and which is the host to reset), `update`
//! (upload routes), `task` (task monitor), `running_tasks` (update tasks already running), `reset` (resets, ResetType choice, reset tasks,
//! reachability), `reset_allowed` (what the reset actions allow, read before a plan's first one), `ac_cycle` (AC power cycle through Chassis.Reset), `platform` (lockdown, boot
//! override, booted image), `tls` (certificate trust, certificate errors), `models` (lenient serde
//! types), `error` (`RedfishError`), `timeouts` (every timeout and bound, and its reason).
//!
//! Documents are decoded leniently (every property optional, wrong types become `None`, unknown
//! properties kept), every URI is discovered through `@odata.id` links or the UpdateService, and
//! every error names the BMC, the URL and the HTTP status or cause.

// `RedfishError` names the BMC, the URL, the method, the HTTP status and the BMC's own message on
// every variant, so it is larger than clippy's default bound. It is returned once per request
// over the network; boxing it would save nothing measurable and cost every caller a deref.
#![allow(clippy::result_large_err)]

mod ac_cycle;
mod body;
mod client;
mod error;
mod etag;
mod expand;
mod firmware_inventory;
mod inventory;
mod link_cache;
mod lockdown;
pub mod models;
mod platform;
mod reset;
mod reset_allowed;
mod running_tasks;
mod systems;
mod task;
pub mod timeouts;
mod tls;
mod update;

pub use client::{parse_retry_after, AuthMode, BmcEndpoint, ClientOptions, RedfishClient};
pub use error::RedfishError;
pub use link_cache::LinkCache;
pub use lockdown::LockdownState;
pub use reset::ResetDone;
pub use reset_allowed::ResetsAllowed;
pub use running_tasks::RunningUpdateTask;
pub use task::{TaskFinal, TaskOutcome, TaskPoll, TaskRef, WaitOptions};
pub use update::{UpdateServiceInfo, UploadAccepted, UploadRequest, UploadRoute};
