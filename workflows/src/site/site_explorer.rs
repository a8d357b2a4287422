//! The `SiteExplorer` workflow: the periodic Redfish inventory crawl, one per site.
//!
//! Every `site_explorer.run_interval` it explores every managed host's BMC (one activity, bounded
//! concurrency inside it) and stores the reports; `re_explore` signals explore single BMCs at once
//! (`hostfw site-explorer re-explore <bmc-ip>`). After a crawl that changed anything the manager is
//! woken by the activity. Continue-as-new keeps the history bounded. Deterministic: it decides only
//! from activity results, signals and durable timers.

use std::pin::pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_workflow::{
    select, CancellableFuture, ContinueAsNewOptions, SyncWorkflowContext, TimerOptions, WorkflowContext,
    WorkflowContextView, WorkflowResult,
};

use crate::clock::now_ms;
use crate::options;
use crate::site::contracts::*;
use crate::tunables::{CRAWLS_PER_RUN, CRAWL_HEARTBEAT};

/// Input (and the state carried across continue-as-new).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerInput {
    /// BMC addresses asked for by `re_explore` and not yet explored.
    #[serde(default)]
    pub queued: Vec<String>,
    #[serde(default)]
    pub crawls_total: u64,
}

/// The answer of the `status` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerStatus {
    pub crawls_total: u64,
    pub last_crawl: Option<CrawlSummary>,
    pub last_re_explore: Option<CrawlSummary>,
}

/// The periodic crawl. Signal `re_explore` with a BMC address to explore it now.
#[workflow]
pub struct SiteExplorerWorkflow {
    queued: Vec<String>,
    status: ExplorerStatus,
    crawls_this_run: u32,
}

#[workflow_methods]
impl SiteExplorerWorkflow {
    #[init]
    pub fn new(_ctx: &WorkflowContextView, input: ExplorerInput) -> Self {
        SiteExplorerWorkflow {
            queued: input.queued,
            status: ExplorerStatus { crawls_total: input.crawls_total, ..ExplorerStatus::default() },
            crawls_this_run: 0,
        }
    }

    #[run(name = crate::names::SITE_EXPLORER_WORKFLOW)]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<()> {
        loop {
            let crawl = ctx
                .execute_activity(
                    SiteActivities::explorer_crawl,
                    CrawlRequest::default(),
                    options::summarized(options::crawl(CRAWL_HEARTBEAT), "explore every managed BMC"),
                )
                .await?;
            let interval = Duration::from_secs(crawl.run_interval_secs.max(1));
            let count = ctx.state_mut(|s| {
                s.status.crawls_total += 1;
                s.status.last_crawl = Some(crawl);
                s.crawls_this_run += 1;
                s.crawls_this_run
            });
            let deadline = now_ms(ctx) + interval.as_millis() as i64;
            // Serve re-explore requests until the next crawl is due.
            loop {
                let queued = ctx.state_mut(|s| std::mem::take(&mut s.queued));
                if !queued.is_empty() {
                    let summary = format!("re-explore {}", queued.join(", "));
                    let done = ctx
                        .execute_activity(
                            SiteActivities::explorer_crawl,
                            CrawlRequest { only: queued },
                            options::summarized(options::crawl(CRAWL_HEARTBEAT), summary),
                        )
                        .await?;
                    ctx.state_mut(|s| s.status.last_re_explore = Some(done));
                }
                let left = deadline - now_ms(ctx);
                if left <= 0 || !wait_for_request(ctx, Duration::from_millis(left as u64)).await? {
                    break;
                }
            }
            if count >= CRAWLS_PER_RUN || ctx.continue_as_new_suggested() {
                let carried =
                    ctx.state(|s| ExplorerInput { queued: s.queued.clone(), crawls_total: s.status.crawls_total });
                ctx.continue_as_new(carried, ContinueAsNewOptions::default())?;
            }
        }
    }

    /// Crawl counters and the last results.
    #[query(name = crate::names::QUERY_STATUS)]
    pub fn status(&self, _ctx: &WorkflowContextView) -> ExplorerStatus {
        self.status.clone()
    }

    /// Explore one BMC (`ip` or `ip:port`) now.
    #[signal(name = crate::names::SIGNAL_RE_EXPLORE)]
    pub fn re_explore(&mut self, _ctx: &mut SyncWorkflowContext<Self>, bmc: String) {
        if !self.queued.contains(&bmc) && self.queued.len() < 1000 {
            self.queued.push(bmc);
        }
    }
}

/// Wait up to `wait` for a re-explore request: true when one arrived.
async fn wait_for_request(ctx: &WorkflowContext<SiteExplorerWorkflow>, wait: Duration) -> WorkflowResult<bool> {
    let timer = ctx.timer(TimerOptions::builder(wait).summary("until the next crawl".to_string()).build());
    let mut timer = pin!(timer);
    let requested = select! {
        r = ctx.wait_condition(|s: &SiteExplorerWorkflow| !s.queued.is_empty()) => { r?; true }
        _ = timer.as_mut() => false,
    };
    if requested {
        timer.cancel();
    }
    Ok(requested)
}
