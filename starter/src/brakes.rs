//! `hostfw freeze`, `hostfw freeze list`, `hostfw unfreeze` and `hostfw budget pause`: the
//! operator's brakes (issue 27).
//!
//! Owns each command's typed document ([`FreezeSet`], [`FreezeList`], [`Unfrozen`],
//! [`TargetPaused`]), computed by a function that takes the store and the actor and prints
//! nothing, so an API can host it; printing is apart (`print_*`). The store writes and audits
//! each change in one transaction; bad input (an empty reason, a bad selector, a freeze not in
//! force, a target the catalog does not know) changes nothing. After a change the Machine Update
//! Manager is woken, and after an unfreeze the host workflows with a request are told to ask
//! again at once (`settings_changed`). It must not decide which hosts a freeze holds
//! (`gates::freeze`).

use anyhow::{anyhow, bail};
use hostfw_model::gates::{Freeze, OperatorPause, Target};
use hostfw_model::{same_name, Catalog, ComponentType};
use hostfw_store::{FreezeSelector, Store};
use serde::Serialize;

use crate::cli::{BudgetPauseArgs, FreezeArgs, FreezeCmd, UnfreezeArgs};
use crate::context::Context;
use crate::output;

/// `hostfw freeze --reason ...`: the freeze set.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FreezeSet {
    pub action: &'static str,
    pub freeze: Freeze,
}

/// `hostfw freeze list`: the freezes in force, oldest first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FreezeList {
    pub freezes: Vec<Freeze>,
}

/// `hostfw unfreeze`: the freezes lifted.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Unfrozen {
    pub action: &'static str,
    pub lifted: Vec<Freeze>,
}

/// `hostfw budget pause`: the target paused (or the pause already in force).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetPaused {
    pub action: &'static str,
    pub pause: OperatorPause,
}

/// Sets a freeze as `actor`.
pub async fn freeze_set(
    store: &Store,
    actor: &str,
    selector: Option<&str>,
    reason: &str,
    drain: bool,
) -> anyhow::Result<FreezeSet> {
    let freeze = store.freeze_set(actor, selector, reason, drain).await?;
    Ok(FreezeSet { action: "freeze", freeze })
}

/// The freezes in force.
pub async fn freeze_list(store: &Store) -> anyhow::Result<FreezeList> {
    Ok(FreezeList { freezes: store.freeze_list().await? })
}

/// Lifts the freezes `which` names as `actor`.
pub async fn unfreeze(store: &Store, actor: &str, which: &FreezeSelector) -> anyhow::Result<Unfrozen> {
    let lifted = store.unfreeze(actor, which).await?;
    Ok(Unfrozen { action: "unfreeze", lifted })
}

/// Pauses the target `vendor`/`model` `component` `version` as `actor`: the model is the
/// catalog's (named as the catalog names it; `vendor` may be left out when one catalog model has
/// that name).
pub async fn target_pause(
    store: &Store,
    catalog: &Catalog,
    actor: &str,
    args: &BudgetPauseArgs,
) -> anyhow::Result<TargetPaused> {
    let t = &args.target;
    let component: ComponentType = t.component.parse().map_err(|e| anyhow!("--component: {e}"))?;
    let models: Vec<_> = catalog
        .models()
        .iter()
        .filter(|m| same_name(&m.model, &t.model) && t.vendor.as_deref().is_none_or(|v| same_name(&m.vendor, v)))
        .collect();
    let model = match models.as_slice() {
        [] => {
            bail!("budget pause: the catalog has no model {:?} (`hostfw firmware show`); nothing was changed", t.model)
        }
        [one] => *one,
        several => {
            let vendors: Vec<&str> = several.iter().map(|m| m.vendor.as_str()).collect();
            bail!(
                "budget pause: model {:?} is in the catalog for several vendors ({}); give --vendor; nothing was changed",
                t.model,
                vendors.join(", ")
            )
        }
    };
    let target =
        Target { vendor: model.vendor.clone(), model: model.model.clone(), component, version: t.version.clone() };
    let pause = store.target_pause(&target, actor, &args.reason).await?;
    Ok(TargetPaused { action: "budget pause", pause })
}

