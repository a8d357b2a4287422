//! `hostfw config reload [--wait SECONDS]`: ask every worker of the site to re-read its site
//! config file, and report what each one did.
//!
//! The request goes into the site database (audited with the CLI's actor), so it reaches every
//! worker process, not only a local one; each worker answers applied / unchanged / refused
//! (naming the keys that need a restart) / invalid (the file's error) within a couple of seconds.
//! The workers waited for are those seen polling for requests just before (`worker_presence`).
//!
//! Owns the command: [`reload`] computes the typed [`ReloadReport`] without printing (an HTTP API
//! can return the same document), [`config_reload`] prints it. It must not read or apply any
//! config file itself (the workers do, `hostfw_worker::live_config`).

use std::time::{Duration, Instant};

use anyhow::Context as _;
use hostfw_model::rfc3339_utc;
use hostfw_store::{ReloadAnswer, ReloadOutcome, ReloadRequest, Store};
use serde::Serialize;

use crate::context::Context;

/// How often the CLI reads the answers while it waits: answers arrive within the workers' 2 s
/// poll, so a quarter second adds little to the wait and costs one indexed read each.
const ANSWERS_POLL_EVERY: Duration = Duration::from_millis(250);

/// What a reload request got: the document `config reload` prints (`--format json`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReloadReport {
    /// The stored request.
    pub request: ReloadRequest,
    /// The workers live when it was stored (seen polling for requests within
    /// `hostfw_store::WORKER_LIVE_WITHIN_MS`): the ones waited for.
    pub live_workers: Vec<String>,
    /// Every answer within the wait, by worker identity.
    pub answers: Vec<ReloadAnswer>,
    /// Live workers that did not answer within the wait.
    pub silent: Vec<String>,
    /// Some worker answered, every live worker answered, and none refused or failed to load.
    pub ok: bool,
}

/// Store a reload request by `actor` and wait up to `wait` until every live worker answered.
pub async fn reload(store: &Store, actor: &str, wait: Duration) -> anyhow::Result<ReloadReport> {
    let request = store.config_reload_request(actor, None).await.context("storing the reload request")?;
    let live_workers = store.workers_live_at(request.requested_at_ms).await.context("reading the live workers")?;
    let deadline = Instant::now() + wait;
    let answers = loop {
        let answers = store.config_reload_answers(request.id).await.context("reading the workers' answers")?;
        let all_in = !live_workers.is_empty() && live_workers.iter().all(|w| answers.iter().any(|a| a.worker == *w));
        if all_in || Instant::now() >= deadline {
            break answers;
        }
        tokio::time::sleep(ANSWERS_POLL_EVERY.min(deadline.saturating_duration_since(Instant::now()))).await;
    };
    let silent: Vec<String> =
        live_workers.iter().filter(|w| !answers.iter().any(|a| a.worker == **w)).cloned().collect();
    let ok = !answers.is_empty()
        && silent.is_empty()
        && answers.iter().all(|a| matches!(a.outcome, ReloadOutcome::Applied | ReloadOutcome::Unchanged));
    Ok(ReloadReport { request, live_workers, answers, silent, ok })
}

/// `hostfw config reload`: print each worker's answer; fails (exit status 1) unless `ok`.
pub async fn config_reload(ctx: &Context, wait_secs: u64) -> anyhow::Result<()> {
    let report = reload(&ctx.store, &ctx.actor, Duration::from_secs(wait_secs)).await?;
    if ctx.format == crate::cli::Format::Table {
        crate::outln!(
            "reload request {} by {} at {}",
            report.request.id,
            report.request.actor,
            rfc3339_utc(report.request.requested_at_ms)
        );
    }
    let rows: Vec<Vec<String>> = report
        .answers
        .iter()
        .map(|a| {
            vec![
                a.worker.clone(),
                a.outcome.as_str().to_string(),
                a.keys.join(", "),
                a.problem.clone().unwrap_or_default(),
                rfc3339_utc(a.answered_at_ms),
            ]
        })
        .collect();
    crate::output::print(ctx.format, &report, &["WORKER", "OUTCOME", "KEYS", "PROBLEM", "ANSWERED AT"], rows)?;
    if ctx.format == crate::cli::Format::Table {
        for worker in &report.silent {
            crate::outln!("{worker}: no answer within {wait_secs} s");
        }
        if report.live_workers.is_empty() && report.answers.is_empty() {
            crate::outln!("no worker is running (none polled the site database in the last seconds)");
        }
    }
    if !report.ok {
        anyhow::bail!("the reload was not applied by every worker (see above)");
    }
    Ok(())
}
