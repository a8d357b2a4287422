//! Benchmark 2: one scheduler pass (the site view + `gates::plan`) over a synthetic site of
//! 1k..200k machines, on SQLite and on PostgreSQL: the full read (`site_view::read`, before the
//! cache), the cache's first pass (cold) and its pass after 1% of the hosts changed (warm).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use hostfw_activities::site_view_cache::SiteViewCache;
use hostfw_activities::{site_view, CatalogSource};
use hostfw_model::{BmcAddress, InventoryMember, InventoryReport, SiteConfig};
use hostfw_store::{now_ms, NewMachine, NewRequest, Registration, Store};
use sqlx::Connection;

use crate::site;
use crate::{Args, Row};

const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
fn report(i: usize) -> InventoryReport {
    // Two thirds drifted (BMC behind), one third compliant.
    let bmc = if i % 3 == 0 { "2.0" } else { "1.0" };
    InventoryReport {
        vendor: "Dell".into(),
        model: "PowerEdge R760".into(),
        serial: Some(format!("SN{i:07}")),
        power_state: Some("On".into()),
        members: vec![
            InventoryMember {
                id: "BMC".into(),
                name: None,
                version: bmc.into(),
                version_raw: None,
                version_unknown: None,
                odata_id: "/redfish/v1/UpdateService/FirmwareInventory/BMC".into(),
                staged_version: None,
            },
            InventoryMember {
                id: "BIOS".into(),
                name: None,
                version: "2.0".into(),
                version_raw: None,
                version_unknown: None,
                odata_id: "/redfish/v1/UpdateService/FirmwareInventory/BIOS".into(),
                staged_version: None,
            },
        ],
    }
}

/// The id of machine `i`.
fn machine_id(i: usize) -> String {
    format!("m{i:06}")
}

/// The BMC address of machine `i`.
fn bmc_address(i: usize) -> BmcAddress {
    format!("https://10.{}.{}.{}:443", i / 65536, (i / 256) % 256, i % 256).parse().expect("a BMC address")
}

/// Insert `n` machines and their explored reports through the store, each table in one
/// transaction (`machines_register`, and `reports_put_many`'s multi-row statements).
async fn populate(url: &str, n: usize) -> anyhow::Result<()> {
    let store = Store::connect(url).await?;
    let machines: Vec<Registration> = (0..n)
        .map(|i| Registration {
            machine: NewMachine {
                id: machine_id(i),
                bmc_address: bmc_address(i),
                vendor: Some("Dell".into()),
                model: Some("PowerEdge R760".into()),
                state: hostfw_model::HostState::Ready,
                instance_id: None,
                labels: None,
            },
            login: None,
            keep_state: false,
        })
        .collect();
    store.machines_register(&machines).await.context("inserting machines")?;
    let reports: Vec<_> = (0..n).map(|i| (bmc_address(i), Some(machine_id(i)), report(i))).collect();
    store.reports_put_many(&reports).await.context("inserting reports")?;
    store.close().await;
    Ok(())
}

/// The median of three times (ms) and the last pass's start count.
fn median3(runs: [(f64, usize); 3]) -> (f64, usize) {
    let mut times = runs.map(|(ms, _)| ms);
    times.sort_by(|a, b| a.total_cmp(b));
    (times[1], runs[2].1)
}

/// One pass's time: the site view (`read`) and `gates::plan`, in ms, and how many it would start.
async fn timed<F, Fut>(read: F) -> anyhow::Result<(f64, usize)>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<site_view::SiteView>>,
{
    let t = Instant::now();
    let view = read().await?;
    let plan = hostfw_model::gates::plan(&view.input);
    Ok((t.elapsed().as_secs_f64() * 1000.0, plan.start.len()))
}

/// One round of changes to about 1% of the `n` hosts (round `k` takes hosts no other round
/// took): half of them get a re-written report (the BMC version flips), a quarter a request, a
/// quarter an auto-update override.
async fn change_one_percent(store: &Store, n: usize, k: usize) -> anyhow::Result<usize> {
    let count = (n / 100).max(4);
    let first = (k * count) % n;
    let hosts: Vec<usize> = (first..first + count).map(|i| i % n).collect();
    let (reports, rest) = hosts.split_at(count / 2);
    let (requests, overrides) = rest.split_at(rest.len() / 2);
    let rewritten: Vec<_> = reports
        .iter()
        .map(|&i| {
            let mut r = report(i);
            r.members[0].version = if i % 3 == 0 { "1.0".into() } else { "2.0".into() };
            (bmc_address(i), Some(machine_id(i)), r)
        })
        .collect();
    store.reports_put_many(&rewritten).await.context("re-writing reports")?;
    for &i in requests {
        let new = NewRequest {
            machine_id: machine_id(i),
            initiator: "AdminCli".into(),
            update_message: None,
            workflow_id: None,
        };
        store.request_create(&new).await.context("creating a request")?;
    }
    for &i in overrides {
        store.machine_set_auto_update(&machine_id(i), Some(false)).await.context("setting an override")?;
    }
    Ok(count)
}

