//! `machine auto-update --machine <id> (--enable | --disable | --clear)`: the per-machine
//! automatic-update override (seed, "Enable or disable one host"); with `--selector` instead of
//! a machine, the same override on every registered machine in the selector's scope, previewed
//! (`--dry-run`) and confirmed as `all-drifted` is, then written in one transaction.
//!
//! Owns setting the override and reporting the policy then in effect (override, else
//! `firmware_global.autoupdate`). It must not select hosts or create requests (the scheduler
//! gates do), and it writes nothing for an unknown machine.

use anyhow::{anyhow, bail};
use hostfw_model::gates::FreezeScope;
use serde::Serialize;
use serde_json::json;

use crate::cli::{AutoUpdateArgs, Format};
use crate::context::Context;

/// The policy of one machine after the change (also the JSON output).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
// Named apart from the API's request enum `AutoUpdatePolicy` (enable, disable, clear).
#[cfg_attr(feature = "openapi", schema(as = MachineAutoUpdate))]
pub struct AutoUpdatePolicy {
    pub machine_id: String,
    /// The per-machine override; `None` = site default.
    pub r#override: Option<bool>,
    /// `firmware_global.autoupdate`.
    pub site_default: bool,
    /// What the scheduler applies.
    pub effective: bool,
    /// The machine is listed in the legacy `firmware_global.host_disable_autoupdate`.
    pub legacy_disabled: bool,
    /// What decides `effective`: `per-machine override`, `legacy host_disable_autoupdate list` or
    /// `site default`.
    pub decided_by: &'static str,
}

fn on_off(b: bool) -> &'static str {
    if b {
        "enabled"
    } else {
        "disabled"
    }
}

impl AutoUpdatePolicy {
    /// The policy of `machine_id` with this override, decided by the scheduler's own gate.
    pub fn of(site: &hostfw_model::SiteConfig, machine_id: &str, r#override: Option<bool>) -> AutoUpdatePolicy {
        let gate = hostfw_model::gates::SchedulingPolicy::from_config(site);
        let legacy_disabled = site.firmware_global.host_disable_autoupdate.iter().any(|m| m == machine_id);
        let decided_by = match r#override {
            Some(_) => "per-machine override",
            None if legacy_disabled => "legacy firmware_global.host_disable_autoupdate list",
            None => "site default firmware_global.autoupdate",
        };
        AutoUpdatePolicy {
            machine_id: machine_id.to_string(),
            r#override,
            site_default: site.firmware_global.autoupdate,
            effective: gate.auto_update_gate(machine_id, r#override).is_ok(),
            legacy_disabled,
            decided_by,
        }
    }

    /// `enabled (per-machine override)`: what the scheduler applies and why, the one wording.
    pub fn effective_text(&self) -> String {
        format!("{} ({})", on_off(self.effective), self.decided_by)
    }

    /// One line: `auto-update of m1: disabled (per-machine override)`.
    pub fn describe(&self) -> String {
        format!("auto-update of {}: {}", self.machine_id, self.effective_text())
    }
}

/// `machine auto-update`.
pub async fn auto_update(ctx: &Context, args: &AutoUpdateArgs) -> anyhow::Result<()> {
    let setting = match (args.enable, args.disable, args.clear) {
        (true, false, false) => Some(true),
        (false, true, false) => Some(false),
        (false, false, true) => None,
        _ => bail!("give exactly one of --enable, --disable or --clear"),
    };
    let id = match (args.machine.id(), &args.selector) {
        (None, Some(selector)) => return auto_update_many(ctx, args, selector, setting).await,
        (Some(id), None) => id,
        _ => bail!(
            "machine auto-update: give a machine id (--machine) or --selector SELECTOR, one of them; nothing was changed"
        ),
    };
    if args.dry_run {
        bail!("--dry-run goes with --selector (one machine's change needs no preview); nothing was changed");
    }
    if ctx.store.machine_get(id).await?.is_none() {
        bail!("machine {id} is not registered (see `hostfw machine list`)");
    }
    match ctx.store.machine_set_auto_update(id, setting).await {
        Err(e) if e.is_not_found() => bail!("machine {id} is not registered (see `hostfw machine list`)"),
        other => other?,
    }
    let detail = match setting {
        Some(true) => "enable",
        Some(false) => "disable",
        None => "clear (site default)",
    };
    ctx.audit("machine auto-update", id, detail).await?;
    crate::wake::wake(ctx, &format!("auto-update of {id} changed")).await;

    let policy = AutoUpdatePolicy::of(&ctx.site, id, setting);
    match ctx.format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(&policy)?),
        Format::Table => {
            crate::outln!("{}", policy.describe());
            if policy.legacy_disabled && setting.is_some() {
                crate::outln!("note: {id} is also listed in the legacy firmware_global.host_disable_autoupdate");
            }
        }
    }
    Ok(())
}

