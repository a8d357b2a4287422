//! `doctor [--fix]`: every disagreement between the site database and Temporal, with what fixing
//! it means; `--fix` applies the fixes and audits each one. Each fix re-checks its finding first
//! (`repair::recheck`): one that resolved itself since the listing is skipped with a line saying
//! so (`skipped, no longer true: ...`), not acted on and not audited.
//!
//! Owns the command's output and audit. What counts as a disagreement and how it is fixed is
//! `hostfw_activities::repair`'s (the scheduler repairs the same way); this file must not
//! decide either.

use hostfw_activities::repair::{self, Finding, Fixed};
use serde::Serialize;

use crate::context::Context;
use crate::output;

/// One finding of `doctor` (`GET /v1/doctor` and `POST /v1/doctor/fix` answer a list).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = DoctorFinding))]
pub struct Row {
    machine_id: String,
    kind: &'static str,
    problem: String,
    remedy: String,
    /// With `--fix`: what was done (or the error).
    done: Option<String>,
}

/// `doctor`. Fails (exit status 1) when something is left to fix.
pub async fn doctor(ctx: &Context, fix: bool) -> anyhow::Result<()> {
    let client = ctx.temporal().await?;
    let found = repair::find(&ctx.store, &client, repair::DOCTOR_SETTLE_MS).await?;
    let deps = if fix && found.iter().any(Finding::fixable) { Some(crate::deps(ctx).await?) } else { None };
    let mut rows = Vec::new();
    let mut left = 0;
    for finding in &found {
        let done = match (&deps, finding.fixable()) {
            (Some(deps), true) => match repair::fix(deps, &client, finding, &ctx.actor).await {
                Ok(Fixed::Done(done)) => {
                    ctx.audit("doctor --fix", finding.machine_id(), &format!("{}: {done}", finding.kind())).await?;
                    Some(done)
                }
                // Re-checked before acting: it resolved itself meanwhile; nothing done, nothing audited.
                Ok(skipped @ Fixed::NoLongerHolds(_)) => Some(skipped.to_string()),
                Err(e) => {
                    left += 1;
                    Some(format!("FAILED: {}", hostfw_model::error_chain(&e)))
                }
            },
            _ => {
                left += 1;
                None
            }
        };
        rows.push(Row {
            machine_id: finding.machine_id().to_string(),
            kind: finding.kind(),
            problem: finding.problem(),
            remedy: finding.remedy(),
            done,
        });
    }
    if rows.is_empty() {
        if ctx.format == crate::cli::Format::Json {
            output::print(ctx.format, &rows, &[], Vec::new())?;
        } else {
            crate::outln!("site database and Temporal agree: nothing to repair");
        }
        return Ok(());
    }
    let table = rows
        .iter()
        .map(|r| {
            vec![
                r.machine_id.clone(),
                r.kind.to_string(),
                r.problem.clone(),
                r.done.clone().unwrap_or_else(|| format!("to fix: {}", r.remedy)),
            ]
        })
        .collect();
    output::print(ctx.format, &rows, &["MACHINE", "KIND", "PROBLEM", if fix { "DONE" } else { "FIX (--fix)" }], table)?;
    if left > 0 {
        anyhow::bail!(
            "{left} of {} inconsistencies left{}",
            rows.len(),
            if fix { "" } else { "; run `hostfw doctor --fix`" }
        );
    }
    Ok(())
}
