//! Every activity timeout and retry policy of the workflows, in one place, with the reason for
//! each value.
//!
//! The timeouts of activities that wait on a BMC are derived from the configured waits inside
//! them (`waits::BmcWaits`, from the site config): the worst case those waits allow plus
//! [`MARGIN`], so no configured wait can outlast the timeout around it.

use std::time::Duration;

use temporalio_workflow::{ActivityOptions, LocalActivityOptions, RetryPolicy};

use crate::contracts::{ActivationStep, PlatformStep};
use crate::host::settings::ReprovisionSettings;
pub use crate::tunables::MARGIN;

/// Error type names (set by `hostfw-activities`) that no retry can fix: bad input, a BMC that
/// refused the request, a catalog that points at nothing.
pub const NON_RETRYABLE_ERRORS: &[&str] = &["BadInput", "BmcRejected", "NotFound"];

/// Exponential backoff from 1 s, doubling, capped at `max_interval`; `max_attempts` 0 = no cap.
fn policy(max_attempts: u32, max_interval: Duration) -> RetryPolicy {
    RetryPolicy::builder()
        .initial_interval(Duration::from_secs(1))
        .backoff_coefficient(2.0)
        .maximum_interval(max_interval)
        .maximum_attempts(max_attempts)
        .non_retryable_error_types(NON_RETRYABLE_ERRORS.iter().copied())
        .build()
}

/// Site-database bookkeeping (state, substate, health report, request): quick and local, so a
/// short timeout; retried without a cap because the database may be briefly unavailable and the
/// workflow cannot go on without recording where it is.
pub fn bookkeeping() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
        .retry_policy(policy(0, Duration::from_secs(30)))
        .build()
}

/// Bookkeeping run as a local activity (deferred substate records no activity
/// carried, the catalog lookup and route choice). The same reasoning as [`bookkeeping`]: a short
/// attempt, retried without a cap while the database is away. Backoffs past 10 s wait on a
/// workflow timer instead of holding the workflow task; the schedule-to-close is a day (the
/// SDK's default would end the workflow after 100 s of database outage).
pub fn local_bookkeeping() -> LocalActivityOptions {
    LocalActivityOptions::builder()
        .start_to_close_timeout(Duration::from_secs(30))
        .schedule_to_close_timeout(Duration::from_secs(24 * 3600))
        .timer_backoff_threshold(Duration::from_secs(10))
        .retry_policy(policy(0, Duration::from_secs(30)))
        .build()
}

/// A Redfish inventory crawl: a few fixed GETs and one per FirmwareInventory member (111 on the
/// captured Supermicro), the members `inventory_concurrency` at a time. The timeout is the
/// crawl's bound at the configured request timeout (`BmcWaits::inventory_budget`) plus
/// [`MARGIN`]: generous, because the activity heartbeats while it reads, so a dead worker is
/// noticed within the heartbeat timeout while a slow BMC is given long enough. Retried with
/// backoff up to 10 times because a BMC that was just reset answers late.
pub fn inventory(settings: &ReprovisionSettings) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(settings.bmc_waits.inventory_budget() + MARGIN)
        .heartbeat_timeout(settings.heartbeat())
        .retry_policy(policy(10, Duration::from_secs(30)))
        .build()
}

/// Pushing an image, after waiting for one of the site's `max_uploads` slots. The wait has no
/// bound of its own (on a busy site it lasts as long as other hosts' flashes) and must not eat the
/// transfer's time, so the start-to-close is only a ceiling, a day; the transfer is bounded on its
/// own from the moment its POST starts (the Redfish client's upload timeout), and the activity
/// does not start a transfer that would not fit before this deadline. The activity heartbeats
/// while it waits and uploads, so a dead worker is noticed within the heartbeat timeout (and its
/// retried attempt takes its slot over).
/// A busy BMC (503) or a dropped connection is worth a few more attempts with backoff, bounded at 5.
pub fn upload(heartbeat: Duration) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(24 * 60 * 60))
        .heartbeat_timeout(heartbeat)
        .retry_policy(policy(5, Duration::from_secs(60)))
        .build()
}

/// Following an update task: `task_timeout` is the site's bound on a whole flash (config
/// `redfish.task_timeout`); the activity's own wait ends there with a clear error, so the timeout
/// is that bound plus a poll (`BmcWaits::task_budget`) plus [`MARGIN`]. The activity heartbeats
/// every poll, so a dead worker is noticed within the heartbeat timeout and another worker
/// resumes polling the same task.
pub fn wait_task(settings: &ReprovisionSettings) -> ActivityOptions {
    let task_timeout = Duration::from_secs(settings.task_timeout_secs);
    ActivityOptions::with_start_to_close_timeout(settings.bmc_waits.task_budget(task_timeout) + MARGIN)
        .heartbeat_timeout(settings.heartbeat())
        .retry_policy(policy(5, Duration::from_secs(30)))
        .build()
}

