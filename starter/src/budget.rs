//! `hostfw budget list` and `hostfw budget resume`: the error budget per rollout target
//! (`hostfw budget pause` is the operator's brake, in `brakes`; resume lifts it too).
//!
//! Owns reading the targets on record, showing which are paused (by the scheduler's own plan,
//! `hostfw_model::gates::plan`: a spent budget or a canary wave that ended with too many
//! failures) and resuming one: the store clears its record
//! and audits the resume in one transaction, then the Machine Update Manager is woken. Bad input
//! (an unknown component, a target with no record, a name that fits several vendors) changes
//! nothing. It must not start or stop any host itself.

use anyhow::{anyhow, bail};
use hostfw_activities::site_view;
use hostfw_model::gates::{self, ErrorBudget, PausedTarget, SchedulingPolicy, Target, TargetRecord};
use hostfw_model::{same_name, ComponentType};
use serde::Serialize;

use crate::catalog_fallback::{self, CatalogWarning};
use crate::cli::{BudgetCmd, BudgetTargetArgs};
use crate::context::Context;
use crate::output;

/// One target as `budget list` shows it (its schema is the API's).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetView<'a> {
    #[serde(flatten)]
    record: &'a TargetRecord,
    /// Whether the target is paused (its error budget is spent, or an operator paused it).
    paused: bool,
    /// The rule that spent the budget, when paused.
    rule: Option<String>,
    /// Catalog files left out because they do not load (only when some are): `paused` was
    /// decided without them.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    catalog_warnings: &'a [CatalogWarning],
}

/// `hostfw budget ...`.
pub async fn budget(ctx: &Context, cmd: &BudgetCmd) -> anyhow::Result<()> {
    match cmd {
        BudgetCmd::List => list(ctx).await,
        BudgetCmd::Resume(args) => resume(ctx, args).await,
        BudgetCmd::Pause(args) => crate::brakes::budget_pause(ctx, args).await,
    }
}

fn budget_of(ctx: &Context) -> ErrorBudget {
    SchedulingPolicy::from_config(&ctx.site).error_budget
}

/// The targets on record and those paused, as the scheduler decides it: by the budget's rules,
/// or by a canary wave that ended with too many failures (which needs the hosts in flight, so
/// the whole plan).
async fn paused_now(ctx: &Context) -> anyhow::Result<(Vec<TargetRecord>, Vec<PausedTarget>)> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    paused_with(ctx, &catalog).await
}

