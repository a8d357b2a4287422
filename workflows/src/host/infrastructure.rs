//! Infrastructure faults are not the host's: a host step
//! whose activity failed because its worker was lost (a heartbeat timeout after a SIGKILL), no
//! worker took it up in time, the site database was away (`Store`: an outage, or a site key the
//! worker cannot use yet after `rotate-key`) or the attempt was superseded, is run again where
//! the host is, after a durable backoff, instead of failing the attempt. Such a failure never
//! spends the host's retries nor its target's error budget; only the host's own failures (the
//! BMC refused, a task failed, a version never came) do.
//!
//! Owns that classification and the wait-and-run-again loop. Deterministic workflow code only:
//! the backoff is a durable timer; the bound is [`INFRASTRUCTURE_RETRIES`].

use std::future::Future;
use std::time::Duration;

use temporalio_workflow::common::error::IncomingError;
use temporalio_workflow::{ActivityExecutionError, TimeoutType, WorkflowResult};

use crate::host::steps::{wait, Ctx};
use crate::tunables::{INFRASTRUCTURE_BACKOFF_FIRST, INFRASTRUCTURE_BACKOFF_MAX, INFRASTRUCTURE_RETRIES};

/// Activity error types (set by `hostfw-activities`) that say the infrastructure failed, not the
/// host: the site database, and an attempt that lost its right to act.
const INFRASTRUCTURE_ERRORS: &[&str] = &["Store", "Superseded"];

/// Why `err` is an infrastructure fault, if it is one.
pub(crate) fn infrastructure_fault(err: &ActivityExecutionError) -> Option<String> {
    let ActivityExecutionError::Failed(failure) = err else {
        return None;
    };
    let mut cause = failure.cause();
    while let Some(c) = cause {
        match c {
            IncomingError::Timeout(t) => {
                return match t.timeout_type() {
                    TimeoutType::Heartbeat => Some("its worker was lost (heartbeat timeout)".into()),
                    TimeoutType::ScheduleToStart => Some("no worker took it up in time".into()),
                    _ => None,
                };
            }
            IncomingError::Application(app) => {
                if let Some(kind) = app.type_name().filter(|t| INFRASTRUCTURE_ERRORS.contains(t)) {
                    let message = &c.failure().message;
                    return Some(match kind {
                        "Store" => format!("the site database failed: {message}"),
                        _ => format!("the attempt was superseded: {message}"),
                    });
                }
                return None;
            }
            _ => cause = c.cause(),
        }
    }
    None
}

/// The pause before run `n` (1-based) of a step waiting out an infrastructure fault.
pub(crate) fn backoff(n: u32) -> Duration {
    let first = INFRASTRUCTURE_BACKOFF_FIRST.as_secs();
    Duration::from_secs(first.saturating_mul(1u64 << n.saturating_sub(1).min(16))).min(INFRASTRUCTURE_BACKOFF_MAX)
}

/// Run `step` (one activity call), and run it again after a durable backoff while it fails for an
/// infrastructure reason, at most [`INFRASTRUCTURE_RETRIES`] times; the outcome is then the
/// host's. `what` names the step in the wait's summary.
pub(crate) async fn through_faults<T, F, Fut>(
    ctx: &Ctx,
    what: &str,
    mut step: F,
) -> WorkflowResult<Result<T, ActivityExecutionError>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ActivityExecutionError>>,
{
    let mut faults = 0;
    loop {
        let outcome = step().await;
        let Err(err) = &outcome else {
            return Ok(outcome);
        };
        let Some(why) = infrastructure_fault(err) else {
            return Ok(outcome);
        };
        if faults >= INFRASTRUCTURE_RETRIES {
            return Ok(outcome);
        }
        faults += 1;
        let pause = backoff(faults);
        let summary = format!(
            "{what}: {why}; not the host's failure: running it again in {} s ({faults}/{INFRASTRUCTURE_RETRIES})",
            pause.as_secs()
        );
        wait(ctx, pause.as_secs(), &summary).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_ten_seconds_to_five_minutes() {
        let b: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(b, vec![10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(backoff(1000).as_secs(), 300);
    }
}
