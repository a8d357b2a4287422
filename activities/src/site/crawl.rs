//! `hostfw.explorer.crawl`: explore BMCs with bounded concurrency and store their reports
//! (Site Explorer). Unreachable BMCs get their error stored beside the last good report.
//!
//! Owns the crawl loop ([`explore_all`], shared with the CLI's `site-explorer explore`) and the
//! Site Explorer's use of it with its concurrency bound (`site_explorer.concurrency`). The
//! exploration of one BMC is `inventory::explore_machine`. It must not decide drift.

use futures::stream::{self, StreamExt};
use hostfw_model::BmcLookup;
use hostfw_store::Machine;
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
    let site = deps.site.current();
    let concurrency = site.site_explorer.concurrency as usize;
    let Explored { explored, failed } = explore_all(deps, machines, concurrency, |_, _| {}).await;
    tracing::info!(total, explored, failed = failed.len(), "site explorer crawl");
    if let Some(client) = deps.temporal.as_ref() {
        site_link::wake_manager(client, "site explorer stored fresh inventory").await;
    }
    Ok(CrawlSummary { explored, failed, unknown, run_interval_secs: site.site_explorer.run_interval.as_secs().max(1) })
}

/// What one pass of the crawl loop did: BMCs explored, and those that failed as `(machine,
/// error)` in the order they finished (the error is stored with the report).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explored {
    pub explored: u32,
    pub failed: Vec<(String, String)>,
}

/// The crawl loop: explore `machines`, at most `concurrency` (at least 1) at once, telling
/// `on_result` each machine's outcome as it finishes (the CLI draws its progress bar there).
pub async fn explore_all(
    deps: &Deps,
    machines: Vec<Machine>,
    concurrency: usize,
    mut on_result: impl FnMut(&str, &Result<(), String>),
) -> Explored {
    let mut results = stream::iter(machines)
        .map(|m| async move {
            let r = inventory::explore_machine(deps, &m).await.map(|_| ());
            (m.id, r)
        })
        .buffer_unordered(concurrency.max(1));
    let mut done = Explored::default();
    while let Some((id, r)) = results.next().await {
        on_result(&id, &r);
        match r {
            Ok(()) => done.explored += 1,
            Err(e) => done.failed.push((id, e)),
        }
    }
    done
}
