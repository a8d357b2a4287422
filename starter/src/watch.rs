//! `hostfw watch`: follow the automatic rollout the Machine Update Manager drives, with a live
//! bar (compliant / in progress / waiting / failed), until every managed host is compliant or
//! nothing can change without an operator, or the timeout passes; then a report per model, this
//! run's numbers (hosts updated and the highest number updated at once since the watch began,
//! next to the ceiling), the compliance table per model and component (`hostfw compliance`), and
//! the reason each host that is not compliant waits. With
//! `--format json` it prints one JSON object per change and a final report object instead.
//! It only reads: the scheduler does the work.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use anyhow::bail;
use hostfw_activities::site_view;
use hostfw_model::gates::{self, FirmwareStatus};
use hostfw_model::update_intervals::{max_overlap, update_intervals};
use hostfw_model::{ComplianceView, HostSubstate};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::cli::Format;
use crate::context::Context;

/// One look at the site (`GET /v1/watch/tally` answers it).
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tally {
    total: usize,
    compliant: usize,
    in_progress: usize,
    waiting: usize,
    failed: usize,
    /// Failed hosts whose retry budget is spent: only an operator moves them on.
    exhausted: usize,
    /// Hosts held because a target they would install is paused by its error budget: only an
    /// operator (`hostfw budget resume`) moves them on.
    paused: usize,
    ceiling: u32,
    /// Why each host that is neither compliant nor in progress waits (or failed).
    reasons: BTreeMap<String, String>,
    /// Each rollout target's open canary wave, as a sentence ("wave 2 of 3: 8 hosts in all, of 29").
    waves: BTreeMap<String, String>,
    /// Each paused rollout target and why.
    paused_targets: BTreeMap<String, String>,
    /// Hosts that would start but are held by a freeze (`hostfw freeze`): only an operator
    /// (`hostfw unfreeze`) moves them on.
    #[serde(default)]
    frozen: usize,
    /// Each freeze in force ("freeze 3"), as a sentence: scope, who, why, drain.
    #[serde(default)]
    freezes: BTreeMap<String, String>,
}

impl Tally {
    /// Nothing can change any more without an operator: every host is compliant, exhausted,
    /// held by a paused target or held by a freeze.
    fn settled(&self) -> bool {
        self.total > 0 && self.in_progress == 0 && self.waiting == 0 && self.failed == self.exhausted
    }

    /// Nothing will start: the ceiling is 0, nothing is in flight, and hosts wait.
    fn stuck_at_zero_ceiling(&self) -> bool {
        self.ceiling == 0 && self.in_progress == 0 && self.waiting > 0
    }
}

async fn tally(ctx: &Context) -> anyhow::Result<Tally> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let view = site_view::read(&ctx.store, &catalog, &ctx.site, hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    let skipped: BTreeMap<&str, String> =
        plan.skipped.iter().map(|s| (s.machine_id.as_str(), s.reason.for_host(&s.machine_id))).collect();
    let held_by_pause: BTreeSet<&str> = plan.held_by_pause().collect();
    let machines = ctx.store.machine_list().await?;
    let substates: BTreeMap<&str, Option<HostSubstate>> =
        machines.iter().map(|m| (m.id.as_str(), m.substate)).collect();
    let max_retries = ctx.site.host_reprovision.max_retries;
    let mut t = Tally { total: view.input.hosts.len(), ceiling: plan.ceiling.limit, ..Tally::default() };
    for w in &plan.waves {
        let sentence =
            format!("canary wave {} of {}: {} hosts in all, of {}", w.wave, w.waves, w.allowed.min(w.hosts), w.hosts);
        t.waves.insert(w.target.to_string(), sentence);
    }
    for p in &plan.paused {
        t.paused_targets.insert(p.target.to_string(), p.rule.clone());
    }
    for f in &plan.brakes.freezes {
        let drain = if f.drain { " (drain: hosts in flight finish)" } else { "" };
        t.freezes.insert(format!("freeze {}", f.id), format!("on {} by {}{drain}: {}", f.scope.key(), f.by, f.reason));
    }
    let held_by_freeze: BTreeSet<&str> = plan.held_by_freeze().collect();
    for host in &view.input.hosts {
        let id = host.machine_id.as_str();
        let substate = substates.get(id).copied().flatten();
        let request = view.requests.iter().find(|r| r.machine_id == id);
        let is = |s: HostSubstate| substate == Some(s);
        if let Some(r) = request {
            if is(HostSubstate::FailedFirmwareUpgrade) {
                t.failed += 1;
                t.exhausted += usize::from(r.exhausted);
                t.reasons.insert(id.to_string(), crate::reprovision::substate_text(substate, r, max_retries));
            } else if is(HostSubstate::WaitingForApproval) {
                t.waiting += 1;
                t.reasons.insert(id.to_string(), "waits for the tenant's approval or the autoreboot period".into());
            } else if is(HostSubstate::WaitingForManualUpgrade) {
                t.waiting += 1;
                t.reasons.insert(
                    id.to_string(),
                    "waits for the manual platform procedure (host reprovision mark-manual-upgrade-complete)".into(),
                );
            } else {
                t.in_progress += 1;
            }
        } else if host.firmware.is_compliant() {
            t.compliant += 1;
        } else if plan.start.iter().any(|s| s == id) {
            t.waiting += 1;
            t.reasons.insert(id.to_string(), "starts at the scheduler's next pass".into());
        } else {
            let paused = held_by_pause.contains(id);
            if matches!(host.firmware, FirmwareStatus::ExploreFailed { .. }) {
                t.failed += 1;
            } else if paused {
                t.paused += 1;
            } else if held_by_freeze.contains(id) {
                t.frozen += 1;
            } else {
                t.waiting += 1;
            }
            let why = skipped.get(id).cloned().unwrap_or_else(|| "not compliant".to_string());
            t.reasons.insert(id.to_string(), why);
        }
    }
    Ok(t)
}

