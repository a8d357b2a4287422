//! `host reprovision set|list`: direct reprovisioning requests (seed, "Request host
//! reprovisioning directly"), and the request-then-start step the rollout shares.
//!
//! The request-then-start sequence itself is `hostfw_activities::site_link::request_and_start`,
//! shared with the scheduler: nothing is half-written, and a second request is refused. A direct
//! request bypasses the ceiling, windows and auto-update policy, but not the rollout's brakes: a
//! host of a paused target or of a full canary wave (`gates::rollout_holds`, on the same site view
//! the scheduler reads) is refused unless `--ignore-rollout-gates` says otherwise. The request is
//! fenced like the scheduler's (`hostfw_store::GateFence`): made only while nothing changed the
//! holds since they were read, else they are read again.

use std::collections::BTreeMap;

use hostfw_activities::site_link;
use hostfw_activities::site_view;
use hostfw_model::gates::{self, RolloutHold};
use hostfw_store::{GateFence, StoreError};
use temporalio_client::Client;

use crate::context::Context;
use crate::output;

/// Initiator recorded for requests made from this CLI (NICo's name).
pub const INITIATOR_CLI: &str = "AdminCli";

/// How many times a request checked against the rollout gates reads the site again when another
/// write moved the gate fence between its read and its request, before it gives up.
pub const FENCE_ROUNDS: u32 = 5;

/// Create the request for `machine_id` and start its workflow. Errors say why it was refused.
/// Guarded by the rollout gates with a fence read before the holds were, a request made stale by
/// another write since is refused (`StoreError::GateMoved`, see [`is_gate_moved`]).
pub async fn request(
    ctx: &Context,
    client: &Client,
    machine_id: &str,
    initiator: &str,
    message: Option<String>,
    guard: site_link::Guard<'_>,
) -> Result<String, site_link::StartError> {
    site_link::request_and_start(&ctx.site, &ctx.store, client, machine_id, initiator, message, guard).await
}

/// The request was refused because the site changed since its holds were read.
pub fn is_gate_moved(e: &site_link::StartError) -> bool {
    matches!(e, site_link::StartError::Store(StoreError::GateMoved { .. }))
}

/// The gate fence, then what the rollout gates hold of `machine_ids` ([`rollout_holds`]): a
/// request made with the fence lands only if nothing changed the holds since.
pub async fn fenced_holds(
    ctx: &Context,
    machine_ids: &[String],
) -> anyhow::Result<(GateFence, BTreeMap<String, Vec<RolloutHold>>)> {
    let fence = ctx.store.gate_fence().await?;
    Ok((fence, rollout_holds(ctx, machine_ids).await?))
}

/// What the rollout gates hold of `machine_ids` now (hosts they do not hold are left out), read
/// from the same site view and pure gates as the scheduler's pass.
pub async fn rollout_holds(
    ctx: &Context,
    machine_ids: &[String],
) -> anyhow::Result<BTreeMap<String, Vec<RolloutHold>>> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let view = site_view::read(&ctx.store, &catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    Ok(view
        .input
        .hosts
        .iter()
        .filter(|h| machine_ids.contains(&h.machine_id))
        .map(|h| (h.machine_id.clone(), gates::rollout_holds(&plan, h)))
        .filter(|(_, holds)| !holds.is_empty())
        .collect())
}