/// One activation step (a reset or power action and the wait for its effect): BMC reboots take
/// several minutes on real hardware. The timeout is the step's worst case under the configured
/// waits (`BmcWaits::activation_budget`: e.g. a system restart follows its reset Task, waits for
/// the BMC and then for power On) plus [`MARGIN`]; 3 attempts; the activity heartbeats while it
/// waits.
pub fn activation(step: &ActivationStep, settings: &ReprovisionSettings) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(settings.bmc_waits.activation_budget(step) + MARGIN)
        .heartbeat_timeout(settings.heartbeat())
        .retry_policy(policy(3, Duration::from_secs(60)))
        .build()
}

/// An activation preflight (reads only, see `BmcWaits::preflight_budget`) plus [`MARGIN`]; 3
/// attempts, like the steps it guards: an unreachable BMC is worth another try, a refusal is
/// not (`BmcRejected`).
pub fn preflight(settings: &ReprovisionSettings) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(settings.bmc_waits.preflight_budget() + MARGIN)
        .heartbeat_timeout(settings.heartbeat())
        .retry_policy(policy(3, Duration::from_secs(60)))
        .build()
}

/// One platform step (lockdown, discovery boot, boot to OS): like an activation step, its
/// timeout is its worst case under the configured waits (`BmcWaits::platform_budget`) plus
/// [`MARGIN`]; 3 attempts; the activity heartbeats while it waits.
pub fn platform(step: &PlatformStep, settings: &ReprovisionSettings) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(settings.bmc_waits.platform_budget(step) + MARGIN)
        .heartbeat_timeout(settings.heartbeat())
        .retry_policy(policy(3, Duration::from_secs(60)))
        .build()
}

/// `options` with a one-line summary the Web UI shows for the activity (at most 200 characters).
pub fn summarized(mut options: ActivityOptions, summary: impl Into<String>) -> ActivityOptions {
    let mut text: String = summary.into();
    if text.chars().count() > 200 {
        text = text.chars().take(199).collect::<String>() + "…";
    }
    options.summary = Some(text);
    options
}

/// One scheduler pass, run as a local activity: it reads the site database, computes the plan
/// and starts a few workflows; seconds even on a large site, so 5 minutes (the pass's reasons
/// are in its input, which the marker records). A pass outliving the workflow task timeout is kept alive by the SDK's task
/// heartbeats; a failed attempt is retried like the activity's, backing off to one minute
/// (longer backoffs become timers in the history), for up to 30 days (the SDK's default
/// schedule-to-close would end the scheduler after 100 s of database outage).
pub fn manager_pass_local() -> LocalActivityOptions {
    LocalActivityOptions::builder()
        .start_to_close_timeout(Duration::from_secs(5 * 60))
        .schedule_to_close_timeout(Duration::from_secs(30 * 24 * 3600))
        .timer_backoff_threshold(Duration::from_secs(10))
        .retry_policy(policy(0, Duration::from_secs(60)))
        .build()
}

/// A crawl of the whole site: thousands of BMCs at bounded concurrency take minutes, so two
/// hours; it heartbeats per BMC explored, so a dead worker is noticed within `heartbeat`.
/// Retried without a cap, backing off to five minutes.
pub fn crawl(heartbeat: Duration) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(2 * 60 * 60))
        .heartbeat_timeout(heartbeat)
        .retry_policy(policy(0, Duration::from_secs(5 * 60)))
        .build()
}

/// A notifier round (`tunables::NOTIFIER_ROUND` of POSTs, each bounded by
/// `notifications.timeout`): the round's length plus ten minutes of slack. It heartbeats every
/// 2 s, so a worker killed mid-round is noticed within 20 s and the round starts again on
/// another worker (the lease on each claimed delivery keeps replicas from double-sending).
/// Retried without a cap, backing off to one minute (the site database may be away).
pub fn notifier_round(round: Duration) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(round + Duration::from_secs(10 * 60))
        .heartbeat_timeout(Duration::from_secs(20))
        .retry_policy(policy(0, Duration::from_secs(60)))
        .build()
}

#[cfg(test)]
mod fit_tests;
