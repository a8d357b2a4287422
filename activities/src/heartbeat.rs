//! Heartbeating while a long activity step runs, so a dead worker is noticed within the heartbeat
//! timeout and another worker takes the activity over (and so cancellation reaches the step).

use std::future::Future;

pub use crate::tunables::HEARTBEAT_EVERY;
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;

/// Run `step`, heartbeating `what` every [`HEARTBEAT_EVERY`]; a cancelled activity stops waiting.
pub async fn with_heartbeat<T>(
    ctx: &ActivityContext,
    what: &str,
    step: impl Future<Output = Result<T, ActivityError>>,
) -> Result<T, ActivityError> {
    tokio::pin!(step);
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    loop {
        tokio::select! {
            r = &mut step => return r,
            _ = beat.tick() => {
                let _ = ctx.record_heartbeat(what.to_string()).await;
            }
            _ = ctx.cancelled() => return Err(ActivityError::cancelled()),
        }
    }
}