/// One line of `watch --format json`.
#[derive(Serialize)]
struct Change<'a> {
    at_ms: i64,
    #[serde(flatten)]
    tally: &'a Tally,
}

/// Where `watch` looks: the site itself, or the hostfw API (`hostfw -a URL watch` polls its
/// read routes).
pub trait WatchSource {
    /// One look at the site.
    fn tally(&self) -> impl std::future::Future<Output = anyhow::Result<Tally>>;
    /// Print the final report of a watch that began at `since_ms` and lasted `took`.
    fn report(&self, t: &Tally, since_ms: i64, took: Duration)
        -> impl std::future::Future<Output = anyhow::Result<()>>;
}

/// The site itself (its database and config).
pub struct LocalSite<'a>(pub &'a Context);

impl WatchSource for LocalSite<'_> {
    async fn tally(&self) -> anyhow::Result<Tally> {
        tally(self.0).await
    }
    async fn report(&self, t: &Tally, since_ms: i64, took: Duration) -> anyhow::Result<()> {
        report(self.0, t, since_ms, took).await
    }
}

/// The hostfw API: `GET /v1/watch/tally` for each look, `GET /v1/watch/report` at the end.
pub struct RemoteSite<'a>(pub &'a crate::api_client::Remote);

impl WatchSource for RemoteSite<'_> {
    async fn tally(&self) -> anyhow::Result<Tally> {
        let text = self.0.send(reqwest::Method::GET, "/v1/watch/tally", None, false).await?;
        Ok(serde_json::from_str(&text)?)
    }
    async fn report(&self, _t: &Tally, since_ms: i64, took: Duration) -> anyhow::Result<()> {
        let path = format!("/v1/watch/report?since_ms={since_ms}&watched_ms={}", took.as_millis());
        let text = self.0.send(reqwest::Method::GET, &path, None, true).await?;
        crate::out!("{}", if text.ends_with('\n') { text } else { format!("{text}\n") });
        Ok(())
    }
}

/// `GET /v1/watch/tally`: one look at the site, as JSON (whatever the format).
pub async fn print_tally(ctx: &Context) -> anyhow::Result<()> {
    crate::outln!("{}", serde_json::to_string(&tally(ctx).await?)?);
    Ok(())
}

/// `GET /v1/watch/report`: the report of a watch that began at `since_ms` and lasted `took`.
pub async fn print_report(ctx: &Context, since_ms: i64, took: Duration) -> anyhow::Result<()> {
    let t = tally(ctx).await?;
    report(ctx, &t, since_ms, took).await
}

/// `hostfw watch`.
pub async fn watch(ctx: &Context, timeout_secs: u64) -> anyhow::Result<()> {
    follow(&LocalSite(ctx), ctx.format, timeout_secs).await
}

