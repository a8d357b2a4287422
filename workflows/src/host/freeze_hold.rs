//! The hold of an in-flight host under a freeze (issue 27): before
//! each component (the one it is flashing is never interrupted), the host asks whether a freeze
//! covers it (`hostfw.host.freeze_hold`, a local activity: the workflow never reads the site
//! database). While one does (set without `drain`), it waits in `HeldByFreeze`, asking again
//! after [`FREEZE_RECHECK`] (doubling up to [`FREEZE_RECHECK_MAX`]) or at once on a
//! `settings_changed` signal (`hostfw unfreeze` sends one); when the freeze is lifted it goes on.
//!
//! Owns that wait. It must not decide which freeze covers the host (`gates::freeze`, in the
//! activity). Deterministic code only (see the crate docs).

use std::pin::pin;

use hostfw_model::HostSubstate;
use temporalio_workflow::{select, CancellableFuture, TimerOptions, WorkflowResult};

use crate::contracts::{FreezeHold, HostActivities};
use crate::host::deferred;
use crate::host::steps::{enter, Ctx};
use crate::options;
pub use crate::tunables::{FREEZE_RECHECK, FREEZE_RECHECK_MAX};

/// The status message while `hold` holds the host.
pub fn held_message(hold: &FreezeHold) -> String {
    format!(
        "held before the next component by freeze {} on {} set by {} ({}); `hostfw unfreeze --id {}` lifts it",
        hold.id, hold.scope, hold.by, hold.reason, hold.id
    )
}

/// Wait while a freeze holds the host. Returns true when it held (the caller reads the
/// inventory again: time has passed).
pub(crate) async fn hold_while_frozen(ctx: &Ctx, machine_id: &str) -> WorkflowResult<bool> {
    let mut held_by: Option<i64> = None;
    let mut pause = FREEZE_RECHECK;
    loop {
        // An abort ends the hold: the caller takes it.
        if ctx.state(|s| s.abort.is_some()) {
            return Ok(held_by.is_some());
        }
        let seen = ctx.state(|s| s.settings_changes);
        let hold = ctx
            .execute_local_activity(HostActivities::freeze_hold, machine_id.to_string(), options::local_bookkeeping())
            .await?;
        let Some(hold) = hold else { return Ok(held_by.is_some()) };
        if held_by != Some(hold.id) {
            enter(ctx, HostSubstate::HeldByFreeze, &held_message(&hold)).await?;
            held_by = Some(hold.id);
        }
        deferred::flush(ctx).await?;
        let timer = ctx
            .timer(TimerOptions::builder(pause).summary(format!("held by freeze {}: asking again", hold.id)).build());
        let mut timer = pin!(timer);
        let signalled = select! {
            r = ctx.wait_condition(move |s: &crate::HostReprovisionWorkflow| s.settings_changes != seen || s.abort.is_some()) => { r?; true }
            _ = timer.as_mut() => false,
        };
        if signalled {
            timer.cancel();
        } else {
            pause = (pause * 2).min(FREEZE_RECHECK_MAX);
        }
    }
}
