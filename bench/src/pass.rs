//! Benchmark 2: one scheduler pass (`site_view::read` + `gates::plan`) over a synthetic site of
//! 1k..100k machines, on SQLite and on PostgreSQL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use hostfw_activities::CatalogSource;
use hostfw_model::{InventoryMember, InventoryReport, SiteConfig};
use hostfw_store::Store;
use sqlx::Connection;

use crate::infra::{self, SiteOpts};
use crate::rollout::{CATALOG, IMAGES};
use crate::{Args, Row};

const PG_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const BATCH: usize = 500;

fn report_json(i: usize) -> String {
    // Two thirds drifted (BMC behind), one third compliant.
    let bmc = if i % 3 == 0 { "2.0" } else { "1.0" };
    let report = InventoryReport {
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
    };
    serde_json::to_string(&report).expect("report serialises")
}

/// The BMC address of machine `i`, in the canonical form the store keeps (written directly here).
fn bmc_address(i: usize) -> String {
    format!("https://10.{}.{}.{}:443", i / 65536, (i / 256) % 256, i % 256)
}

/// Insert `n` machines and their explored reports, in batched multi-row INSERTs in one
/// transaction per table (the store's one-row-at-a-time upserts are too slow for 100k).
async fn populate(url: &str, n: usize) -> anyhow::Result<()> {
    sqlx::any::install_default_drivers();
    let pool = sqlx::any::AnyPoolOptions::new().max_connections(1).connect(url).await?;
    let now = hostfw_store::now_ms();
    let mut tx = pool.begin().await?;
    for start in (0..n).step_by(BATCH) {
        let end = (start + BATCH).min(n);
        let mut sql = String::from(
            "INSERT INTO machines (id, bmc_address, vendor, model, state, created_at_ms, updated_at_ms) VALUES ",
        );
        for (k, _) in (start..end).enumerate() {
            let b = k * 5;
            if k > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("(${}, ${}, ${}, ${}, 'Ready', ${}, ${})", b + 1, b + 2, b + 3, b + 4, b + 5, b + 5));
        }
        let mut q = sqlx::query(&sql);
        for i in start..end {
            q = q
                .bind(format!("m{i:06}"))
                .bind(bmc_address(i))
                .bind("Dell")
                .bind("PowerEdge R760")
                .bind(now);
        }
        q.execute(&mut *tx).await.context("inserting machines")?;

        let mut sql = String::from(
            "INSERT INTO explored_reports (bmc_address, machine_id, vendor, model, report_json, error, explored_at_ms) VALUES ",
        );
        for (k, _) in (start..end).enumerate() {
            let b = k * 6;
            if k > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("(${}, ${}, ${}, ${}, ${}, NULL, ${})", b + 1, b + 2, b + 3, b + 4, b + 5, b + 6));
        }
        let mut q = sqlx::query(&sql);
        for i in start..end {
            q = q
                .bind(bmc_address(i))
                .bind(format!("m{i:06}"))
                .bind("Dell")
                .bind("PowerEdge R760")
                .bind(report_json(i))
                .bind(now);
        }
        q.execute(&mut *tx).await.context("inserting reports")?;
    }
    tx.commit().await?;
    pool.close().await;
    Ok(())
}

/// Median of three passes: (ms per pass, hosts the pass would start).
async fn time_pass(url: &str, site: &SiteConfig) -> anyhow::Result<(f64, usize)> {
    let store = Store::connect(url).await?;
    let catalog = CatalogSource::new(Arc::new(site.clone()), store.clone()).current().await.map_err(|e| anyhow!("{e}"))?;
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
    let (_path, site) = infra::write_site(
        dir.path(),
        &SiteOpts {
            temporal_port: 7233,
            task_queue: "bench-pass",
            database_url: "sqlite://unused.db",
            site_workflows: false,
            machine_updater: "max_concurrent_machine_updates_absolute = 50",
            firmware_global: "",
            site_explorer: "",
            host_reprovision: "",
            catalog: CATALOG,
            images: IMAGES,
        },
    )?;
    let pg = !args.no_pg && pg_reachable().await;
    if !pg {
        rows.push(Row::new("2 scheduler pass", "PostgreSQL", "skipped".into(), "", if args.no_pg { "--no-pg" } else { "PostgreSQL at 127.0.0.1:5432 not reachable" }));
    }
    for &n in &args.pass_sizes {
        // SQLite: a fresh file per size.
        let url = format!("sqlite://{}", dir.path().join(format!("pass-{n}.db")).display());
        Store::connect(&url).await?.close().await;
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
                Store::connect(&url).await?.close().await;
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