/// Follow the rollout through `source` until it settles or `timeout_secs` pass.
pub async fn follow(source: &impl WatchSource, format: Format, timeout_secs: u64) -> anyhow::Result<()> {
    let started = Instant::now();
    let started_ms = hostfw_store::now_ms();
    let deadline = started + Duration::from_secs(timeout_secs);
    let json = format == Format::Json;
    let mut t = source.tally().await?;
    let bar = if json { ProgressBar::hidden() } else { ProgressBar::new(t.total as u64) };
    bar.set_style(ProgressStyle::with_template("compliant {bar:30} {pos}/{len}  {msg}")?);
    let plain = !std::io::stderr().is_terminal();
    let mut last: Option<Tally> = None;
    let stuck = loop {
        let message = format!(
            "in progress {} / waiting {} / failed {} ({} exhausted){}",
            t.in_progress,
            t.waiting,
            t.failed,
            t.exhausted,
            if t.paused > 0 { format!(" / paused {}", t.paused) } else { String::new() }
        ) + &if t.frozen > 0 { format!(" / frozen {}", t.frozen) } else { String::new() };
        for line in events(last.as_ref(), &t) {
            if json {
                continue;
            } else if plain {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
        }
        if last.as_ref() != Some(&t) {
            if json {
                crate::outln!(
                    "{}",
                    crate::json_contract::to_json_line(&Change { at_ms: hostfw_store::now_ms(), tally: &t })?
                );
            } else if plain {
                // No terminal for the bar (CI logs, pipes): print each change as a plain line.
                eprintln!("progress: compliant {}/{}, {message}", t.compliant, t.total);
            }
        }
        bar.set_length(t.total as u64);
        bar.set_position(t.compliant as u64);
        bar.set_message(message);
        last = Some(t.clone());
        if t.settled() {
            break false;
        }
        if t.stuck_at_zero_ceiling() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        t = source.tally().await?;
    };
    bar.finish_and_clear();
    source.report(&t, started_ms, started.elapsed()).await?;
    if stuck {
        bail!(
            "the site update ceiling is 0 (max_concurrent_machine_updates_absolute / _percent): no automatic \
             update starts, so {} waiting hosts will wait forever; set a ceiling in [machine_updater], or start \
             hosts directly with `hostfw host reprovision set`",
            t.waiting
        );
    }
    if t.compliant != t.total {
        let why = if t.settled() { operator_needed(&t) } else { format!("gave up after {timeout_secs} s") };
        bail!("{why}: {} of {} hosts are not compliant", t.total - t.compliant, t.total);
    }
    Ok(())
}

/// What changed in the rollout's canary waves, paused targets and freezes since `last` (every
/// wave, pause and freeze at the first look).
fn events(last: Option<&Tally>, t: &Tally) -> Vec<String> {
    let mut lines = Vec::new();
    for (freeze, what) in &t.freezes {
        if last.and_then(|l| l.freezes.get(freeze)).is_none() {
            let id = freeze.trim_start_matches("freeze ");
            lines.push(format!("FROZEN: {freeze} {what} (`hostfw unfreeze --id {id}` lifts it)"));
        }
    }
    for freeze in last.map(|l| l.freezes.keys().collect::<Vec<_>>()).unwrap_or_default() {
        if !t.freezes.contains_key(freeze) {
            lines.push(format!("{freeze} lifted"));
        }
    }
    for (target, wave) in &t.waves {
        if last.and_then(|l| l.waves.get(target)) != Some(wave) {
            lines.push(format!("{target}: {wave}"));
        }
    }
    for (target, why) in &t.paused_targets {
        if last.and_then(|l| l.paused_targets.get(target)).is_none() {
            lines.push(format!("{target}: PAUSED, {why} (`hostfw plan` lists the failed hosts)"));
        }
    }
    lines
}

/// Why a settled watch ends with hosts not compliant.
fn operator_needed(t: &Tally) -> String {
    let mut parts = Vec::new();
    if t.exhausted > 0 || t.paused == 0 {
        parts.push(format!("{} exhausted", t.exhausted));
    }
    if t.paused > 0 {
        parts.push(format!("{} held by a paused target (`hostfw budget list`)", t.paused));
    }
    if t.frozen > 0 {
        parts.push(format!("{} held by a freeze (`hostfw freeze list`)", t.frozen));
    }
    format!("hosts need an operator: {}", parts.join(", "))
}

/// This run's numbers, from the recorded state history: hosts whose update ended after
/// `since_ms`, and the largest number of hosts updating at one instant since then.
async fn this_run(ctx: &Context, since_ms: i64) -> anyhow::Result<(usize, usize)> {
    let mut all = Vec::new();
    let mut updated = 0;
    for m in ctx.store.machine_list().await? {
        let history = ctx.store.history_list(&m.id, 10_000).await?;
        let intervals: Vec<_> = update_intervals(history.iter().rev().map(|h| (h.state, h.at_ms)))
            .into_iter()
            .filter(|(_, end)| end.is_none_or(|end| end > since_ms))
            .collect();
        updated += usize::from(intervals.iter().any(|(_, end)| end.is_some()));
        all.extend(intervals);
    }
    Ok((max_overlap(&all), updated))
}

/// The final report of a watch.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = WatchReport))]
pub struct Report {
    models: Vec<ModelRow>,
    /// Hosts whose update finished while the watch ran.
    hosts_updated: usize,
    /// The most hosts updating at one instant while the watch ran.
    highest_in_flight: usize,
    ceiling: u32,
    watched_secs: f64,
    compliant: usize,
    total: usize,
    exhausted: usize,
    /// Why each host that is not compliant is not.
    not_compliant: BTreeMap<String, String>,
    /// Per model and component, as `hostfw compliance` shows it.
    compliance: ComplianceView,
}

/// The last line of `watch --format json`, the report set apart from the change lines under
/// `report` (`GET /v1/watch/report` answers it).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = WatchReportLine))]
pub struct ReportLine {
    report: Report,
}

/// Hosts and compliant hosts of one model.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelRow {
    model: String,
    hosts: usize,
    compliant: usize,
}

