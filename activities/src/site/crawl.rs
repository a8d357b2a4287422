//! `hostfw.explorer.crawl`: explore BMCs with bounded concurrency and store their reports
//! (Site Explorer). Unreachable BMCs get their error stored beside the last good report.
//!
//! Owns the crawl loop and its concurrency bound (`site_explorer.concurrency`). The exploration of
//! one BMC is `inventory::explore_machine`, shared with the CLI. It must not decide drift.

use futures::stream::{self, StreamExt};
use hostfw_model::BmcLookup;
use hostfw_workflows::{CrawlRequest, CrawlSummary};
use temporalio_common::ActivityError;

use crate::{error, inventory, site_link, Deps};

/// Explore the requested BMCs (every managed host when `only` is empty), at most
/// `site_explorer.concurrency` at once; then wake the scheduler. The caller heartbeats.
pub async fn crawl(deps: &Deps, input: CrawlRequest) -> Result<CrawlSummary, ActivityError> {
    let mut machines = deps.store.machine_list().await.map_err(error::store)?;
    let mut unknown = Vec::new();
    if !input.only.is_empty() {
        let mut wanted = Vec::new();
        for bmc in &input.only {
            let Ok(lookup) = bmc.parse::<BmcLookup>() else {
                unknown.push(bmc.clone());
                continue;
            };
            match deps.store.machine_by_bmc(&lookup).await.map_err(error::store)? {
                Some(m) => wanted.push(m.id),
                None => unknown.push(bmc.clone()),
            }
        }
        machines.retain(|m| wanted.contains(&m.id));
    }
    let total = machines.len();
    let concurrency = deps.site.site_explorer.concurrency.max(1) as usize;
    let mut results = stream::iter(machines)
        .map(|m| async move {
            let r = inventory::explore_machine(deps, &m).await.map(|_| ());
            (m.id, r)
        })
        .buffer_unordered(concurrency);
    let mut explored = 0u32;
    let mut failed = Vec::new();
    while let Some((id, r)) = results.next().await {
        match r {
            Ok(()) => explored += 1,
            Err(e) => failed.push((id, e)),
        }
    }
    tracing::info!(total, explored, failed = failed.len(), "site explorer crawl");
    if let Some(client) = deps.temporal.as_ref() {
        site_link::wake_manager(client, "site explorer stored fresh inventory").await;
    }
    Ok(CrawlSummary {
        explored,
        failed,
        unknown,
        run_interval_secs: deps.site.site_explorer.run_interval.as_secs().max(1),
    })
}
