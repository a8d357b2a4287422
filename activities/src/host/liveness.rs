//! Whether this activity attempt is still the one the Temporal server waits for, so a step that
//! cannot be undone (a firmware POST) is never started by an attempt the server already gave up on.
//!
//! What the SDK (temporalio-sdk 1.1) offers does not tell it: `ActivityContext::record_heartbeat`
//! only queues the details for the core's throttled heartbeat loop (its `Result` is a payload
//! conversion error, never a delivery report); `ctx.cancelled()` fires only when a heartbeat
//! *reaches* the server and learns of a cancel or of a timed-out attempt, so it stays silent while
//! the server is down; `ctx.info()` gives the `heartbeat_timeout` and the `task_token`. So this
//! module confirms heartbeats itself: it sends `RecordActivityTaskHeartbeat` for the attempt's task
//! token through `ctx.client()` (the worker's own connection) and reads the answer:
//! - success: the server recorded it, so it cannot time this attempt out before the moment the
//!   request was sent plus the heartbeat timeout;
//! - `NotFound`: the attempt is over (timed out, or its workflow closed): stop at once;
//! - anything else (server down or unreachable): nothing learnt; once no heartbeat was confirmed
//!   for the heartbeat timeout minus [`MARGIN`], the server may already have timed the attempt out
//!   and scheduled a retry, so the attempt must stop.
//!
//! [`Liveness::confirm_now`] is the gate before an irreversible step: it needs a heartbeat
//! confirmed right then. [`Liveness::beat`] is the periodic heartbeat of long waits and transfers.

use std::time::Duration;

use temporalio_client::errors::AsyncActivityError;
use temporalio_client::{ActivityIdentifier, RpcOptions};
use temporalio_common::protos::TaskToken;
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;
use tokio::time::Instant;

use crate::error;
use crate::tunables::CONFIRM_RETRY;
use crate::tunables::CONFIRM_RPC_TIMEOUT;
pub use crate::tunables::LIVENESS_MARGIN as MARGIN;

/// Heartbeat bookkeeping of one activity attempt.
pub struct Liveness {
    created: Instant,
    /// When the last heartbeat the server confirmed was sent.
    last_confirmed: Option<Instant>,
    heartbeat_timeout: Option<Duration>,
}

impl Liveness {
    pub fn new(ctx: &ActivityContext) -> Self {
        Liveness { created: Instant::now(), last_confirmed: None, heartbeat_timeout: ctx.info().heartbeat_timeout }
    }

    /// How long the server may still wait for this attempt's next heartbeat, as far as the worker
    /// can tell (`None`: no heartbeat timeout, the server never times the attempt out on one).
    fn window_left(&self) -> Option<Duration> {
        let timeout = self.heartbeat_timeout?;
        let since = self.last_confirmed.unwrap_or(self.created);
        Some(timeout.saturating_sub(MARGIN).saturating_sub(since.elapsed()))
    }

    /// Err when the attempt must stop: no heartbeat confirmed within the heartbeat timeout.
    pub fn check(&self) -> Result<(), ActivityError> {
        match (self.window_left(), self.heartbeat_timeout) {
            (Some(left), Some(timeout)) if left.is_zero() => Err(error::superseded(format!(
                "no heartbeat reached the Temporal server for {:.1} s (heartbeat timeout {:.1} s): the server may \
                 have retried this activity already, so this attempt stops before any irreversible step",
                self.last_confirmed.unwrap_or(self.created).elapsed().as_secs_f64(),
                timeout.as_secs_f64()
            ))),
            _ => Ok(()),
        }
    }

    /// One periodic heartbeat: through the SDK, and confirmed with the server. Err when the server
    /// says the attempt is over, or when none was confirmed for too long ([`Liveness::check`]).
    pub async fn beat(&mut self, ctx: &ActivityContext, details: &str) -> Result<(), ActivityError> {
        let _ = ctx.record_heartbeat(details.to_string()).await;
        self.confirm(ctx, details).await?;
        self.check()
    }

    /// The gate before an irreversible step: a heartbeat confirmed now. Retries while the server
    /// does not answer, for as long as the attempt may still be the live one; Err otherwise.
    pub async fn confirm_now(&mut self, ctx: &ActivityContext, details: &str) -> Result<(), ActivityError> {
        loop {
            if self.confirm(ctx, details).await? {
                return Ok(());
            }
            self.check()?;
            if self.heartbeat_timeout.is_none() {
                // No heartbeat timeout: the server never retries on a silent attempt; go on.
                return Ok(());
            }
            tokio::time::sleep(CONFIRM_RETRY).await;
        }
    }

    /// Send one heartbeat and read the server's answer: Ok(true) confirmed, Ok(false) no answer,
    /// Err when the attempt is over.
    async fn confirm(&mut self, ctx: &ActivityContext, details: &str) -> Result<bool, ActivityError> {
        if ctx.info().is_local || ctx.info().task_token.is_empty() {
            return Ok(true);
        }
        let sent = Instant::now();
        let handle = ctx.client().get_async_activity_handle(ActivityIdentifier::from_task_token(TaskToken::from(
            ctx.info().task_token.clone(),
        )));
        let options = RpcOptions::builder().timeout(CONFIRM_RPC_TIMEOUT).build();
        let call = handle.heartbeat(Some(details.to_string()), options);
        match tokio::time::timeout(CONFIRM_RPC_TIMEOUT, call).await {
            Ok(Ok(_)) => {
                self.last_confirmed = Some(sent);
                Ok(true)
            }
            Ok(Err(AsyncActivityError::NotFound(status))) => Err(error::superseded(format!(
                "the Temporal server no longer knows this activity attempt ({}): it timed out or its workflow \
                 closed, so this attempt stops before any irreversible step",
                status.message()
            ))),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "heartbeat not confirmed by the Temporal server");
                Ok(false)
            }
            Err(_) => Ok(false),
        }
    }
}