async fn report(ctx: &Context, t: &Tally, since_ms: i64, took: Duration) -> anyhow::Result<()> {
    let machines = ctx.store.machine_list().await?;
    let mut per_model: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for m in &machines {
        let model = format!("{} {}", m.vendor.as_deref().unwrap_or("?"), m.model.as_deref().unwrap_or("?"));
        let entry = per_model.entry(model).or_default();
        entry.0 += 1;
        entry.1 += usize::from(!t.reasons.contains_key(&m.id) && m.substate.is_none());
    }
    let (highest, updated) = this_run(ctx, since_ms).await?;
    let report = Report {
        models: per_model.into_iter().map(|(model, (hosts, compliant))| ModelRow { model, hosts, compliant }).collect(),
        hosts_updated: updated,
        highest_in_flight: highest,
        ceiling: t.ceiling,
        watched_secs: (took.as_secs_f64() * 10.0).round() / 10.0,
        compliant: t.compliant,
        total: t.total,
        exhausted: t.exhausted,
        not_compliant: t.reasons.clone(),
        compliance: crate::compliance::read(ctx).await?,
    };
    if ctx.format == Format::Json {
        crate::outln!("{}", crate::json_contract::to_json_line(&ReportLine { report })?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> =
        report.models.iter().map(|r| vec![r.model.clone(), r.hosts.to_string(), r.compliant.to_string()]).collect();
    crate::outln!();
    crate::out!("{}", crate::output::table(&["MODEL", "HOSTS", "COMPLIANT"], &rows));
    crate::outln!();
    crate::out!("{}", crate::compliance::table(&report.compliance));
    crate::outln!();
    if !report.not_compliant.is_empty() {
        crate::outln!("not compliant:");
        for (id, why) in &report.not_compliant {
            crate::outln!("  {id}: {why}");
        }
    }
    crate::outln!(
        "this run: {updated} hosts updated; highest in flight at once: {highest} (ceiling {})",
        report.ceiling
    );
    crate::outln!("watched for {:.1}s", took.as_secs_f64());
    if let Ok(ui) = std::env::var("HOSTFW_WEB_UI") {
        crate::outln!("Temporal Web UI: {ui}/namespaces/{}/workflows", ctx.site.temporal.namespace);
    }
    crate::outln!("metrics: http://{}/metrics", ctx.site.worker.metrics_listen);
    crate::outln!("compliant: {}/{} hosts", t.compliant, t.total);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frozen_site() -> Tally {
        Tally {
            total: 3,
            compliant: 1,
            frozen: 2,
            freezes: [("freeze 4".to_string(), "on site by alice (token t1): power work".to_string())].into(),
            ..Tally::default()
        }
    }

    #[test]
    fn a_freeze_is_announced_once_and_its_lifting_too() {
        let t = frozen_site();
        let first = events(None, &t);
        assert_eq!(
            first,
            vec!["FROZEN: freeze 4 on site by alice (token t1): power work (`hostfw unfreeze --id 4` lifts it)"]
        );
        assert!(events(Some(&t), &t).is_empty(), "not again while it holds");
        let lifted = Tally { freezes: BTreeMap::new(), frozen: 0, waiting: 2, ..t.clone() };
        assert_eq!(events(Some(&t), &lifted), vec!["freeze 4 lifted"]);
    }

    #[test]
    fn hosts_held_by_a_freeze_settle_the_watch_and_need_an_operator() {
        let t = frozen_site();
        assert!(t.settled(), "nothing moves until unfreeze");
        assert_eq!(
            operator_needed(&t),
            "hosts need an operator: 0 exhausted, 2 held by a freeze (`hostfw freeze list`)"
        );
    }
}
