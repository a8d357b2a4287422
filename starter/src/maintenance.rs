//! `machine maintenance --enter|--exit`: the operator's way to take a host out of the fleet's
//! update rotation (and give it back). A host in maintenance uses a slot of the site ceiling and is
//! never selected (seed S9); the change is recorded in its history and the audit trail, and the
//! Machine Update Manager is woken so the freed or taken slot counts at once.

use anyhow::bail;
use hostfw_store::MaintenanceChange;

use crate::cli::MaintenanceArgs;
use crate::context::Context;
use crate::output;

/// `machine maintenance`.
pub async fn maintenance(ctx: &Context, args: &MaintenanceArgs) -> anyhow::Result<()> {
    let id = args.machine.id();
    let (action, verb) = if args.enter { ("enter", "entered") } else { ("exit", "left") };
    let reason = args.reason.as_deref().unwrap_or("no reason given");
    let message = format!("maintenance {verb} by {}: {reason}", ctx.actor);
    let change = match ctx.store.machine_maintenance(id, args.enter, &message).await {
        Err(e) if e.is_not_found() => bail!("machine {id} is not registered (see `hostfw machine list`)"),
        other => other?,
    };
    let state = match change {
        MaintenanceChange::Changed(state) => state,
        MaintenanceChange::Refused(why) => bail!("{why}; nothing was changed"),
    };
    ctx.audit(&format!("machine maintenance --{action}"), id, reason).await?;
    crate::wake::wake(ctx, &format!("{id} {verb} maintenance")).await;
    let json = serde_json::json!({
        "machine_id": id, "action": format!("machine maintenance --{action}"), "state": state.as_str(), "reason": reason,
    });
    let text = if args.enter {
        format!("{id} is in maintenance: it takes a slot of the site ceiling and no update starts on it")
    } else {
        format!("{id} left maintenance: it is {state} and the scheduler may select it again")
    };
    output::result(ctx.format, &json, text)
}
