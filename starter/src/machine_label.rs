//! `machine label --machine <id> [--set key=value ...] [--remove key ...]`: change a machine's
//! labels (failure domains such as `rack=r12`, capped by `[machine_updater]
//! max_concurrent_per_label`).
//!
//! Owns parsing the arguments, the one store call, the audit entry and the report of the labels
//! now in effect, with the caps that apply to them. Bad input (syntax, a key both set and removed,
//! an unknown machine) changes nothing. It must not create requests or decide anything about
//! scheduling.

use anyhow::{anyhow, bail};

use crate::cli::LabelArgs;
use crate::context::Context;

/// `machine label`.
pub async fn label(ctx: &Context, args: &LabelArgs) -> anyhow::Result<()> {
    let id = args.machine.id();
    if args.set.is_empty() && args.remove.is_empty() {
        bail!("machine label --machine {id}: give --set key=value and/or --remove key");
    }
    let set = hostfw_model::parse_labels(args.set.iter().map(String::as_str)).map_err(|e| anyhow!("--set: {e}"))?;
    for key in &args.remove {
        hostfw_model::labels::check_key(key).map_err(|e| anyhow!("--remove: {e}"))?;
    }
    let labels =
        ctx.store.machine_set_labels(id, &set, &args.remove).await.map_err(|e| {
            anyhow!("machine label --machine {id}: {}; nothing was changed", hostfw_model::error_chain(&e))
        })?;
    let text = hostfw_model::labels_text(&labels);
    let mut detail = Vec::new();
    if !set.is_empty() {
        detail.push(format!("set {}", hostfw_model::labels_text(&set)));
    }
    if !args.remove.is_empty() {
        detail.push(format!("removed {}", args.remove.join(",")));
    }
    ctx.audit("machine label", id, &detail.join("; ")).await?;
    let caps = &ctx.site.machine_updater.max_concurrent_per_label;
    let capped: Vec<String> = labels
        .iter()
        .filter_map(|(k, v)| caps.get(k).map(|limit| format!("{k}={v}: at most {limit} at once")))
        .collect();
    let json = serde_json::json!({ "action": "machine label", "machine_id": id, "labels": labels, "capped": capped });
    let mut human = format!("machine {id} labels: {}", if text.is_empty() { "(none)" } else { text.as_str() });
    if !capped.is_empty() {
        human.push_str(&format!(" (failure-domain caps: {})", capped.join("; ")));
    }
    crate::output::result(ctx.format, &json, human)
}