/// The rows of a freeze table: id, scope, who, since, drain, reason.
pub fn freeze_table(freezes: &[Freeze]) -> Vec<Vec<String>> {
    freezes
        .iter()
        .map(|f| {
            vec![
                f.id.to_string(),
                f.scope.to_string(),
                f.by.clone(),
                output::time(f.at_ms),
                if f.drain { "yes".into() } else { "no".into() },
                f.reason.clone(),
            ]
        })
        .collect()
}

/// `hostfw freeze ...`.
pub async fn freeze(ctx: &Context, args: &FreezeArgs) -> anyhow::Result<()> {
    if let Some(FreezeCmd::List) = &args.cmd {
        let doc = freeze_list(&ctx.store).await?;
        if ctx.format == crate::cli::Format::Table && doc.freezes.is_empty() {
            crate::outln!("no freeze in force");
            return Ok(());
        }
        let rows = freeze_table(&doc.freezes);
        return output::print(ctx.format, &doc, &["ID", "SCOPE", "BY", "SINCE", "DRAIN", "REASON"], rows);
    }
    let Some(reason) = args.reason.as_deref() else {
        bail!("freeze: --reason is required (it is shown to everyone who sees the hold); nothing was changed");
    };
    let doc = freeze_set(&ctx.store, &ctx.actor, args.selector.as_deref(), reason, args.drain).await?;
    let f = &doc.freeze;
    let human = format!(
        "freeze {} set on {} by {}: no new host starts in scope; hosts in flight {}; audited. \
         `hostfw unfreeze --id {}` lifts it",
        f.id,
        f.scope,
        f.by,
        if f.drain { "finish all their components (drain)" } else { "hold before their next component" },
        f.id
    );
    crate::wake::wake(ctx, &format!("freeze {} set on {}", f.id, f.scope)).await;
    output::result(ctx.format, &doc, human)
}

/// `hostfw unfreeze [--id N | --selector S]` (neither: the whole site's freeze).
pub async fn unfreeze_cmd(ctx: &Context, args: &UnfreezeArgs) -> anyhow::Result<()> {
    let which = match (args.id, &args.selector) {
        (Some(id), None) => FreezeSelector::Id(id),
        (None, selector) => FreezeSelector::Scope(selector.clone()),
        (Some(_), Some(_)) => bail!("unfreeze: give --id or --selector, not both; nothing was changed"),
    };
    let doc = unfreeze(&ctx.store, &ctx.actor, &which).await?;
    let lines: Vec<String> = doc
        .lifted
        .iter()
        .map(|f| format!("freeze {} on {} (set by {}: {}) lifted", f.id, f.scope, f.by, f.reason))
        .collect();
    let human = format!("{}; audited", lines.join("; "));
    crate::wake::wake(ctx, "a freeze was lifted").await;
    tell_held_hosts(ctx).await;
    output::result(ctx.format, &doc, human)
}

/// `hostfw budget pause --model ... --component ... --version ... --reason R`.
pub async fn budget_pause(ctx: &Context, args: &BudgetPauseArgs) -> anyhow::Result<()> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let doc = target_pause(&ctx.store, &catalog, &ctx.actor, args).await?;
    let p = &doc.pause;
    let human = format!(
        "{} paused by {} ({}): no new host starts on it; audited. `{}` releases it",
        p.target,
        p.by,
        p.reason,
        p.target.resume_command()
    );
    output::result(ctx.format, &doc, human)
}

/// Tell every host workflow with a request to ask again at once whether a freeze holds it (a
/// held host otherwise asks within `FREEZE_RECHECK`). Best effort, like `wake`.
async fn tell_held_hosts(ctx: &Context) {
    let attempt = async {
        let client = ctx.temporal().await?;
        for r in ctx.store.request_list().await? {
            let handle = client.get_workflow_handle::<hostfw_workflows::HostReprovisionWorkflow>(
                hostfw_workflows::host_reprovision_workflow_id(&r.machine_id),
            );
            let _ = handle
                .signal(
                    hostfw_workflows::HostReprovisionWorkflow::settings_changed,
                    ctx.actor.clone(),
                    temporalio_client::WorkflowSignalOptions::default(),
                )
                .await;
        }
        anyhow::Ok(())
    };
    match tokio::time::timeout(std::time::Duration::from_secs(10), attempt).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "could not tell the held hosts; they ask again on their own within 15 minutes")
        }
        Err(_) => tracing::warn!(
            "the Temporal server did not answer in 10 s; held hosts ask again on their own within 15 minutes"
        ),
    }
}
