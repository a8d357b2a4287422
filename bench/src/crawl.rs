//! Benchmark 5: one Site Explorer crawl of 1k..10k simulated BMCs (`crawl::crawl` called directly,
//! `site_explorer.concurrency` = 16), and the highest number of BMCs explored at once.
//!
//! The bound is checked by bmc-sim's own counter (`SimStats::max_busy_bmcs`): the most BMCs that
//! were serving a request at the same moment. An exploration talks to one BMC, so the mark can
//! only exceed 16 if more than 16 explorations ran at once. bmc-sim answers in microseconds, so
//! with instant BMCs few requests overlap; one more crawl gives every BMC a response latency
//! (`--crawl-latency-ms`, like a real BMC's) so that the explorations overlap and the mark shows
//! the bound being used, not only respected. The crawls of captured-profile BMCs (real inventory
//! sizes, before and after `$expand`) are `crawl_profiles`.

use std::time::Instant;

use anyhow::anyhow;
use hostfw_bmc_sim::{Fault, FleetSpec};
use hostfw_store::Store;
use hostfw_workflows::CrawlRequest;

use crate::site;
use crate::{Args, Row};

const CONCURRENCY: u32 = 16;

fn fleet_toml(n: usize) -> String {
    let mut s = String::from("[defaults]\nupload_style = \"multipart\"\ntask_style = \"dell\"\n");
    for i in 0..n {
        s.push_str(&format!(
            "[[host]]\nid = \"x{i:05}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"127.0.0.1:0\"\n\
             firmware = [ {{ id = \"BMC\", version = \"1.0\" }}, {{ id = \"BIOS\", version = \"1.0\" }} ]\n"
        ));
    }
    s
}

pub async fn run_one(n: usize, latency_ms: u64, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = site::config(7233, "bench-crawl")
        .site_explorer("concurrency", i64::from(CONCURRENCY))
        .model(&site::r760_bench());
    let (_config, site) = site::write(dir.path(), &config, site::IMAGES)?;
    let store = Store::open_site(&site).await?;
    let fleet = hostfw_bmc_sim::start(FleetSpec::from_toml_str(&fleet_toml(n)).map_err(|e| anyhow!("{e}"))?)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    hostfw_tests::register_fleet(&store, &fleet, |_| None).await?;
    if latency_ms > 0 {
        for h in fleet.hosts() {
            let slow = Fault { slow_response_secs: latency_ms as f64 / 1000.0, ..Fault::default() };
            fleet.set_fault(&h.id, slow).map_err(|e| anyhow!("{e}"))?;
        }
    }
    let store = hostfw_store::Store::open_site(&site).await?;
    let deps = hostfw_activities::Deps::open(&site, store.clone(), None).await?;

    let t = Instant::now();
    let summary = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await;
    let wall = t.elapsed().as_secs_f64();
    let stats = fleet.stats();
    let max_busy = stats.max_busy_bmcs;
    let params = if latency_ms > 0 {
        format!("{n} simulated BMCs answering in {latency_ms} ms, concurrency {CONCURRENCY}")
    } else {
        format!("{n} simulated BMCs, concurrency {CONCURRENCY}")
    };
    let summary = summary.map_err(|e| anyhow!("crawl failed: {e:?}"))?;
    let stored = store.report_list().await?.iter().filter(|r| r.report.is_some()).count();
    rows.push(Row::new(
        "5 site explorer crawl",
        &params,
        format!("{wall:.1}"),
        "s per crawl",
        &format!(
            "{:.1} ms/BMC, {:.0} requests per BMC; explored {}, failed {}, {stored} reports stored",
            wall * 1000.0 / n as f64,
            stats.requests_total as f64 / n as f64,
            summary.explored,
            summary.failed.len()
        ),
    ));
    rows.push(Row::new(
        "5 site explorer crawl",
        &params,
        format!("{max_busy}"),
        "BMCs at once (max)",
        &format!(
            "{}: bmc-sim's high-water mark of BMCs serving a request at the same moment (max_busy_bmcs)",
            if max_busy <= u64::from(CONCURRENCY) { "bound held" } else { "BOUND EXCEEDED" }
        ),
    ));
    deps.store.close().await;
    store.close().await;
    fleet.shutdown().await;
    Ok(())
}

pub async fn run(args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    for &n in &args.crawl_sizes {
        eprintln!("crawl: {n} BMCs");
        run_one(n, 0, rows).await?;
    }
    if args.crawl_latency_ms > 0 {
        let n = args.crawl_sizes.first().copied().unwrap_or(1000).min(1000);
        eprintln!("crawl: {n} BMCs answering in {} ms", args.crawl_latency_ms);
        run_one(n, args.crawl_latency_ms, rows).await?;
    }
    crate::crawl_profiles::run(args, rows).await
}
