//! Benchmark 5, captured profiles: Site Explorer crawls (`crawl::crawl` called directly) of BMCs
//! serving the Redfish trees captured from real hardware (`../shared/redfish/vendor-mockups`:
//! their real FirmwareInventory sizes, 29 to 106 members) with every answer taking
//! `--crawl-profile-latency-ms`, at `site_explorer.concurrency` 16 and 128, one fleet per
//! vendor and one mixing the four. Each fleet is crawled in each `--crawl-modes`: `sequential`
//! (`[redfish] expand = false`, `inventory_concurrency = 1`: one member after the other),
//! `bounded` (`expand = false`, members 4 at a time) and `expand` (`$expand`, as every captured
//! BMC advertises), so one run shows before and after.
//!
//! Each row gives the wall time, the requests per BMC (bmc-sim's count) and the latency bound
//! = requests × latency × BMCs / concurrency: the time the crawl would take if every BMC's
//! requests went one after the other. Each fleet is then crawled a second time with the same
//! `Deps` (as the worker's next crawl: remembered FirmwareInventory links), and the row's detail
//! adds that repeat crawl's requests per BMC and wall time. Without `../shared` the benchmark says "skipped" and adds
//! no rows. Measures only: it asserts nothing but that every BMC was explored.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail};
use hostfw_bmc_sim::FleetSpec;
use hostfw_store::Store;
use hostfw_workflows::CrawlRequest;

use crate::site;
use crate::{Args, Row};

/// The captured trees, by folder name.
const VENDORS: [&str; 4] = ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"];

/// Site Explorer concurrencies measured.
const CONCURRENCIES: [u32; 2] = [16, 128];

/// A crawl mode: `[redfish] expand` and `inventory_concurrency`.
fn mode(name: &str) -> anyhow::Result<(bool, u32)> {
    Ok(match name {
        "sequential" => (false, 1),
        "bounded" => (false, 4),
        "expand" => (true, 4),
        other => bail!("unknown crawl mode {other:?}; choose from sequential,bounded,expand"),
    })
}

/// `n` BMCs of the profiles in `dirs` (round robin), every answer after `latency_ms`.
fn fleet_toml(dirs: &[PathBuf], n: usize, latency_ms: u64) -> String {
    let mut s = format!("[defaults.faults]\nslow_response_secs = {}\n", latency_ms as f64 / 1000.0);
    for i in 0..n {
        let dir = &dirs[i % dirs.len()];
        s.push_str(&format!(
            "[[host]]\nid = \"p{i:05}\"\nbmc_address = \"127.0.0.1:0\"\nprofile = {:?}\n",
            dir.display().to_string()
        ));
    }
    s
}

struct Crawl<'a> {
    name: &'a str,
    dirs: &'a [PathBuf],
    n: usize,
    latency_ms: u64,
    concurrency: u32,
    mode: &'a str,
}

async fn run_one(c: &Crawl<'_>, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let (expand, inventory_concurrency) = mode(c.mode)?;
    let dir = tempfile::tempdir()?;
    let config = site::config(7233, "bench-crawl-profiles")
        .site_explorer("concurrency", i64::from(c.concurrency))
        .redfish("expand", expand)
        .redfish("inventory_concurrency", i64::from(inventory_concurrency))
        .model(&site::r760_bench());
    let (_config, site) = site::write(dir.path(), &config, site::IMAGES)?;
    let store = Store::open_site(&site).await?;
    let fleet = hostfw_bmc_sim::start(
        FleetSpec::from_toml_str(&fleet_toml(c.dirs, c.n, c.latency_ms)).map_err(|e| anyhow!("{e}"))?,
    )
    .await
    .map_err(|e| anyhow!("{e}"))?;
    hostfw_tests::register_fleet(&store, &fleet, |_| None).await?;
    let deps = hostfw_activities::Deps::open(&site, store.clone(), None).await?;
    let before = fleet.stats().requests_total;

    let t = Instant::now();
    let summary = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await;
    let wall = t.elapsed().as_secs_f64();
    let summary = summary.map_err(|e| anyhow!("crawl failed: {e:?}"))?;
    let stats = fleet.stats();
    let requests = (stats.requests_total - before) as f64 / c.n as f64;
    let bound = requests * c.latency_ms as f64 / 1000.0 * c.n as f64 / f64::from(c.concurrency);
    let expanded = stats.per_host.values().filter(|h| h.expanded_reads > 0).count();

    // The same fleet again with the same Deps, as the worker's next crawl: the remembered
    // FirmwareInventory links spare each BMC its UpdateService read.
    let t = Instant::now();
    let again = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await;
    let repeat_wall = t.elapsed().as_secs_f64();
    let again = again.map_err(|e| anyhow!("repeat crawl failed: {e:?}"))?;
    let repeat_requests = (fleet.stats().requests_total - stats.requests_total) as f64 / c.n as f64;
    rows.push(Row::new(
        "5 site explorer crawl",
        &format!(
            "{}: {} BMCs answering in {} ms, concurrency {}, {}",
            c.name, c.n, c.latency_ms, c.concurrency, c.mode
        ),
        format!("{wall:.1}"),
        "s per crawl",
        &format!(
            "{requests:.1} requests per BMC (repeat crawl with the same worker: {repeat_requests:.1}, {repeat_wall:.1} s); \
             latency bound {bound:.1} s (requests × latency × BMCs / concurrency); \
             {expanded} BMCs read expanded; explored {}, failed {}",
            summary.explored,
            summary.failed.len()
        ),
    ));
    if again.explored as usize != c.n {
        bail!("{}: the repeat crawl explored {} of {} BMCs: {:?}", c.name, again.explored, c.n, again.failed.first());
    }
    if summary.explored as usize != c.n {
        bail!("{}: explored {} of {} BMCs: {:?}", c.name, summary.explored, c.n, summary.failed.first());
    }
    deps.store.close().await;
    store.close().await;
    fleet.shutdown().await;
    Ok(())
}

pub async fn run(args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let root = hostfw_tests::workspace_root().join("../shared/redfish/vendor-mockups");
    if !root.is_dir() {
        eprintln!("crawl (captured profiles): skipped: {} absent", root.display());
        return Ok(());
    }
    let dir = |v: &str| -> anyhow::Result<PathBuf> { Ok(Path::new(&root).join(v).canonicalize()?) };
    let mut fleets: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for v in VENDORS {
        fleets.push((v.to_string(), vec![dir(v)?]));
    }
    fleets.push(("mix of the four".into(), VENDORS.iter().map(|v| dir(v)).collect::<anyhow::Result<_>>()?));
    let modes: Vec<&str> = args.crawl_modes.iter().map(String::as_str).filter(|m| !m.is_empty()).collect();
    for m in &modes {
        mode(m)?;
    }
    if modes.is_empty() {
        return Ok(());
    }
    for (name, dirs) in &fleets {
        for &concurrency in &CONCURRENCIES {
            for &m in &modes {
                eprintln!("crawl: {name}, {} BMCs, concurrency {concurrency}, {m}", args.crawl_profile_bmcs);
                let c = Crawl {
                    name,
                    dirs,
                    n: args.crawl_profile_bmcs,
                    latency_ms: args.crawl_profile_latency_ms,
                    concurrency,
                    mode: m,
                };
                run_one(&c, rows).await?;
            }
        }
    }
    Ok(())
}
