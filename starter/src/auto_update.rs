//! `machine auto-update --machine <id> (--enable | --disable | --clear)`: the per-machine
//! automatic-update override (seed, "Enable or disable one host").
//!
//! Owns setting the override and reporting the policy then in effect (override, else
//! `firmware_global.autoupdate`). It must not select hosts or create requests (the scheduler
//! gates do), and it writes nothing for an unknown machine.

use anyhow::bail;
use serde::Serialize;

use crate::cli::{AutoUpdateArgs, Format};
use crate::context::Context;

/// The policy of one machine after the change (also the JSON output).
#[derive(Debug, Serialize)]
pub struct AutoUpdatePolicy {
    pub machine: String,
    /// The per-machine override; `None` = site default.
    pub r#override: Option<bool>,
    /// `firmware_global.autoupdate`.
    pub site_default: bool,
    /// What the scheduler applies.
    pub effective: bool,
    /// The machine is listed in the legacy `firmware_global.host_disable_autoupdate`.
    pub legacy_disabled: bool,
}

fn on_off(b: bool) -> &'static str {
    if b {
        "enabled"
    } else {
        "disabled"
    }
}

impl AutoUpdatePolicy {
    /// One line: `auto-update of m1: disabled (per-machine override)`.
    pub fn describe(&self) -> String {
        match self.r#override {
            Some(b) => format!("auto-update of {}: {} (per-machine override)", self.machine, on_off(b)),
            None => format!("auto-update of {}: site default ({})", self.machine, on_off(self.site_default)),
        }
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
    let id = args.machine.as_str();
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

    let site_default = ctx.site.firmware_global.autoupdate;
    let policy = AutoUpdatePolicy {
        machine: id.to_string(),
        r#override: setting,
        site_default,
        effective: setting.unwrap_or(site_default),
        legacy_disabled: ctx.site.firmware_global.host_disable_autoupdate.iter().any(|m| m == id),
    };
    match ctx.format {
        Format::Json => crate::outln!("{}", serde_json::to_string_pretty(&policy)?),
        Format::Table => {
            crate::outln!("{}", policy.describe());
            if policy.legacy_disabled {
                crate::outln!("note: {id} is also listed in the legacy firmware_global.host_disable_autoupdate");
            }
        }
    }
    Ok(())
}
