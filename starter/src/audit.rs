//! `audit [--limit N] [--target <id>]`: the audit trail, newest first.
//!
//! Owns reading and printing audit entries; it must not write any (mutations record themselves
//! through `Context::audit`).

use crate::cli::AuditArgs;
use crate::context::Context;
use crate::output;

/// `audit`.
pub async fn audit(ctx: &Context, args: &AuditArgs) -> anyhow::Result<()> {
    let entries = match &args.target {
        Some(target) => ctx.store.audit_list_for_target(target, args.limit).await?,
        None => ctx.store.audit_list(args.limit).await?,
    };
    let rows = entries
        .iter()
        .map(|e| {
            vec![
                e.seq.to_string(),
                output::time(e.at_ms),
                e.actor.clone(),
                e.action.clone(),
                e.target.clone(),
                e.detail.clone(),
            ]
        })
        .collect();
    output::print(ctx.format, &entries, &["SEQ", "WHEN", "WHO", "ACTION", "TARGET", "DETAIL"], rows)
}