/// The holds as one line: "a; b".
pub fn holds_text(holds: &[RolloutHold]) -> String {
    holds.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// `host reprovision set`.
pub async fn set(
    ctx: &Context,
    machine_id: &str,
    message: Option<String>,
    ignore_rollout_gates: bool,
) -> anyhow::Result<()> {
    let ids = [machine_id.to_string()];
    let held = |mut holds: BTreeMap<String, Vec<RolloutHold>>| -> anyhow::Result<Vec<RolloutHold>> {
        let holds = holds.remove(machine_id).unwrap_or_default();
        if !holds.is_empty() && !ignore_rollout_gates {
            anyhow::bail!(
                "{machine_id} is held by the rollout gates: {}; nothing was requested (pass --ignore-rollout-gates \
                 to request it anyway)",
                holds_text(&holds)
            );
        }
        Ok(holds)
    };
    let (mut fence, holds) = fenced_holds(ctx, &ids).await?;
    let mut holds = held(holds)?;
    let client = ctx.temporal().await?;
    let mut rounds = 0;
    // Checked against the rollout gates: made only while nothing changed them since the read
    // (`--ignore-rollout-gates` bypasses them, so it needs no fence).
    let workflow_id = loop {
        let guard = if ignore_rollout_gates { site_link::Guard::CapsOnly } else { site_link::Guard::Gates(&mut fence) };
        match request(ctx, &client, machine_id, INITIATOR_CLI, message.clone(), guard).await {
            Ok(id) => break id,
            Err(e) if is_gate_moved(&e) && rounds < FENCE_ROUNDS => {
                rounds += 1;
                let (f, h) = fenced_holds(ctx, &ids).await?;
                fence = f;
                holds = held(h)?;
            }
            Err(e) if is_gate_moved(&e) => {
                anyhow::bail!("{e}: the site kept changing over {FENCE_ROUNDS} reads; try again")
            }
            Err(e) => return Err(e.into()),
        }
    };
    let mut detail = message.clone().unwrap_or_default();
    if !holds.is_empty() {
        let ignored = format!("ignoring the rollout gates (--ignore-rollout-gates): {}", holds_text(&holds));
        detail = if detail.is_empty() { ignored } else { format!("{detail}; {ignored}") };
    }
    ctx.audit("host reprovision set", machine_id, &detail).await?;
    let json = serde_json::json!({
        "machine_id": machine_id,
        "action": "host reprovision set",
        "workflow_id": workflow_id,
        "ignored_rollout_gates": holds.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    let mut human = format!("reprovisioning requested for {machine_id}: workflow {workflow_id}");
    if !holds.is_empty() {
        human.push_str(&format!(" (rollout gates ignored: {})", holds_text(&holds)));
    }
    crate::output::result(ctx.format, &json, human)
}

/// One request as `host reprovision list` shows it (its schema is the API's).
#[derive(serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestRow<'a> {
    #[serde(flatten)]
    request: &'a hostfw_store::Request,
    /// The host's substate, when it has one.
    substate: Option<hostfw_model::HostSubstate>,
    /// `host_reprovision.max_retries`: the budget `retry_count` counts against.
    max_retries: u32,
}

/// The substate column: a failed host says whether it waits for a retry or its budget is spent.
pub(crate) fn substate_text(
    substate: Option<hostfw_model::HostSubstate>,
    r: &hostfw_store::Request,
    max_retries: u32,
) -> String {
    match substate {
        None => "-".to_string(),
        Some(s @ hostfw_model::HostSubstate::FailedFirmwareUpgrade) if r.exhausted => {
            format!("{s} (retries exhausted {}/{max_retries}: reset-host-reprovisioning)", r.retry_count)
        }
        Some(s @ hostfw_model::HostSubstate::FailedFirmwareUpgrade) => {
            format!("{s} (waiting to retry, {}/{max_retries} used)", r.retry_count)
        }
        Some(s) => s.to_string(),
    }
}

/// `host reprovision list`.
pub async fn list(ctx: &Context) -> anyhow::Result<()> {
    let requests = ctx.store.request_list().await?;
    let max_retries = ctx.site.host_reprovision.max_retries;
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for r in &requests {
        let substate = ctx.store.machine_get(&r.machine_id).await?.and_then(|m| m.substate);
        rows.push(vec![
            r.machine_id.clone(),
            r.initiator.clone(),
            output::time(r.requested_at_ms),
            r.started_at_ms.map(output::time).unwrap_or_else(|| "Not Started".to_string()),
            if r.user_approval { "yes" } else { "no" }.to_string(),
            substate_text(substate, r, max_retries),
            r.update_message.clone().unwrap_or_default(),
        ]);
        json.push(RequestRow { request: r, substate, max_retries });
    }
    output::print(
        ctx.format,
        &json,
        &["MACHINE", "INITIATOR", "REQUESTED", "STARTED", "APPROVED", "SUBSTATE", "MESSAGE"],
        rows,
    )
}
