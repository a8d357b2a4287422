//! Every tunable constant of the activities, in one file: heartbeat and poll periods, leases,
//! margins and grace periods around the steps that cannot be undone, and how long repairs wait.
//! Values the site configures are not here (see `deps::ActivitySettings` and the site config).
//!
//! Each module that uses one re-exports it under its old name, so callers keep their paths.

use std::time::Duration;

/// Heartbeat period: well inside the shortest heartbeat timeout the workflows use.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);

/// Lease of a slot while its holder runs (renewed every heartbeat).
pub const SLOT_LEASE_MS: i64 = 60_000;

/// Poll interval bounds of an upload-slot waiter (see `host::upload_slot`): first and longest.
pub const SLOT_POLL_FIRST: Duration = Duration::from_millis(500);
pub const SLOT_POLL_MAX: Duration = Duration::from_secs(5);

/// Bound on one confirmed-heartbeat call (a down server must not stall the caller).
pub const CONFIRM_RPC_TIMEOUT: Duration = Duration::from_secs(2);

/// Liveness gate (`host::liveness`): safety margin kept before the server's heartbeat deadline:
/// the time the step about to start needs to begin, clock granularity and the server's timer slack.
pub const LIVENESS_MARGIN: Duration = Duration::from_secs(1);

/// Pause between confirmation tries while the gate waits for the server to answer.
pub const CONFIRM_RETRY: Duration = Duration::from_millis(500);

/// Longest output tail kept, per stream, in characters.
pub const OUTPUT_LIMIT: usize = 1500;

/// How long to wait for the script's output to close once its group is dead (a straggler that
/// escaped the group may hold the pipes): then what was read is reported.
pub const OUTPUT_DRAIN_GRACE: Duration = Duration::from_secs(2);

/// How long a finished run keeps trying to give back a lease (script lock, upload slot) after a failed release.
pub const RELEASE_RETRY_FOR: Duration = Duration::from_secs(5 * 60);

/// Pause between the healthy reads required after a BMC reset, and between power-state reads.
pub const HEALTHY_READ_PAUSE: Duration = Duration::from_millis(500);

/// The worker kills a script at its timeout; `timeout(1)` kills the group this much later on its
/// own, for the case that the worker is dead by then.
pub const HARD_TIMEOUT_MARGIN: Duration = Duration::from_secs(5);

/// After an unverifiable run's deadline, how long more to allow for its kill to take effect.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(5);

/// How often a script-lock waiter looks at the earlier run again (and heartbeats).
pub const SCRIPT_POLL_EVERY: Duration = Duration::from_secs(1);

/// How long before an activity was scheduled its workflow's inventory read surely happened.
pub const STALE_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The scheduler leaves requests younger than this alone: their maker may be starting the
/// workflow right now (it writes the request first).
pub const SETTLE_MS: i64 = 30_000;

/// How often the scheduler passes of one worker look for requests without a workflow (a Temporal
/// visibility list of every running host workflow). Event-driven passes run on every host's end,
/// hundreds a minute in a large rollout; the repair needs no such rate: a request is judged only
/// after `SETTLE_MS` anyway, so a few more seconds before its adoption cost nothing.
pub const ORPHAN_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// `hostfw doctor` (an operator looking at a quiet site) waits less.
pub const DOCTOR_SETTLE_MS: i64 = 5_000;

/// Webhook deliveries one notifier tick claims at most (`site::notifier`): each is one POST
/// bounded by `notifications.timeout`, so a tick ends well within its lease.
pub const NOTIFIER_CLAIM_LIMIT: u32 = 20;

/// A claimed delivery's lease beyond `notifications.timeout` (`site::notifier`): a live worker
/// records the outcome well within it; a dead worker's claim runs out this long after the POST
/// could have ended, and another worker sends it again.
pub const NOTIFIER_LEASE_SLACK: Duration = Duration::from_secs(30);
