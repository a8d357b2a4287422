//! Every tunable constant of the workflows, in one file: bounds that size activity timeouts, how
//! long a run grows before it continues as new, and the Scout pickup limit. Values the site
//! configures are not here (they travel in the workflow input, see `host::settings`).
//!
//! Changing one changes workflow behaviour: a value that reaches a command (a timer, a timeout,
//! a continue-as-new point) must keep the recorded histories replaying, or go behind a patch.

use std::time::Duration;

/// Requests one reset or power action costs before its POST is answered: the resource with the
/// action, its ActionInfo, the POST, and the first read of a Task it answers with.
pub const ISSUE_REQUESTS: u32 = 4;

/// Requests an activation preflight costs besides the model's identity: the ServiceRoot, the
/// Systems and Managers collections and a few members each, the `ac_cycle` resource, and an
/// ActionInfo per reset action.
pub const PREFLIGHT_REQUESTS: u32 = 16;

/// Longest pause between two polls of a wait (the reachability poll backs off to 5 s): a wait
/// may overrun its deadline by one pause plus one request in flight.
pub const POLL_PAUSE: Duration = Duration::from_secs(5);

/// Reads of an inventory crawl besides the FirmwareInventory members: ServiceRoot, Systems and
/// a few System members, UpdateService, and the collection's pages.
pub const INVENTORY_FIXED_GETS: u32 = 16;

/// Most FirmwareInventory members an inventory timeout is sized for. The largest captured
/// inventory (a Supermicro) lists 111; twice that leaves room for bigger machines.
pub const INVENTORY_MEMBERS_BOUND: u32 = 256;

/// Added to a derived timeout: opening a client, reading the machine row and a few site-database
/// writes around the waits, with room for a slow database.
pub const MARGIN: Duration = Duration::from_secs(60);

/// Longest stdout/stderr tail Scout reports, in characters.
pub const SCOUT_OUTPUT_LIMIT: usize = 1500;

/// How long a host's Scout may take to pick up its task before the attempt fails: a host whose
/// agent is not running should not hold the update forever.
pub const SCOUT_PICKUP: Duration = Duration::from_secs(10 * 60);

/// Continue as new at the top of the attempt loop once the server suggests it, or at the latest
/// when the history has this many events (Temporal's hard limit is 51,200).
pub const HISTORY_EVENTS_BOUND: u32 = 10_000;

/// How many recent events [`HostStatus::events`] keeps.
pub const STATUS_EVENTS_KEPT: usize = 50;

/// Passes per run before the workflow continues as new (each pass adds about 8 events).
pub const PASSES_PER_RUN: u32 = 100;

/// Crawls per run before the workflow continues as new.
pub const CRAWLS_PER_RUN: u32 = 50;

/// Heartbeat timeout of the crawl activity.
pub const CRAWL_HEARTBEAT: Duration = Duration::from_secs(20);

/// How many times in a row one host step is run again after an infrastructure fault (its worker
/// lost, the site database away; see `host::infrastructure`) before the fault counts as the
/// host's failure after all. With [`INFRASTRUCTURE_BACKOFF_MAX`] that waits out about four
/// hours of outage: longer than any restart, short enough that a host whose step keeps losing
/// its worker (a step that kills the worker) is not retried forever unseen.
pub const INFRASTRUCTURE_RETRIES: u32 = 60;

/// First pause before a step is run again after an infrastructure fault; it doubles each time.
pub const INFRASTRUCTURE_BACKOFF_FIRST: Duration = Duration::from_secs(10);

/// Longest pause between two runs of a step waiting out an infrastructure fault.
pub const INFRASTRUCTURE_BACKOFF_MAX: Duration = Duration::from_secs(5 * 60);

/// How soon a host held by a freeze before its next component first asks again whether the
/// freeze is lifted (a `settings_changed` signal, which `hostfw unfreeze` sends, asks at once);
/// the pause doubles up to [`FREEZE_RECHECK_MAX`].
pub const FREEZE_RECHECK: Duration = Duration::from_secs(60);

/// Longest pause between two asks of a held host: a freeze may last days, and each ask adds a
/// few events to the history (about 400 a day at this pace, far below the history bound).
pub const FREEZE_RECHECK_MAX: Duration = Duration::from_secs(15 * 60);

/// How long one notifier round (`hostfw.notifier.round`) delivers before it returns to the
/// `SiteNotifier` workflow: one activity (six history events) per minute.
pub const NOTIFIER_ROUND: Duration = Duration::from_secs(60);

/// Notifier rounds per workflow run before continue-as-new (about 600 events, 100 minutes).
pub const NOTIFIER_ROUNDS_PER_RUN: u32 = 100;
