//! `host reprovision abort` in the host workflow (issue 27): the `abort`
//! signal records an [`AbortOrder`]; the run takes it at its next safe point, never in the middle
//! of a component (a flash, its activation and its verification always finish). The safe points:
//! before each component is selected and installed, the waits of FailedFirmwareUpgrade (the retry
//! interval, a spent budget: an exhausted host is aborted at once), the manual platform gate, a
//! freeze hold, and between attempts. Before the update started (the approval wait), an abort is
//! a clear.
//!
//! Taking it: an assigned host's platform is restored (lockdown on, its own OS booted; tried once:
//! when that fails, e.g. its BMC is dead, the host is left in maintenance for repair), then the
//! restore ends the run as every run ends (request cleared, health report removed, the ceiling
//! slot freed, the manager woken), recording what this run flashed; the activity adds what still
//! differs from the catalog. With `to_maintenance` the host is left in maintenance, marked for
//! repair (`machine_updater.max_hosts_in_repair`).
//!
//! Owns taking the abort. It must not decide what is safe to interrupt inside an install (it is
//! never called there). Deterministic workflow code only.

use hostfw_model::{HostState, HostSubstate};
use temporalio_workflow::WorkflowResult;

use crate::contracts::*;
use crate::host::deferred;
use crate::host::platform_steps;
use crate::host::settings::HostReprovisionInput;
use crate::host::status::HostOutcome;
use crate::host::steps::Ctx;
use crate::options;

/// An abort was signalled and is not taken yet.
pub(crate) fn requested(ctx: &Ctx) -> bool {
    ctx.state(|s| s.abort.is_some())
}

/// Take the abort: restore the platform (assigned hosts), then the host, and end the run.
pub(crate) async fn take(ctx: &Ctx, input: &HostReprovisionInput, host: &HostContext) -> WorkflowResult<HostOutcome> {
    let mut order = ctx.state(|s| s.abort.clone()).expect("abort::take is called only when an abort was signalled");
    let mut message = format!("aborted by {}: {}", order.by, order.reason);
    if input.assigned {
        if let Err(failure) = platform_steps::restore(ctx, &host.machine_id).await? {
            order.to_maintenance = true;
            message.push_str(&format!(
                "; the platform restore failed ({}), so the host is left in maintenance for hands-on repair",
                failure.reason
            ));
        }
    }
    let installed = ctx.state(|s| s.status.installed.clone());
    if installed.is_empty() {
        message.push_str("; this run flashed nothing");
    } else {
        let list: Vec<String> = installed.iter().map(|c| format!("{} {}", c.component, c.to)).collect();
        message.push_str(&format!("; this run flashed {}", list.join(", ")));
    }
    if order.to_maintenance {
        message.push_str("; left in maintenance for repair (`hostfw machine maintenance --exit` when repaired)");
    }
    ctx.state_mut(|s| s.status.enter(HostSubstate::Restoring, &message));
    deferred::want(ctx, crate::names::SA_SUBSTATE, HostSubstate::Restoring.as_str().to_owned());
    let restore = RestoreInput {
        machine_id: host.machine_id.clone(),
        state: if order.to_maintenance { HostState::Maintenance } else { host.prior_state },
        message: message.clone(),
        records: deferred::take_records(ctx),
        abort: Some(order.clone()),
    };
    ctx.execute_activity(HostActivities::restore, restore, options::bookkeeping()).await?;
    ctx.state_mut(|s| {
        s.status.component = None;
        s.status.target_version = None;
        s.status.enter(HostSubstate::Completed, &message);
    });
    deferred::want(ctx, crate::names::SA_SUBSTATE, HostSubstate::Completed.as_str().to_owned());
    deferred::flush_attributes(ctx);
    Ok(HostOutcome::Aborted { by: order.by, reason: order.reason, installed, to_maintenance: order.to_maintenance })
}
