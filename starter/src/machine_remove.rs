//! `hostfw machine remove` (decommission, issue 27): the machine leaves the site. Refused while
//! it has a reprovisioning request (a flash is never cut short: abort it first); its BMC
//! credentials are destroyed, its history and the audit trail are kept (`hostfw audit --target`).
//! Asks first (`--yes` answers).
//!
//! Owns the command's question and answer. The removal itself is one store transaction
//! (`Store::machine_remove`).

use anyhow::{anyhow, bail};
use hostfw_store::Removal;
use serde_json::json;

use crate::context::Context;
use crate::output;

/// `hostfw machine remove --id ID --reason ... [--yes]`.
pub async fn remove(ctx: &Context, id: &str, reason: &str, yes: bool) -> anyhow::Result<()> {
    let reason = reason.trim();
    if reason.is_empty() {
        bail!("machine remove needs a reason (--reason): it is kept in the audit trail; nothing was changed");
    }
    let machine =
        ctx.store.machine_get(id).await?.ok_or_else(|| {
            anyhow!("machine {id} is not registered (see `hostfw machine list`); nothing was changed")
        })?;
    if let Some(request) = ctx.store.request_get(id).await? {
        // Said before the question; the store checks again inside its transaction.
        bail!("{}; nothing was changed", hostfw_store::removal_refusal(id, request.started_at_ms.is_some()));
    }
    crate::confirm::confirm(
        &format!(
            "Remove machine {id} ({} {}, BMC {}) from the site? Its BMC credentials are destroyed; its history and \
             audit trail are kept.",
            machine.vendor.as_deref().unwrap_or("?"),
            machine.model.as_deref().unwrap_or("?"),
            machine.bmc_address
        ),
        yes,
    )?;
    match ctx.store.machine_remove(id, &ctx.actor, reason).await? {
        Removal::Refused(why) => bail!("{why}; nothing was changed"),
        Removal::Removed(_) => {}
    }
    let doc = json!({"action": "machine remove", "machine_id": id, "reason": reason, "removed": true});
    output::result(
        ctx.format,
        &doc,
        format!("machine {id} removed from the site: its BMC credentials are destroyed; `hostfw audit --target {id}` keeps its record"),
    )
}