async fn paused_with(
    ctx: &Context,
    catalog: &hostfw_model::Catalog,
) -> anyhow::Result<(Vec<TargetRecord>, Vec<PausedTarget>)> {
    let view = site_view::read(&ctx.store, catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    Ok((view.input.targets, plan.paused))
}

/// `budget list` reads: a catalog file that does not load is left out, with a warning
/// (`catalog_fallback`); `resume` changes something and needs the whole catalog.
async fn list(ctx: &Context) -> anyhow::Result<()> {
    let (catalog, catalog_warnings) = catalog_fallback::effective_or_without_broken(ctx).await?;
    catalog_fallback::warn(ctx, &catalog_warnings);
    let (records, paused) = paused_with(ctx, &catalog).await?;
    let records = &records;
    let budget = budget_of(ctx);
    let views: Vec<TargetView> = records
        .iter()
        .map(|r| {
            let rule = paused.iter().find(|p| p.target == r.target).map(|p| p.rule.clone());
            TargetView { record: r, paused: rule.is_some(), rule, catalog_warnings: &catalog_warnings }
        })
        .collect();
    let rows: Vec<Vec<String>> = views
        .iter()
        .map(|v| {
            let t = &v.record.target;
            let failed: Vec<&str> = v.record.failures.iter().map(|f| f.machine_id.as_str()).collect();
            vec![
                t.vendor.clone(),
                t.model.clone(),
                t.component.to_string(),
                t.version.clone(),
                v.record.attempted_hosts.to_string(),
                v.record.failed_hosts().to_string(),
                if v.paused { "PAUSED".into() } else { "within budget".into() },
                failed.join(", "),
            ]
        })
        .collect();
    if ctx.format == crate::cli::Format::Table {
        crate::outln!("{}", describe(&budget));
        if rows.is_empty() {
            crate::outln!("no target on record (hosts are recorded when they begin installing a component)");
            return Ok(());
        }
    }
    output::print(
        ctx.format,
        &views,
        &["VENDOR", "MODEL", "COMPONENT", "VERSION", "ATTEMPTED", "FAILED", "STATE", "FAILED HOSTS"],
        rows,
    )
}

/// The budget in one line, as configured.
pub fn describe(b: &ErrorBudget) -> String {
    let count =
        if b.failed_hosts == 0 { "no count rule".to_string() } else { format!("{} failed hosts", b.failed_hosts) };
    let share = if b.failed_percent == 0 {
        "no percentage rule".to_string()
    } else {
        format!("{} % of at least {} attempted", b.failed_percent, b.min_hosts)
    };
    format!("error budget per target: pause at {count} or {share} ([machine_updater] error_budget_*)")
}

async fn resume(ctx: &Context, args: &BudgetTargetArgs) -> anyhow::Result<()> {
    let component: ComponentType = args.component.parse().map_err(|e| anyhow!("--component: {e}"))?;
    let (records, paused) = paused_now(ctx).await?;
    // A target on record, or one paused by hand (`budget pause`) with nothing on record.
    let pauses = ctx.store.target_pauses().await?;
    let mut known: Vec<&Target> = records.iter().map(|r| &r.target).collect();
    known.extend(pauses.iter().map(|p| &p.target).filter(|t| !records.iter().any(|r| &r.target == *t)));
    let matches: Vec<&Target> = known
        .into_iter()
        .filter(|t| {
            same_name(&t.model, &args.model)
                && t.component == component
                && t.version == args.version
                && args.vendor.as_deref().is_none_or(|v| same_name(&t.vendor, v))
        })
        .collect();
    let asked = format!(
        "{}{} {component} {}",
        args.vendor.as_deref().map(|v| format!("{v} ")).unwrap_or_default(),
        args.model,
        args.version
    );
    let target: Target = match matches.as_slice() {
        [] => bail!(
            "budget resume: no error-budget record for {asked} (`hostfw budget list` shows the targets on \
             record); nothing was changed"
        ),
        [one] => (*one).clone(),
        several => {
            let vendors: Vec<&str> = several.iter().map(|t| t.vendor.as_str()).collect();
            bail!(
                "budget resume: {asked} is on record for several vendors ({}); give --vendor; nothing was changed",
                vendors.join(", ")
            )
        }
    };
    let was_paused = paused.iter().any(|p| p.target == target);
    let Some(resumed) = ctx.store.target_resume(&target, &ctx.actor).await? else {
        bail!("budget resume: the record of {target} was cleared meanwhile; nothing more to do");
    };
    let manual = resumed.pause.as_ref();
    let (attempted, failed): (u32, Vec<&str>) = match &resumed.record {
        Some(r) => (r.attempted_hosts, r.failures.iter().map(|f| f.machine_id.as_str()).collect()),
        None => (0, Vec::new()),
    };
    let human = format!(
        "{target}: {} (record cleared: {attempted} hosts attempted, {} failed{}){}; audited",
        if was_paused || manual.is_some() { "resumed" } else { "was not paused; its budget starts again" },
        failed.len(),
        if failed.is_empty() { String::new() } else { format!(": {}", failed.join(", ")) },
        manual.map(|p| format!("; the pause set by {} ({}) is lifted", p.by, p.reason)).unwrap_or_default()
    );
    let json = serde_json::json!({
        "action": "budget resume",
        "target": target,
        "was_paused": was_paused,
        "paused_by_operator": manual,
        "attempted_hosts": attempted,
        "failed_hosts": failed,
    });
    crate::wake::wake(ctx, &format!("the error budget of {target} was resumed")).await;
    crate::output::result(ctx.format, &json, human)
}
