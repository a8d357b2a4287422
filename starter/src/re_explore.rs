//! `site-explorer re-explore <bmc-ip>`: ask the Site Explorer workflow to explore one BMC now.

use anyhow::{anyhow, bail};
use hostfw_model::BmcLookup;
use hostfw_workflows::names::SITE_EXPLORER_ID;
use hostfw_workflows::SiteExplorerWorkflow;
use temporalio_client::WorkflowSignalOptions;

use crate::context::Context;

/// `site-explorer re-explore <bmc-ip>`.
pub async fn re_explore(ctx: &Context, bmc: &str) -> anyhow::Result<()> {
    let lookup: BmcLookup = bmc.parse().map_err(|e| anyhow!("site-explorer re-explore: {e}"))?;
    let Some(machine) = ctx.store.machine_by_bmc(&lookup).await? else {
        bail!("no managed host has the BMC address {bmc} (see `hostfw machine list`)");
    };
    let client = ctx.temporal().await?;
    client
        .get_workflow_handle::<SiteExplorerWorkflow>(SITE_EXPLORER_ID)
        .signal(SiteExplorerWorkflow::re_explore, machine.bmc_address.to_string(), WorkflowSignalOptions::default())
        .await
        .map_err(|e| {
            anyhow!(
                "the Site Explorer workflow ({SITE_EXPLORER_ID}) did not take the request: {e}; is a worker with \
                 `[worker] site_workflows = true` running? (`hostfw site-explorer explore --machine {}` explores directly)",
                machine.id
            )
        })?;
    ctx.audit("site-explorer re-explore", &machine.id, &machine.bmc_address.to_string()).await?;
    let json = serde_json::json!({
        "machine_id": machine.id, "bmc_address": machine.bmc_address.to_string(), "action": "site-explorer re-explore",
    });
    crate::output::result(
        ctx.format,
        &json,
        format!("re-exploration of {} ({}) requested", machine.bmc_address, machine.id),
    )
}
