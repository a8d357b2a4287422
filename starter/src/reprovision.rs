//! `host reprovision set|list`: direct reprovisioning requests (seed, "Request host
//! reprovisioning directly"), and the request-then-start step the rollout shares.
//!
//! The request-then-start sequence itself is `hostfw_activities::site_link::request_and_start`,
//! shared with the scheduler: nothing is half-written, and a second request is refused.

use hostfw_activities::site_link;
use temporalio_client::Client;

use crate::context::Context;
use crate::output;

/// Initiator recorded for requests made from this CLI (NICo's name).
pub const INITIATOR_CLI: &str = "AdminCli";

/// Create the request for `machine_id` and start its workflow. Errors say why it was refused.
pub async fn request(
    ctx: &Context,
    client: &Client,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
) -> anyhow::Result<String> {
    Ok(site_link::request_and_start(&ctx.site, &ctx.store, client, machine_id, initiator, message).await?)
}

/// `host reprovision set`.
pub async fn set(ctx: &Context, machine_id: &str, message: Option<String>) -> anyhow::Result<()> {
    let client = ctx.temporal().await?;
    let workflow_id = request(ctx, &client, machine_id, INITIATOR_CLI, message.clone()).await?;
    ctx.audit("host reprovision set", machine_id, message.as_deref().unwrap_or("")).await?;
    crate::outln!("reprovisioning requested for {machine_id}: workflow {workflow_id}");
    Ok(())
}

/// `host reprovision list`.
pub async fn list(ctx: &Context) -> anyhow::Result<()> {
    let requests = ctx.store.request_list().await?;
    let mut rows = Vec::new();
    for r in &requests {
        let machine = ctx.store.machine_get(&r.machine_id).await?;
        let substate = machine.and_then(|m| m.substate).map_or_else(|| "-".to_string(), |s| s.to_string());
        rows.push(vec![
            r.machine_id.clone(),
            r.initiator.clone(),
            output::time(r.requested_at_ms),
            r.started_at_ms.map(output::time).unwrap_or_else(|| "Not Started".to_string()),
            if r.user_approval { "yes" } else { "no" }.to_string(),
            substate,
            r.update_message.clone().unwrap_or_default(),
        ]);
    }
    output::print(
        ctx.format,
        &requests,
        &["MACHINE", "INITIATOR", "REQUESTED", "STARTED", "APPROVED", "SUBSTATE", "MESSAGE"],
        rows,
    )
}
