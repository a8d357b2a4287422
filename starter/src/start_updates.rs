//! `managed-host start-updates --machines <id>... [--start T] [--end T] [--cancel]`: the firmware
//! update window of hosts whose model has `explicit_start_needed` (seed, "Open an explicit-start
//! window").
//!
//! Owns checking every input first (times, then every machine id, all unknown ids in one error)
//! and then writing every window in one transaction. It opens a scheduler gate only: it must not
//! create a reprovisioning request or start a workflow.

use anyhow::bail;
use serde::Serialize;

use crate::cli::StartUpdatesArgs;
use crate::context::Context;
use crate::output;
use crate::window_time::{resolve_window, rfc3339_utc, system_local};

/// One machine's window after the command (also the JSON output).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MachineWindow {
    pub machine_id: String,
    /// RFC 3339 in UTC; `None` when cancelled.
    pub window_start: Option<String>,
    pub window_end: Option<String>,
}

/// `managed-host start-updates`.
pub async fn start_updates(ctx: &Context, args: &StartUpdatesArgs) -> anyhow::Result<()> {
    let mut ids: Vec<String> = Vec::new();
    for id in &args.machines {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    let window = if args.cancel {
        None
    } else {
        let now = hostfw_store::now_ms();
        Some(resolve_window(args.start.as_deref(), args.end.as_deref(), now, system_local)?)
    };
    let mut unknown = Vec::new();
    for id in &ids {
        if ctx.store.machine_get(id).await?.is_none() {
            unknown.push(id.as_str());
        }
    }
    if !unknown.is_empty() {
        bail!(
            "{} {} not registered (see `hostfw machine list`); no window was changed",
            if unknown.len() == 1 { "machine" } else { "machines" },
            if unknown.len() == 1 { format!("{} is", unknown[0]) } else { format!("{} are", unknown.join(", ")) },
        );
    }
    ctx.store.machine_set_update_windows(&ids, window).await?;
    let detail = match window {
        Some(w) => format!("window {w}"),
        None => "window cancelled".to_string(),
    };
    for id in &ids {
        ctx.audit("managed-host start-updates", id, &detail).await?;
    }
    // The scheduler learns of the window now (and sleeps until it opens when it starts later).
    crate::wake::wake(ctx, "update windows changed").await;

    let result: Vec<MachineWindow> = ids
        .iter()
        .map(|id| MachineWindow {
            machine_id: id.clone(),
            window_start: window.map(|w| rfc3339_utc(w.start_ms)),
            window_end: window.map(|w| rfc3339_utc(w.end_ms)),
        })
        .collect();
    let rows = result
        .iter()
        .map(|w| {
            vec![
                w.machine_id.clone(),
                w.window_start.clone().unwrap_or_else(|| "-".into()),
                w.window_end.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    output::print(ctx.format, &result, &["MACHINE", "WINDOW START (UTC)", "WINDOW END (UTC)"], rows)?;
    if ctx.format == crate::cli::Format::Table {
        let what = match window {
            None => "update window cancelled".to_string(),
            Some(w) if w.start_ms > hostfw_store::now_ms() => {
                format!("update window set: it opens at {}", rfc3339_utc(w.start_ms))
            }
            Some(_) => "update window opened".to_string(),
        };
        crate::outln!("{what}; no update request was created (the scheduler starts updates inside the window)");
    }
    Ok(())
}
