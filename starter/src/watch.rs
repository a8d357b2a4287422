//! `hostfw watch`: follow the automatic rollout the Machine Update Manager drives, with a live
//! bar (compliant / in progress / waiting / failed), until every managed host is compliant or the
//! timeout passes; then a report per model, the highest number of hosts updated at once next to
//! the ceiling, and `compliant: Y/Y hosts`. It only reads: the scheduler does the work.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::bail;
use hostfw_activities::site_view;
use hostfw_model::gates::{self, FirmwareStatus};
use hostfw_model::update_intervals::{max_overlap, update_intervals};
use hostfw_model::HostSubstate;
use indicatif::{ProgressBar, ProgressStyle};

use crate::context::Context;

/// One look at the site.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Tally {
    total: usize,
    compliant: usize,
    in_progress: usize,
    waiting: usize,
    failed: usize,
    /// Failed hosts whose retry budget is spent: only an operator moves them on.
    exhausted: usize,
}

impl Tally {
    /// Nothing can change any more without an operator: every host is compliant or exhausted.
    fn settled(&self) -> bool {
        self.total > 0 && self.in_progress == 0 && self.waiting == 0 && self.failed == self.exhausted
    }
}

async fn tally(ctx: &Context) -> anyhow::Result<(Tally, u32)> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let view = site_view::read(&ctx.store, &catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let ceiling = gates::plan(&view.input).ceiling.limit;
    let machines = ctx.store.machine_list().await?;
    let substates: BTreeMap<&str, Option<HostSubstate>> =
        machines.iter().map(|m| (m.id.as_str(), m.substate)).collect();
    let max_retries = ctx.site.host_reprovision.max_retries;
    let exhausted: Vec<&str> =
        view.requests.iter().filter(|r| r.retry_count >= max_retries).map(|r| r.machine_id.as_str()).collect();
    let mut t = Tally { total: view.input.hosts.len(), ..Tally::default() };
    for host in &view.input.hosts {
        let substate = substates.get(host.machine_id.as_str()).copied().flatten();
        let is = |s: HostSubstate| substate == Some(s);
        if host.has_request {
            if is(HostSubstate::FailedFirmwareUpgrade) {
                t.failed += 1;
                t.exhausted += usize::from(exhausted.contains(&host.machine_id.as_str()));
            } else if is(HostSubstate::WaitingForApproval) || is(HostSubstate::WaitingForManualUpgrade) {
                t.waiting += 1;
            } else {
                t.in_progress += 1;
            }
        } else if host.firmware.is_compliant() {
            t.compliant += 1;
        } else if matches!(host.firmware, FirmwareStatus::ExploreFailed { .. }) {
            t.failed += 1;
        } else {
            t.waiting += 1;
        }
    }
    Ok((t, ceiling))
}

/// `hostfw watch`.
pub async fn watch(ctx: &Context, timeout_secs: u64) -> anyhow::Result<()> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(timeout_secs);
    let (mut t, mut ceiling) = tally(ctx).await?;
    let bar = ProgressBar::new(t.total as u64);
    bar.set_style(ProgressStyle::with_template("compliant {bar:30} {pos}/{len}  {msg}")?);
    let plain = !std::io::stderr().is_terminal();
    let mut last = None;
    loop {
        let message = format!(
            "in progress {} / waiting {} / failed {} ({} exhausted)",
            t.in_progress, t.waiting, t.failed, t.exhausted
        );
        bar.set_length(t.total as u64);
        bar.set_position(t.compliant as u64);
        if plain && last.as_ref() != Some(&t) {
            // No terminal for the bar (CI logs, pipes): print each change as a plain line.
            eprintln!("progress: compliant {}/{}, {message}", t.compliant, t.total);
        }
        bar.set_message(message);
        last = Some(t.clone());
        if t.settled() {
            break;
        }
        if Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        (t, ceiling) = tally(ctx).await?;
    }
    bar.finish_and_clear();
    report(ctx, &t, ceiling, started.elapsed()).await?;
    if t.compliant != t.total {
        bail!("gave up after {timeout_secs} s: {} of {} hosts are not compliant", t.total - t.compliant, t.total);
    }
    Ok(())
}

/// The largest number of hosts updating at one instant, from the recorded state history, and
/// how many hosts were updated at all.
async fn highest_in_flight(ctx: &Context) -> anyhow::Result<(usize, usize)> {
    let mut all = Vec::new();
    let mut updated = 0;
    for m in ctx.store.machine_list().await? {
        let history = ctx.store.history_list(&m.id, 10_000).await?;
        let intervals = update_intervals(history.iter().rev().map(|h| (h.state, h.at_ms)));
        updated += usize::from(!intervals.is_empty());
        all.extend(intervals);
    }
    Ok((max_overlap(&all), updated))
}

async fn report(ctx: &Context, t: &Tally, ceiling: u32, took: Duration) -> anyhow::Result<()> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let view = site_view::read(&ctx.store, &catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let machines = ctx.store.machine_list().await?;
    let mut per_model: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut not_compliant = Vec::new();
    for (m, h) in machines.iter().zip(&view.input.hosts) {
        let model = format!("{} {}", m.vendor.as_deref().unwrap_or("?"), m.model.as_deref().unwrap_or("?"));
        let entry = per_model.entry(model).or_default();
        entry.0 += 1;
        if h.firmware.is_compliant() && !h.has_request {
            entry.1 += 1;
        } else {
            not_compliant.push(format!(
                "{} ({})",
                m.id,
                m.substate.map_or_else(|| m.state.to_string(), |s| s.to_string())
            ));
        }
    }
    let rows: Vec<Vec<String>> =
        per_model.iter().map(|(model, (hosts, ok))| vec![model.clone(), hosts.to_string(), ok.to_string()]).collect();
    crate::outln!();
    crate::out!("{}", crate::output::table(&["MODEL", "HOSTS", "COMPLIANT"], &rows));
    if !not_compliant.is_empty() {
        crate::outln!("not compliant: {}", not_compliant.join(", "));
    }
    let (highest, updated) = highest_in_flight(ctx).await?;
    crate::outln!("hosts updated: {updated}; highest in flight at once: {highest} (ceiling {ceiling})");
    crate::outln!("watched for {:.1}s", took.as_secs_f64());
    if let Ok(ui) = std::env::var("HOSTFW_WEB_UI") {
        crate::outln!("Temporal Web UI: {ui}/namespaces/{}/workflows", ctx.site.temporal.namespace);
    }
    crate::outln!("metrics: http://{}/metrics", ctx.site.worker.metrics_listen);
    crate::outln!("compliant: {}/{} hosts", t.compliant, t.total);
    Ok(())
}
