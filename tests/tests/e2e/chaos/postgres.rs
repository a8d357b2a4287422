//! The chaos scenarios on PostgreSQL: the site database on a fresh PostgreSQL database
//! (`hostfw_chaos_<pid>`, dropped afterwards), and the server restarted twice mid-rollout with
//! `pg_ctlcluster <version> main restart` (as scripts/test.sh starts it), or stopped for 30 s or
//! for 3 minutes mid-rollout with an error budget of one host (issue 26 item 8: a database
//! outage is the infrastructure's fault, so no target pauses and no host spends a retry). When
//! PostgreSQL is not reachable on 127.0.0.1:5432 or cannot be restarted from here, the row says
//! "skipped" and why.

use std::path::Path;
use std::time::{Duration, Instant};

use sqlx::{Connection, Executor};

use super::measure::wait_settled;
use super::measure::{Rng, Row};
use super::scenarios::{finish, r760_fleet, r760_targets, spec};
use hostfw_tests::{ChildWorker, Site, SiteSpec};

const ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
const NAME: &str = "site database on PostgreSQL, restarted twice mid-rollout (20 hosts)";

/// The version of the local cluster `main` that `pg_ctlcluster` manages and reports running.
fn restartable_cluster() -> Result<String, String> {
    let versions = std::fs::read_dir("/etc/postgresql").map_err(|e| format!("no /etc/postgresql ({e})"))?;
    let mut versions: Vec<String> = versions
        .flatten()
        .filter(|e| e.path().join("main").is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    versions.sort();
    let version = versions.pop().ok_or("no cluster `main` under /etc/postgresql")?;
    let status = std::process::Command::new("pg_ctlcluster")
        .args([version.as_str(), "main", "status"])
        .output()
        .map_err(|e| format!("pg_ctlcluster cannot run: {e}"))?;
    if !status.status.success() {
        return Err(format!("pg_ctlcluster {version} main status: {}", String::from_utf8_lossy(&status.stdout).trim()));
    }
    Ok(version)
}

/// `pg_ctlcluster <version> main <action>` (restart, stop, start).
async fn cluster(version: &str, action: &str) -> Result<(), String> {
    let (version, what) = (version.to_string(), action.to_string());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("pg_ctlcluster")
            .args(["--skip-systemctl-redirect", version.as_str(), "main", what.as_str()])
            .output()
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("pg_ctlcluster cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("pg_ctlcluster {action} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// A fresh chaos database, its URL, and the cluster's version; or why the scenario is skipped.
async fn prepare() -> Result<(String, String, String), String> {
    if std::net::TcpStream::connect_timeout(&"127.0.0.1:5432".parse().unwrap(), Duration::from_secs(2)).is_err() {
        return Err("PostgreSQL is not reachable on 127.0.0.1:5432".into());
    }
    if !Path::new("/usr/bin/pg_ctlcluster").exists() && which_pg_ctlcluster().is_none() {
        return Err("pg_ctlcluster is not installed: the test cannot restart PostgreSQL".into());
    }
    let version = restartable_cluster().map_err(|why| format!("PostgreSQL cannot be restarted by the test: {why}"))?;
    let db = format!("hostfw_chaos_{}", std::process::id());
    let mut admin =
        sqlx::PgConnection::connect(ADMIN_URL).await.map_err(|e| format!("cannot connect as {ADMIN_URL}: {e}"))?;
    admin.execute(format!("DROP DATABASE IF EXISTS {db}").as_str()).await.expect("old chaos database dropped");
    admin.execute(format!("CREATE DATABASE {db}").as_str()).await.expect("chaos database created");
    drop(admin);
    Ok((db.clone(), format!("postgres://postgres@127.0.0.1:5432/{db}"), version))
}

async fn drop_database(db: &str) {
    if let Ok(mut admin) = sqlx::PgConnection::connect(ADMIN_URL).await {
        let _ = admin.execute(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)").as_str()).await;
    }
}

/// The site database stopped for `outage` mid-rollout (20 hosts), with an error budget of one
/// failed host: the outage must pause no target, exhaust no host and record no failure.
pub async fn postgres_stopped(rng: &mut Rng, outage: Duration, label: &str) -> Row {
    let name = format!("site database on PostgreSQL stopped {label} mid-rollout, error budget 1 (20 hosts)");
    let (db, url, version) = match prepare().await {
        Ok(p) => p,
        Err(why) => return Row::skipped(&name, why),
    };
    let ids: Vec<String> = (0..20).map(|i| format!("ps{i:02}")).collect();
    let fleet = r760_fleet(&ids, "task_seconds = 2.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    let base = spec(&fleet, 6);
    let config = base.config.clone().database_url(&url).machine_updater("error_budget_failed_hosts", 1);
    let site = Site::start(SiteSpec { config, ..base }).await.expect("site starts on PostgreSQL");
    let mut expect = super::measure::Expect { max_retries: 5, ..Default::default() };
    for id in &ids {
        expect.targets.insert(id.clone(), r760_targets());
    }
    let started = Instant::now();
    let worker = ChildWorker::start(&site).await;
    tokio::time::sleep(rng.millis(4_000, 9_000)).await;
    let open = site.store.request_list().await.map(|r| r.len().to_string()).unwrap_or_else(|e| e.to_string());
    eprintln!("chaos: PostgreSQL stopped for {label} at {:.1}s", started.elapsed().as_secs_f64());
    let mut failures = Vec::new();
    if let Err(e) = cluster(&version, "stop").await {
        failures.push(e);
    }
    tokio::time::sleep(outage).await;
    eprintln!("chaos: PostgreSQL started again at {:.1}s", started.elapsed().as_secs_f64());
    if let Err(e) = cluster(&version, "start").await {
        failures.push(e);
    }
    wait_settled(&site, &expect, Duration::from_secs(600)).await;
    // The outage is nobody's failure: no target record may name a failed host.
    match site.store.target_records().await {
        Ok(records) => {
            for r in records.iter().filter(|r| !r.failures.is_empty()) {
                failures
                    .push(format!("target {:?} recorded failed hosts after the outage: {:?}", r.target, r.failures));
            }
        }
        Err(e) => failures.push(format!("cannot read the target records: {e}")),
    }
    let mut row = finish(site, vec![worker], &expect, &name, started).await;
    row.violations.extend(failures);
    row.notes.push(format!("requests open when it stopped: {open}"));
    drop_database(&db).await;
    row
}

pub async fn postgres_restarted(rng: &mut Rng) -> Row {
    let (db, url, version) = match prepare().await {
        Ok(p) => p,
        Err(why) => return Row::skipped(NAME, why),
    };
    let ids: Vec<String> = (0..20).map(|i| format!("pg{i:02}")).collect();
    let fleet = r760_fleet(&ids, "task_seconds = 2.0\nreset_seconds = 0.5\nmanager_reset_seconds = 0.8");
    let base = spec(&fleet, 6);
    let site = Site::start(SiteSpec { config: base.config.clone().database_url(&url), ..base })
        .await
        .expect("site starts on PostgreSQL");
    let mut expect = super::measure::Expect { max_retries: 5, ..Default::default() };
    for id in &ids {
        expect.targets.insert(id.clone(), r760_targets());
    }
    let started = Instant::now();
    let worker = ChildWorker::start(&site).await;
    let mut failures = Vec::new();
    let mut open = Vec::new();
    for n in 1..=2 {
        tokio::time::sleep(rng.millis(3_000, 9_000)).await;
        open.push(site.store.request_list().await.map(|r| r.len().to_string()).unwrap_or_else(|e| e.to_string()));
        eprintln!("chaos: PostgreSQL restart {n}/2 at {:.1}s", started.elapsed().as_secs_f64());
        if let Err(e) = cluster(&version, "restart").await {
            failures.push(e);
        }
    }
    let mut row = finish(site, vec![worker], &expect, NAME, started).await;
    row.violations.extend(failures);
    row.notes.push(format!("requests open at each restart: {}", open.join(", ")));
    drop_database(&db).await;
    row
}

fn which_pg_ctlcluster() -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join("pg_ctlcluster")).find(|p| p.is_file())
}
