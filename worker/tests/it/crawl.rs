//! The Site Explorer crawl (`hostfw.explorer.crawl`, called directly) against a real bmc-sim
//! fleet and a SQLite site database: every BMC explored and its report stored, an unreachable BMC
//! reported as failed with the others unaffected, and `site_explorer.concurrency` honoured, as
//! counted by bmc-sim (the most BMCs serving a request at the same moment).

use crate::common;

use common::{fleet, register, write_site};
use hostfw_bmc_sim::Fault;
use hostfw_workflows::CrawlRequest;

const CONCURRENCY: u64 = 3;
const HOSTS: usize = 12;

#[tokio::test]
async fn a_crawl_explores_every_bmc_within_the_concurrency_bound() {
    let dir = tempfile::tempdir().unwrap();
    let site = write_site(dir.path(), &format!("[site_explorer]\nconcurrency = {CONCURRENCY}\n"));
    let fleet = fleet(HOSTS, "").await;
    // Slow answers keep every exploration in progress long enough to overlap the others.
    for h in fleet.hosts() {
        fleet.set_fault(&h.id, Fault { slow_response_secs: 0.1, ..Fault::default() }).unwrap();
    }
    // One BMC does not answer at all for the whole crawl.
    fleet.set_fault("h05", Fault { unreachable_for_secs: 60.0, ..Fault::default() }).unwrap();
    let deps = crate::common::deps(&site).await;
    register(&deps.store, &fleet).await;

    let summary = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await.unwrap();

    assert_eq!(summary.explored as usize, HOSTS - 1);
    assert_eq!(summary.failed.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["h05"]);
    let reports = deps.store.report_list().await.unwrap();
    let stored = reports.iter().filter(|r| r.report.is_some()).count();
    assert_eq!(stored, HOSTS - 1, "a report for every BMC that answered");
    let busy = fleet.stats().max_busy_bmcs;
    assert!(busy <= CONCURRENCY, "{busy} BMCs served at once, bound {CONCURRENCY}");
    assert_eq!(busy, CONCURRENCY, "slow BMCs: the crawl uses its whole bound");
    fleet.shutdown().await;
}
