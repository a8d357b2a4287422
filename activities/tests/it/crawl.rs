//! The Site Explorer crawl (`hostfw.explorer.crawl`, called directly) against a real bmc-sim
//! fleet and a SQLite site database: every BMC explored and its report stored, an unreachable BMC
//! reported as failed with the others unaffected, and `site_explorer.concurrency` honoured, as
//! counted by bmc-sim (the most BMCs serving a request at the same moment).

use crate::common;

use common::{fleet, register, site_toml};
use hostfw_bmc_sim::Fault;
use hostfw_workflows::CrawlRequest;

const CONCURRENCY: u64 = 3;
const HOSTS: usize = 12;

#[tokio::test]
async fn a_crawl_explores_every_bmc_within_the_concurrency_bound() {
    let dir = tempfile::tempdir().unwrap();
    let site = site_toml().site_explorer("concurrency", CONCURRENCY as i64).install(dir.path());
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

#[tokio::test]
async fn a_repeat_crawl_with_the_same_deps_takes_three_requests_per_bmc() {
    let dir = tempfile::tempdir().unwrap();
    let site = site_toml().install(dir.path());
    let fleet = fleet(4, "").await;
    let deps = crate::common::deps(&site).await;
    register(&deps.store, &fleet).await;
    let requests = |fleet: &hostfw_bmc_sim::RunningFleet| -> Vec<u64> {
        fleet.stats().per_host.values().map(|h| h.requests).collect()
    };

    let first = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await.unwrap();
    let after_first = requests(&fleet);
    let repeat = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await.unwrap();
    let after_repeat = requests(&fleet);

    assert_eq!((first.explored, repeat.explored), (4, 4));
    // ServiceRoot, Systems?$expand, UpdateService, FirmwareInventory?$expand.
    assert_eq!(after_first, [4, 4, 4, 4], "first crawl: requests per BMC");
    // The FirmwareInventory link each BMC's UpdateService gave is remembered by the Deps.
    let repeat_requests: Vec<u64> = after_repeat.iter().zip(&after_first).map(|(a, b)| a - b).collect();
    assert_eq!(repeat_requests, [3, 3, 3, 3], "repeat crawl: requests per BMC");
    assert_eq!(deps.link_cache.len(), 4, "one remembered link per BMC");
    fleet.shutdown().await;
}
