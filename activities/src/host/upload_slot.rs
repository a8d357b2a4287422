//! One upload attempt's site-wide upload slot (`firmware_global.max_uploads`): waiting for one,
//! holding it (fenced) through the POST, and handing it to the task wait.
//!
//! Design (issue 11, findings 10 and 11):
//! - **Waiting is cheap.** A waiter tries the table once, then sleeps until this worker releases a
//!   slot (an in-process [`tokio::sync::Notify`]) or a jittered, growing poll interval passes
//!   (0.5 s up to 5 s, ±25 %: slots released by other workers or freed by an expired lease),
//!   instead of querying the database every 250 ms. It heartbeats every
//!   [`HEARTBEAT_EVERY`](crate::heartbeat::HEARTBEAT_EVERY) through [`Liveness`], so a waiter whose
//!   attempt the server gave up on stops waiting.
//! - **The wait is not the transfer's time.** Only the transfer has a bound of its own (the Redfish
//!   client's per-request upload timeout, which starts with the POST, i.e. once the slot is held);
//!   the activity's start-to-close is a generous ceiling (`hostfw_workflows::options::upload`) and
//!   the upload refuses to start a transfer that would not fit before that deadline.
//! - **Fenced.** Every grant carries the slot's generation (`hostfw_store::SlotGrant`). A retried
//!   attempt of the same upload (same holder) takes the slot over at once; the superseded attempt
//!   then fails its fence check ([`HeldSlot::still_held`], right before the POST and at every renewal
//!   during it) and stops. Renewal failures are never ignored before the POST.
//! - **No gap between the upload and the task wait.** Once the BMC accepted the image, the lease is
//!   extended to the whole task's bound (`redfish.task_timeout`) plus one lease ([`HeldSlot::hand_over`]),
//!   so however late the workflow schedules `wait_task`, the slot stays taken while the BMC
//!   flashes; `wait_task` renews it (renewal never shortens a lease) and releases it when the task
//!   ends. If the workflow never follows the task (terminated), the slot frees itself at that bound.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hostfw_store::SlotGrant;
use hostfw_workflows::SlotLease;
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;
use tokio::sync::Notify;

use crate::error;
use crate::heartbeat::HEARTBEAT_EVERY;
use crate::host::liveness::Liveness;
pub use crate::tunables::SLOT_LEASE_MS;
use crate::tunables::SLOT_POLL_FIRST as POLL_FIRST;
use crate::tunables::SLOT_POLL_MAX as POLL_MAX;
use crate::Deps;

/// Woken whenever this worker releases a slot.
static RELEASED: Notify = Notify::const_new();
/// Tries of the slot table by waiters of this process (for metrics and tests).
static TRIES: AtomicU64 = AtomicU64::new(0);

/// How many times waiters of this process tried the slot table.
pub fn acquire_tries() -> u64 {
    TRIES.load(Ordering::Relaxed)
}

/// A slot held by this attempt.
#[derive(Debug, Clone)]
pub struct HeldSlot {
    pub grant: SlotGrant,
    pub holder: String,
}

impl HeldSlot {
    /// The lease as the task wait receives it.
    pub fn lease(&self) -> SlotLease {
        SlotLease { slot: self.grant.slot, holder: self.holder.clone(), generation: self.grant.generation }
    }

    /// The fence: renew the lease; Err (stop) when this attempt no longer holds it.
    pub async fn still_held(&self, deps: &Deps) -> Result<(), ActivityError> {
        let held = deps.store.upload_slot_renew(self.grant, &self.holder, SLOT_LEASE_MS).await.map_err(error::store)?;
        if held {
            return Ok(());
        }
        Err(error::superseded(format!(
            "upload slot {} (generation {}) of {} is no longer held by this attempt: a retried attempt took it over \
             or its lease expired; stopped before uploading",
            self.grant.slot, self.grant.generation, self.holder
        )))
    }

    /// The BMC took the image and runs a task: keep the slot for the whole task (see module docs).
    pub async fn hand_over(&self, deps: &Deps) {
        let task_ms = i64::try_from(deps.settings.task_timeout.as_millis()).unwrap_or(i64::MAX / 2);
        match deps.store.upload_slot_renew(self.grant, &self.holder, task_ms.saturating_add(SLOT_LEASE_MS)).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(holder = %self.holder, slot = self.grant.slot,
                "the upload slot was taken over while the BMC accepted the image"),
            Err(e) => {
                tracing::warn!(holder = %self.holder, error = %hostfw_model::error_chain(&e), "extending the upload slot to the task failed")
            }
        }
    }

    pub async fn release(&self, deps: &Deps) {
        release(deps, self.grant, &self.holder).await;
    }
}

/// Give a grant back and wake this worker's waiters. A release the site database refused (a
/// restart, a dropped connection) is tried again in the background ([`crate::release_retry`]):
/// a slot handed to a BMC task would otherwise stay taken for the whole task bound after its
/// workflow ended.
pub async fn release(deps: &Deps, grant: SlotGrant, holder: &str) {
    match deps.store.upload_slot_release(grant, holder).await {
        Ok(()) => RELEASED.notify_waiters(),
        Err(e) => {
            tracing::warn!(slot = grant.slot, holder, error = %hostfw_model::error_chain(&e),
                "releasing the upload slot failed; retrying in the background");
            let (store, holder) = (deps.store.clone(), holder.to_string());
            let what = format!("upload slot {} of {holder}", grant.slot);
            let retried = crate::release_retry::in_background(what, move || {
                let (store, holder) = (store.clone(), holder.clone());
                async move { store.upload_slot_release(grant, &holder).await }
            });
            tokio::spawn(async move {
                if matches!(retried.await, Ok(true)) {
                    RELEASED.notify_waiters();
                }
            });
        }
    }
}

/// Take one of the site's `max_uploads` slots for `holder`, waiting (cheaply, heartbeating) for one.
pub async fn acquire(
    deps: &Deps,
    ctx: &ActivityContext,
    liveness: &mut Liveness,
    holder: &str,
) -> Result<HeldSlot, ActivityError> {
    let what = format!("waiting for one of {} upload slots", deps.settings.max_uploads);
    let mut poll = POLL_FIRST;
    let mut beat = tokio::time::interval(HEARTBEAT_EVERY);
    loop {
        TRIES.fetch_add(1, Ordering::Relaxed);
        if let Some(grant) = deps
            .store
            .upload_slot_acquire(holder, deps.settings.max_uploads, SLOT_LEASE_MS)
            .await
            .map_err(error::store)?
        {
            return Ok(HeldSlot { grant, holder: holder.to_string() });
        }
        let next_try = tokio::time::sleep(jittered(poll));
        tokio::pin!(next_try);
        loop {
            tokio::select! {
                _ = RELEASED.notified() => break,
                _ = &mut next_try => break,
                _ = beat.tick() => liveness.beat(ctx, &what).await?,
                _ = ctx.cancelled() => return Err(ActivityError::cancelled()),
            }
        }
        poll = (poll.mul_f64(1.5)).min(POLL_MAX);
    }
}

/// `d` ± 25 %, so the waiters of many workers do not poll in step.
fn jittered(d: Duration) -> Duration {
    let r = (uuid::Uuid::new_v4().as_u128() % 1000) as f64 / 1000.0; // [0, 1)
    d.mul_f64(0.75 + r * 0.5)
}
