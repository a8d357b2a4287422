//! What every benchmark starts: a Temporal dev server (child process of the pinned CLI), a site
//! directory with its config, catalog and images, an in-process worker thread or a child
//! `hostfw-worker` process, and small /proc readers. Everything is stopped on drop.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use hostfw_model::SiteConfig;
use hostfw_store::{NewMachine, Store};
use hostfw_workflows::search_attributes;

/// The workspace root (the bench crate lives in `<root>/bench`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap_or_else(|_| PathBuf::from("."))
}

pub fn temporal_cli() -> PathBuf {
    if let Ok(p) = std::env::var("HOSTFW_TEMPORAL_CLI") {
        return PathBuf::from(p);
    }
    workspace_root().join(".tools/bin/temporal")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// A `temporal server start-dev` child process on free ports, with its SQLite file in a temp dir.
pub struct DevServer {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// Where the dev server keeps its state.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Persistence {
    /// A SQLite file in a temp dir (`--db-filename`), like the demo's persisted server.
    SqliteFile,
    /// In memory: takes the server's SQLite writes out of the measurement.
    InMemory,
}

impl DevServer {
    pub async fn start() -> anyhow::Result<DevServer> {
        DevServer::start_with(Persistence::SqliteFile).await
    }

    pub async fn start_with(persistence: Persistence) -> anyhow::Result<DevServer> {
        let cli = temporal_cli();
        if !cli.exists() {
            bail!("the Temporal CLI is missing at {} (run scripts/tools.sh)", cli.display());
        }
        let dir = tempfile::tempdir()?;
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("temporal.log"))?;
        let mut cmd = Command::new(&cli);
        cmd.args(["server", "start-dev", "--headless", "--ip", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .args(["--http-port", &free_port().to_string()])
            .args(["--metrics-port", &free_port().to_string()])
            .args(["--log-level", "error"])
            .args(["--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000"]);
        if persistence == Persistence::SqliteFile {
            cmd.arg("--db-filename").arg(dir.path().join("t.db"));
        }
        for (name, kind) in search_attributes::REGISTRATION {
            cmd.args(["--search-attribute", &format!("{name}={kind}")]);
        }
        let child = cmd.stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log).spawn().context("starting temporal")?;
        let server = DevServer { child, port, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ok = Command::new(&cli)
                .args(["operator", "cluster", "health", "--address", &server.address()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ok {
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!("the Temporal dev server was not healthy within 60 s");
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The server's process id (the CLI runs the server in its own process).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `temporal workflow count` of running workflows.
    pub fn running_workflows(&self) -> anyhow::Result<u64> {
        let out = Command::new(temporal_cli())
            .args(["workflow", "count", "--address", &self.address(), "--query", "ExecutionStatus='Running'"])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .filter_map(|w| w.parse::<u64>().ok())
            .next()
            .ok_or_else(|| anyhow!("unexpected `temporal workflow count` output: {text}"))
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Inputs of a site config.
pub struct SiteOpts<'a> {
    pub temporal_port: u16,
    pub task_queue: &'a str,
    pub database_url: &'a str,
    pub site_workflows: bool,
    pub machine_updater: &'a str,
    pub firmware_global: &'a str,
    pub site_explorer: &'a str,
    pub host_reprovision: &'a str,
    pub catalog: &'a str,
    /// Firmware images: (path under `firmware/`, applies_to regex, version).
    pub images: &'a [(&'a str, &'a str, &'a str)],
}

/// Write `site.toml` and the firmware images into `dir`; returns the loaded config.
pub fn write_site(dir: &Path, o: &SiteOpts) -> anyhow::Result<(PathBuf, SiteConfig)> {
    let firmware = dir.join("firmware");
    std::fs::create_dir_all(&firmware)?;
    std::fs::create_dir_all(dir.join("scout"))?;
    for (rel, applies_to, version) in o.images {
        let path = firmware.join(rel);
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(path, hostfw_bmc_sim::firmware_image(applies_to, version, 2048))?;
    }
    let artifact_port = free_port();
    let config = format!(
        r#"
[site]
name = "bench"
database_url = "{database_url}"
data_dir = "data"

[temporal]
address = "http://127.0.0.1:{temporal_port}"
namespace = "default"
task_queue = "{task_queue}"

[worker]
metrics_listen = "127.0.0.1:0"
artifact_listen = "127.0.0.1:{artifact_port}"
artifact_base_url = "http://127.0.0.1:{artifact_port}"
site_workflows = {site_workflows}

[redfish]
timeout = "10s"
task_timeout = "5m"

[host_reprovision]
{host_reprovision}

[firmware_global]
firmware_directory = "firmware"
scout_scripts_directory = "scout"
host_firmware_upgrade_retry_interval = "1s"
{firmware_global}

[machine_updater]
{machine_updater}

[site_explorer]
{site_explorer}

{catalog}
"#,
        database_url = o.database_url,
        temporal_port = o.temporal_port,
        task_queue = o.task_queue,
        site_workflows = o.site_workflows,
        host_reprovision = o.host_reprovision,
        firmware_global = o.firmware_global,
        machine_updater = o.machine_updater,
        site_explorer = o.site_explorer,
        catalog = o.catalog,
    );
    let path = dir.join("site.toml");
    std::fs::write(&path, config)?;
    let site = SiteConfig::load(&path).map_err(|e| anyhow!("{e}"))?;
    Ok((path, site))
}

/// The short host-workflow timings of the end-to-end tests.
pub const SHORT_REPROVISION: &str = "verify_poll_interval = \"1s\"\nverify_max_polls = 30\ntask_poll_interval = \"1s\"\nbmc_healthy_reads = 2\nheartbeat_timeout = \"10s\"";

/// Register every host of the fleet (Ready, or Assigned with instance `inst-<id>`) and its login.
pub async fn register_fleet(store: &Store, fleet: &hostfw_bmc_sim::RunningFleet, assigned: bool) -> anyhow::Result<()> {
    let hosts = fleet.hosts();
    futures::future::try_join_all(hosts.chunks(64).map(|chunk| async move {
        for host in chunk {
            store
                .machine_upsert(&NewMachine {
                    id: host.id.clone(),
                    bmc_address: host.base_url.parse()?,
                    vendor: Some(host.vendor.clone()),
                    model: Some(host.model.clone()),
                    state: if assigned { "Assigned" } else { "Ready" }.to_string(),
                    instance_id: assigned.then(|| format!("inst-{}", host.id)),
                })
                .await?;
            store.credentials_put(&host.id, &host.username, &host.password).await?;
        }
        anyhow::Ok(())
    }))
    .await?;
    Ok(())
}

/// The real worker (artifact server included) on its own thread with a current-thread runtime,
/// like the end-to-end harness. Dropping it stops the worker gracefully and joins the thread.
pub struct WorkerThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    join: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl WorkerThread {
    pub fn spawn(site: SiteConfig) -> WorkerThread {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let join = std::thread::spawn(move || -> anyhow::Result<()> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, async move {
                let settings = hostfw_worker::activity_settings(&site);
                let (_addr, _server) = hostfw_worker::serve_artifacts(
                    settings.artifact_root.clone(),
                    settings.scout_scripts_dir.clone(),
                    &site.worker.artifact_listen.to_string(),
                )
                .await?;
                let client = hostfw_worker::connect(&site, "hostfw-bench-worker").await?;
                let deps = hostfw_worker::build_deps(&site, settings, Some(client.clone())).await?;
                hostfw_worker::run_worker(client, &site.temporal.task_queue, deps, async move {
                    let _ = stop_rx.await;
                })
                .await
            })
        });
        WorkerThread { stop: Some(stop_tx), join: Some(join) }
    }

    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.stop_inner().await
    }

    async fn stop_inner(&mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(join) = self.join.take() {
            let joined = tokio::task::spawn_blocking(move || join.join()).await?;
            return joined.map_err(|_| anyhow!("the worker thread panicked"))?;
        }
        Ok(())
    }
}

impl Drop for WorkerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The `hostfw-worker` binary: `$HOSTFW_WORKER_BIN`, else `target/release/hostfw-worker`.
pub fn worker_bin() -> PathBuf {
    if let Ok(p) = std::env::var("HOSTFW_WORKER_BIN") {
        return PathBuf::from(p);
    }
    workspace_root().join("target/release/hostfw-worker")
}

/// `hostfw-worker --config <file>` as a child process, killed on drop.
pub struct ChildWorker {
    child: Child,
    pub log: PathBuf,
}

impl ChildWorker {
    pub async fn start(config: &Path, dir: &Path) -> anyhow::Result<ChildWorker> {
        let bin = worker_bin();
        if !bin.is_file() {
            bail!("{} is missing: cargo build --release -p hostfw-worker", bin.display());
        }
        let log_path = dir.join("worker.log");
        let log = std::fs::File::create(&log_path)?;
        let child = Command::new(&bin)
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .env_remove("TEMPORAL_ADDRESS")
            .env_remove("TEMPORAL_NAMESPACE")
            .env_remove("HOSTFW_CONFIG")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let mut w = ChildWorker { child, log: log_path };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if std::fs::read_to_string(&w.log).unwrap_or_default().contains("worker running") {
                return Ok(w);
            }
            if let Ok(Some(status)) = w.child.try_wait() {
                bail!("hostfw-worker exited ({status}) before it was ready; its log ends:\n{}", log_tail(&w.log));
            }
            if Instant::now() > deadline {
                bail!("hostfw-worker not ready within 60 s; its log ends:\n{}", log_tail(&w.log));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The last lines of a log file (the file itself goes with its temp dir).
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

impl Drop for ChildWorker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// VmRSS of a process, in MiB.
pub fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// utime + stime of a process, in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks())
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Poll `check` every `every` until it returns `Some`, or fail after `within`.
pub async fn wait_for<T, F, Fut>(what: &str, within: Duration, every: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return Ok(v);
        }
        if Instant::now() > deadline {
            bail!("timed out after {within:?} waiting for {what}");
        }
        tokio::time::sleep(every).await;
    }
}

/// Each update of `machine_id` as (entered HostReprovision, left it), from the state history; one
/// still running ends `None`.
pub async fn update_intervals(store: &Store, machine_id: &str) -> anyhow::Result<Vec<(i64, Option<i64>)>> {
    let history = store.history_list(machine_id, 10_000).await?;
    Ok(hostfw_model::update_intervals::update_intervals(history.iter().rev().map(|h| (h.state.as_str(), h.at_ms))))
}

pub use hostfw_model::update_intervals::max_overlap;
