//! Benchmark 2: one scheduler pass (`site_view::read` + `gates::plan`) over a synthetic site of
//! 1k..100k machines, on SQLite and on PostgreSQL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use hostfw_activities::CatalogSource;
use hostfw_model::{BmcAddress, InventoryMember, InventoryReport, SiteConfig};
use hostfw_store::{NewMachine, Registration, Store};
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
                id: format!("m{i:06}"),
                bmc_address: bmc_address(i),
                vendor: Some("Dell".into()),
                model: Some("PowerEdge R760".into()),
                state: hostfw_model::HostState::Ready,
                instance_id: None,
            },
            login: None,
            keep_state: false,
        })
        .collect();
    store.machines_register(&machines).await.context("inserting machines")?;
    let reports: Vec<_> = (0..n).map(|i| (bmc_address(i), Some(format!("m{i:06}")), report(i))).collect();
    store.reports_put_many(&reports).await.context("inserting reports")?;
    store.close().await;
    Ok(())
}

/// Median of three passes: (ms per pass, hosts the pass would start).
async fn time_pass(url: &str, site: &SiteConfig) -> anyhow::Result<(f64, usize)> {
    let store = Store::connect(url).await?;
    let catalog =
        CatalogSource::new(Arc::new(site.clone()), store.clone()).current().await.map_err(|e| anyhow!("{e}"))?;
    let mut times = Vec::new();
    let mut started = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let view = hostfw_activities::site_view::read(&store, &catalog, site, hostfw_store::now_ms()).await?;
        let plan = hostfw_model::gates::plan(&view.input);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        started = plan.start.len();
    }
    store.close().await;
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    Ok((times[1], started))
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
        let (ms, started) = time_pass(&url, &site).await?;
        push(rows, "SQLite", n, ms, started);

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
                time_pass(&url, &site).await
            }
            .await;
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).execute(&mut admin).await;
            admin.close().await?;
            let (ms, started) = result?;
            push(rows, "PostgreSQL", n, ms, started);
        }
    }
    Ok(())
}

fn push(rows: &mut Vec<Row>, backend: &str, n: usize, ms: f64, started: usize) {
    rows.push(Row::new(
        "2 scheduler pass",
        &format!("{backend}, {n} machines"),
        format!("{ms:.1} ms ({:.2} µs/host)", ms * 1000.0 / n as f64),
        "per pass",
        &format!("median of 3; site_view::read + gates::plan; all Ready, 2/3 drifted, C=50 (would start {started})"),
    ));
}