fn setting_word(setting: Option<bool>) -> &'static str {
    match setting {
        Some(true) => "enable",
        Some(false) => "disable",
        None => "clear",
    }
}

/// `--selector`: every registered machine in scope, previewed, confirmed, then changed at once.
async fn auto_update_many(
    ctx: &Context,
    args: &AutoUpdateArgs,
    selector: &str,
    setting: Option<bool>,
) -> anyhow::Result<()> {
    let scope = FreezeScope::parse(selector).map_err(|e| anyhow!("{e}; nothing was changed"))?;
    let machines: Vec<_> = ctx
        .store
        .machine_list()
        .await?
        .into_iter()
        .filter(|m| scope.covers(m.vendor.as_deref(), m.model.as_deref(), &m.labels))
        .collect();
    let rows: Vec<(AutoUpdatePolicy, AutoUpdatePolicy)> = machines
        .iter()
        .map(|m| {
            (AutoUpdatePolicy::of(&ctx.site, &m.id, m.auto_update), AutoUpdatePolicy::of(&ctx.site, &m.id, setting))
        })
        .collect();
    let lines = rows
        .iter()
        .map(|(before, after)| {
            format!("  {}  {} -> {}", before.machine_id, before.effective_text(), after.effective_text())
        })
        .collect::<Vec<_>>()
        .join("\n");
    let word = setting_word(setting);
    if rows.is_empty() || args.dry_run {
        let preview: Vec<_> = rows
            .iter()
            .map(
                |(b, a)| json!({"machine_id": b.machine_id, "before": b.effective_text(), "after": a.effective_text()}),
            )
            .collect();
        let doc = json!({"action": "machine auto-update", "selector": selector, "setting": word, "dry_run": true, "machines": preview});
        let text = if rows.is_empty() {
            format!("no registered machine matches {selector}; nothing to change")
        } else {
            format!("would {word} auto-update on {} machine(s) matching {selector}:\n{lines}", rows.len())
        };
        return crate::output::result(ctx.format, &doc, text);
    }
    crate::confirm::confirm(
        &format!(
            "{} the auto-update override of {} machine(s) matching {selector}?\n{lines}\n",
            capitalised(word),
            rows.len()
        ),
        args.yes,
    )?;
    let ids: Vec<String> = machines.iter().map(|m| m.id.clone()).collect();
    ctx.store.machine_set_auto_update_many(&ids, setting).await?;
    for id in &ids {
        ctx.audit("machine auto-update", id, &format!("{word} (selector {selector})")).await?;
    }
    crate::wake::wake(ctx, &format!("auto-update changed on {} machine(s) matching {selector}", ids.len())).await;
    let after: Vec<AutoUpdatePolicy> = rows.into_iter().map(|(_, a)| a).collect();
    let doc = json!({"action": "machine auto-update", "selector": selector, "setting": word, "machines": after});
    let text = format!(
        "auto-update {word} on {} machine(s) matching {selector}:\n{}",
        after.len(),
        after.iter().map(|p| format!("  {}", p.describe())).collect::<Vec<_>>().join("\n")
    );
    crate::output::result(ctx.format, &doc, text)
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