/// The three measurements of one site: the full read, the cache's first (cold) pass, and its
/// pass after 1% of the hosts changed (warm). The last warm view is checked against a full read.
async fn time_passes(url: &str, site: &SiteConfig, n: usize) -> anyhow::Result<Passes> {
    let store = Store::connect(url).await?;
    let catalog =
        CatalogSource::new(Arc::new(site.clone()), store.clone()).current().await.map_err(|e| anyhow!("{e}"))?;
    let mut full = [(0.0, 0); 3];
    for run in &mut full {
        *run = timed(|| async { Ok(site_view::read(&store, &catalog, site, now_ms()).await?) }).await?;
    }
    let mut cold = [(0.0, 0); 3];
    for run in &mut cold {
        *run = timed(|| async { Ok(SiteViewCache::new().read(&store, &catalog, site, now_ms()).await?.0) }).await?;
    }
    let cache = SiteViewCache::new();
    cache.read(&store, &catalog, site, now_ms()).await?;
    let mut warm = [(0.0, 0); 3];
    let mut changed = 0;
    for (round, run) in warm.iter_mut().enumerate() {
        changed = change_one_percent(&store, n, round).await?;
        *run = timed(|| async { Ok(cache.read(&store, &catalog, site, now_ms()).await?.0) }).await?;
    }
    let now = now_ms();
    let (cached, _) = cache.read(&store, &catalog, site, now).await?;
    let fresh = site_view::read(&store, &catalog, site, now).await?;
    if cached != fresh {
        anyhow::bail!("the cached site view differs from a full read at {n} machines");
    }
    store.close().await;
    Ok(Passes { full: median3(full), cold: median3(cold), warm: median3(warm), changed })
}

/// (ms, hosts it would start) of each way to read, and how many hosts a warm round changed.
struct Passes {
    full: (f64, usize),
    cold: (f64, usize),
    warm: (f64, usize),
    changed: usize,
}

async fn pg_reachable() -> bool {
    matches!(
        tokio::time::timeout(Duration::from_secs(5), sqlx::postgres::PgConnection::connect(PG_ADMIN_URL)).await,
        Ok(Ok(_))
    )
}

pub async fn run(args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = site::config(7233, "bench-pass")
        .database_url("sqlite://unused.db")
        .machine_updater("max_concurrent_machine_updates_absolute", 50)
        .model(&site::r760_bench());
    let (_path, site) = site::write(dir.path(), &config, site::IMAGES)?;
    let pg = !args.no_pg && pg_reachable().await;
    if !pg {
        rows.push(Row::new(
            "2 scheduler pass",
            "PostgreSQL",
            "skipped".into(),
            "",
            if args.no_pg { "--no-pg" } else { "PostgreSQL at 127.0.0.1:5432 not reachable" },
        ));
    }
    for &n in &args.pass_sizes {
        // SQLite: a fresh file per size.
        let url = format!("sqlite://{}", dir.path().join(format!("pass-{n}.db")).display());
        let t = Instant::now();
        populate(&url, n).await?;
        eprintln!("pass: SQLite {n} machines inserted in {:.1} s", t.elapsed().as_secs_f64());
        push(rows, "SQLite", n, &time_passes(&url, &site, n).await?);

        if pg {
            let db = format!("hostfw_bench_{}_{n}", std::process::id());
            let mut admin = sqlx::postgres::PgConnection::connect(PG_ADMIN_URL).await?;
            sqlx::query(&format!("DROP DATABASE IF EXISTS {db}")).execute(&mut admin).await?;
            sqlx::query(&format!("CREATE DATABASE {db}")).execute(&mut admin).await?;
            let url = format!("postgres://postgres@127.0.0.1:5432/{db}");
            let result = async {
                let t = Instant::now();
                populate(&url, n).await?;
                eprintln!("pass: PostgreSQL {n} machines inserted in {:.1} s", t.elapsed().as_secs_f64());
                time_passes(&url, &site, n).await
            }
            .await;
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).execute(&mut admin).await;
            admin.close().await?;
            push(rows, "PostgreSQL", n, &result?);
        }
    }
    Ok(())
}

fn push(rows: &mut Vec<Row>, backend: &str, n: usize, p: &Passes) {
    let what = [
        ("full read (before)", p.full, "site_view::read + gates::plan"),
        ("cache, first pass (cold)", p.cold, "SiteViewCache::read on a new cache + gates::plan"),
        ("cache, 1% changed (warm)", p.warm, "SiteViewCache::read + gates::plan after"),
    ];
    for (label, (ms, started), how) in what {
        let how = if label.ends_with("(warm)") {
            format!("{how} {} hosts changed (reports re-written, requests created, overrides set)", p.changed)
        } else {
            how.to_string()
        };
        rows.push(Row::new(
            "2 scheduler pass",
            &format!("{backend}, {n} machines, {label}"),
            format!("{ms:.1} ms ({:.2} µs/host)", ms * 1000.0 / n as f64),
            "per pass",
            &format!("median of 3; {how}; all Ready, 2/3 drifted, C=50 (would start {started})"),
        ));
    }
}
