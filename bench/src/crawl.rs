//! Benchmark 5: one Site Explorer crawl of 1k..10k simulated BMCs (`crawl::crawl` called directly,
//! `site_explorer.concurrency` = 16), and the highest number of BMCs explored at once.
//!
//! bmc-sim does not count concurrent GETs, so a sampler thread reads `/proc/net/tcp` every few
//! milliseconds and counts the distinct BMC ports holding an ESTABLISHED server-side connection
//! (each exploration opens its own Redfish client, so its connections close when it ends).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use hostfw_bmc_sim::FleetSpec;
use hostfw_store::Store;
use hostfw_workflows::CrawlRequest;

use crate::infra::{self, SiteOpts};
use crate::rollout::{CATALOG, IMAGES};
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

/// Distinct BMC ports with an ESTABLISHED connection, from one read of /proc/net/tcp.
fn busy_bmcs(ports: &HashSet<u16>) -> usize {
    let Ok(text) = std::fs::read_to_string("/proc/net/tcp") else { return 0 };
    let mut busy = HashSet::new();
    for line in text.lines().skip(1) {
        let mut f = line.split_whitespace();
        let (Some(_), Some(local), Some(_), Some(state)) = (f.next(), f.next(), f.next(), f.next()) else { continue };
        if state != "01" {
            continue;
        }
        if let Some(port) = local.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok()) {
            if ports.contains(&port) {
                busy.insert(port);
            }
        }
    }
    busy.len()
}

pub async fn run_one(n: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let (_config, site) = infra::write_site(
        dir.path(),
        &SiteOpts {
            temporal_port: 7233,
            task_queue: "bench-crawl",
            database_url: "sqlite://site.db",
            site_workflows: false,
            machine_updater: "",
            firmware_global: "",
            site_explorer: &format!("concurrency = {CONCURRENCY}"),
            host_reprovision: "",
            catalog: CATALOG,
            images: IMAGES,
        },
    )?;
    let store = Store::connect(&site.site.database_url).await?;
    let fleet = hostfw_bmc_sim::start(FleetSpec::from_toml_str(&fleet_toml(n)).map_err(|e| anyhow!("{e}"))?)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    infra::register_fleet(&store, &fleet, false).await?;
    let ports: HashSet<u16> = fleet.hosts().iter().map(|h| h.addr.port()).collect();
    let deps = hostfw_worker::build_deps(&site, hostfw_worker::activity_settings(&site), None).await?;

    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut max, mut samples) = (0usize, 0u64);
            while !stop.load(Ordering::Relaxed) {
                max = max.max(busy_bmcs(&ports));
                samples += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            (max, samples)
        })
    };
    let t = Instant::now();
    let summary = hostfw_activities::crawl::crawl(&deps, CrawlRequest::default()).await;
    let wall = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let (max_busy, samples) = sampler.join().map_err(|_| anyhow!("sampler panicked"))?;
    let summary = summary.map_err(|e| anyhow!("crawl failed: {e:?}"))?;
    let stored = store.report_list().await?.iter().filter(|r| r.report.is_some()).count();
    rows.push(Row::new(
        "5 site explorer crawl",
        &format!("{n} simulated BMCs, concurrency {CONCURRENCY}"),
        format!("{wall:.1}"),
        "s per crawl",
        &format!(
            "{:.1} ms/BMC; explored {}, failed {}, {stored} reports stored",
            wall * 1000.0 / n as f64,
            summary.explored,
            summary.failed.len()
        ),
    ));
    rows.push(Row::new(
        "5 site explorer crawl",
        &format!("{n} simulated BMCs, concurrency {CONCURRENCY}"),
        format!("{max_busy}"),
        "BMCs at once (max)",
        &format!(
            "{} (distinct BMCs with an ESTABLISHED server-side connection, {samples} samples of /proc/net/tcp: an estimate that can miss a short peak and also counts connections of finished explorations not yet closed)",
            if max_busy <= CONCURRENCY as usize { "bound held" } else { "above the bound by at most the closing lag; not proof of a violation" }
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
        run_one(n, rows).await?;
    }
    Ok(())
}
