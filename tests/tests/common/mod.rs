//! The end-to-end harness: a real Temporal dev server (the pinned `temporal` CLI, on a free port),
//! a bmc-sim fleet on port 0, a SQLite site database and firmware directory in a temp dir, and a
//! hostfw worker on its own thread. Commands go through the real `hostfw` CLI code.
//!
//! Tests call [`Site::start`], drive it with [`Site::cli`], and await conditions with
//! [`Site::wait_for`] (never fixed sleeps).

#![allow(dead_code)]

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use clap::Parser;
use hostfw_bmc_sim::{FleetSpec, RunningFleet};
use hostfw_model::SiteConfig;
use hostfw_store::{NewMachine, Store};
use hostfw_workflows::{host_reprovision_workflow_id, search_attributes, HostOutcome, HostReprovisionWorkflow};
use temporalio_client::errors::WorkflowGetResultError;
use temporalio_client::{Client, WorkflowGetResultOptions};
use temporalio_sdk::testing::{EphemeralExe, LocalWorkflowEnvironmentOptions, LocalServer, WorkflowEnvironment};
use tempfile::TempDir;

/// The pinned Temporal CLI installed by `make test` (scripts/tools.sh).
pub fn temporal_cli() -> PathBuf {
    if let Ok(p) = std::env::var("HOSTFW_TEMPORAL_CLI") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/bin/temporal");
    assert!(
        p.exists(),
        "the Temporal CLI is missing at {}: run `make test` (it installs it) or set HOSTFW_TEMPORAL_CLI",
        p.display()
    );
    p
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

/// `extra` lines of a TOML table, plus each `(key, value)` default whose key `extra` does not set.
fn with_defaults(extra: &str, defaults: &[(&str, &str)]) -> String {
    let mut out = extra.to_string();
    for (key, value) in defaults {
        let set = extra.lines().any(|l| l.split('=').next().map(str::trim) == Some(*key));
        if !set {
            out.push_str(&format!("\n{key} = {value}"));
        }
    }
    out
}

/// Write a simulator firmware image: what the catalog points at and bmc-sim understands.
pub fn write_image(dir: &Path, rel: &str, applies_to: &str, version: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut body = format!("HOSTFW-SIM-IMAGE applies_to={applies_to} version={version}\n").into_bytes();
    body.extend(std::iter::repeat_n(b'x', 2048));
    std::fs::write(path, body).unwrap();
}

struct WorkerThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    join: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

/// A running site.
pub struct Site {
    pub dir: TempDir,
    pub config_path: PathBuf,
    pub site: SiteConfig,
    pub store: Store,
    pub fleet: RunningFleet,
    pub client: Client,
    env: Option<WorkflowEnvironment<LocalServer>>,
    /// How the dev server was started (port, arguments, database file): [`Site::restart_temporal`]
    /// starts it again the same way.
    temporal_options: TemporalOptions,
    worker: WorkerThread,
    /// With `external_worker`: a listener holding the worker's artifact port until
    /// [`ChildWorker::start`] takes it, so no other process picks that port meanwhile.
    artifact_reservation: std::sync::Mutex<Option<TcpListener>>,
}

/// Inputs of [`Site::start`].
#[derive(Default)]
pub struct SiteSpec<'a> {
    /// bmc-sim fleet TOML; `bmc_address` should be `127.0.0.1:0`.
    pub fleet: &'a str,
    /// `[host_models.*]` tables appended to the site config.
    pub catalog: &'a str,
    /// Firmware images: (path under the firmware dir, applies_to regex, version).
    pub images: &'a [(&'a str, &'a str, &'a str)],
    /// Extra lines of the `[host_reprovision]`, `[firmware_global]` and `[machine_updater]` tables.
    pub host_reprovision: &'a str,
    /// Extra lines of the `[redfish]` table (its `timeout` and `task_timeout` are set already).
    pub redfish: &'a str,
    pub firmware_global: &'a str,
    pub machine_updater: &'a str,
    /// Other files to write, relative to the site directory (scripts, Scout packages).
    pub files: &'a [(&'a str, &'a str)],
    /// Machines to register as Assigned: (machine id, instance id).
    pub assigned: &'a [(&'a str, &'a str)],
    /// Run a Scout agent serving every host of the fleet.
    pub scout: bool,
    /// Start no in-process worker: the test runs the real `hostfw-worker` binary itself
    /// ([`ChildWorker`]), so it can kill it with SIGKILL and restart it.
    pub external_worker: bool,
    /// Let the worker start the site workflows (Machine Update Manager, Site Explorer). Off by
    /// default so host-workflow tests see only the requests they make.
    pub site_workflows: bool,
    /// Extra lines of the `[site_explorer]` table.
    pub site_explorer: &'a str,
    /// Extra `--dynamic-config-value` settings of the dev server (`key=value`), e.g.
    /// `limit.historyCount.suggestContinueAsNew=60`.
    pub temporal_dynamic_config: &'a [&'a str],
    /// Persist the dev server's state in `<site dir>/temporal.db`, so that
    /// [`Site::restart_temporal`] keeps every workflow.
    pub temporal_db: bool,
    /// The site database URL; empty: a SQLite file in the site directory.
    pub database_url: &'a str,
}

#[derive(Clone)]
struct TemporalOptions {
    port: u16,
    extra_args: Vec<String>,
    db: Option<PathBuf>,
}

async fn start_temporal(o: &TemporalOptions) -> anyhow::Result<WorkflowEnvironment<LocalServer>> {
    let options = LocalWorkflowEnvironmentOptions::builder()
        .server_executable(EphemeralExe::ExistingPath(temporal_cli().display().to_string()))
        .port(o.port)
        .extra_args(o.extra_args.clone())
        .maybe_database_filename(o.db.clone())
        .build();
    WorkflowEnvironment::start_local(options).await.context("starting the Temporal dev server")
}

impl Site {
    pub async fn start(spec: SiteSpec<'_>) -> anyhow::Result<Site> {
        let dir = tempfile::tempdir()?;
        let firmware = dir.path().join("firmware");
        std::fs::create_dir_all(&firmware)?;
        for (rel, applies_to, version) in spec.images {
            write_image(&firmware, rel, applies_to, version);
        }

        let temporal_port = free_port();
        let artifact_port = free_port();
        let artifact_reservation =
            if spec.external_worker { TcpListener::bind(("127.0.0.1", artifact_port)).ok() } else { None };
        let mut extra_args = vec![
            "--dynamic-config-value".to_string(),
            "history.transferProcessorMaxPollRPS=10000".to_string(),
        ];
        for value in spec.temporal_dynamic_config {
            extra_args.push("--dynamic-config-value".to_string());
            extra_args.push(value.to_string());
        }
        for (name, kind) in search_attributes::REGISTRATION {
            extra_args.push("--search-attribute".into());
            extra_args.push(format!("{name}={kind}"));
        }
        let temporal_options = TemporalOptions {
            port: temporal_port,
            extra_args,
            db: spec.temporal_db.then(|| dir.path().join("temporal.db")),
        };
        let env = start_temporal(&temporal_options).await?;
        let client = env.client().clone();

        let config = format!(
            r#"
[site]
name = "e2e"
database_url = "{database_url}"
data_dir = "data"

[temporal]
address = "http://127.0.0.1:{temporal_port}"
namespace = "default"
task_queue = "hostfw-e2e"

[worker]
metrics_listen = "127.0.0.1:0"
artifact_listen = "127.0.0.1:{artifact_port}"
artifact_base_url = "http://127.0.0.1:{artifact_port}"
site_workflows = {site_workflows}

[redfish]
timeout = "5s"
task_timeout = "2m"
{redfish}

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
            host_reprovision = with_defaults(
                spec.host_reprovision,
                &[("verify_poll_interval", "\"1s\""), ("verify_max_polls", "20"), ("task_poll_interval", "\"1s\""), ("bmc_healthy_reads", "2")],
            ),
            firmware_global = spec.firmware_global,
            redfish = spec.redfish,
            machine_updater = spec.machine_updater,
            site_workflows = spec.site_workflows,
            site_explorer = spec.site_explorer,
            catalog = spec.catalog,
            database_url = if spec.database_url.is_empty() { "sqlite://site.db" } else { spec.database_url },
        );
        for (rel, content) in spec.files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap())?;
            std::fs::write(&path, content.replace("{SITE}", &dir.path().display().to_string()))?;
        }
        let config_path = dir.path().join("site.toml");
        std::fs::write(&config_path, config)?;
        let site = SiteConfig::load(&config_path).map_err(|e| anyhow!("{e}"))?;
        let store = Store::connect(&site.site.database_url).await?;

        let fleet_spec = FleetSpec::from_toml_str(spec.fleet).map_err(|e| anyhow!("{e}"))?;
        let fleet = hostfw_bmc_sim::start(fleet_spec).await.map_err(|e| anyhow!("{e}"))?;
        for host in fleet.hosts() {
            let instance = spec.assigned.iter().find(|(m, _)| *m == host.id).map(|(_, i)| i.to_string());
            store
                .machine_upsert(&NewMachine {
                    id: host.id.clone(),
                    bmc_address: host.base_url.parse()?,
                    vendor: Some(host.vendor.clone()),
                    model: Some(host.model.clone()),
                    state: if instance.is_some() { hostfw_model::HostState::Assigned } else { hostfw_model::HostState::Ready },
                    instance_id: instance,
                })
                .await?;
            store.credentials_put(&host.id, &host.username, &host.password.as_str().into()).await?;
        }

        let scout_hosts = if spec.scout { fleet.hosts().into_iter().map(|h| h.id).collect() } else { Vec::new() };
        let worker = if spec.external_worker {
            WorkerThread { stop: None, join: None }
        } else {
            spawn_worker(site.clone(), scout_hosts)
        };
        Ok(Site {
            dir,
            config_path,
            site,
            store,
            fleet,
            client,
            env: Some(env),
            temporal_options,
            worker,
            artifact_reservation: std::sync::Mutex::new(artifact_reservation),
        })
    }

    /// Run one `hostfw` command line (without the program name) against this site; returns what
    /// it printed.
    pub async fn cli(&self, args: &[&str]) -> anyhow::Result<String> {
        let (result, printed) = self.cli_full(args).await;
        result.map(|()| printed)
    }

    /// Like [`Site::cli`], but returns the printed output whether or not the command failed.
    pub async fn cli_full(&self, args: &[&str]) -> (anyhow::Result<()>, String) {
        let mut argv = vec!["hostfw".to_string(), "--config".to_string(), self.config_path.display().to_string()];
        argv.extend(args.iter().map(|s| s.to_string()));
        let cli = match hostfw_starter::cli::Cli::try_parse_from(argv) {
            Ok(cli) => cli,
            Err(e) => return (Err(e.into()), String::new()),
        };
        hostfw_starter::output::capture(hostfw_starter::run(cli)).await
    }

    /// Await the end of a host's workflow.
    pub async fn host_result(&self, machine_id: &str) -> Result<HostOutcome, WorkflowGetResultError> {
        let handle = self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        tokio::time::timeout(Duration::from_secs(180), handle.get_result(WorkflowGetResultOptions::default()))
            .await
            .expect("host workflow finished within 180 s")
    }

    /// When `HOSTFW_RECORD_HISTORIES=1`, save the history of `machine_id`'s workflow as the replay
    /// fixture `tests/histories/<name>.json` (the SDK's JSON form). Otherwise do nothing.
    pub async fn record_history(&self, machine_id: &str, name: &str) {
        self.record_workflow_history::<HostReprovisionWorkflow>(&host_reprovision_workflow_id(machine_id), name).await
    }

    /// Like [`Site::record_history`] for any workflow ID (e.g. the site workflows, still running:
    /// a partial history replays up to its last event).
    pub async fn record_workflow_history<W: temporalio_common::HasWorkflowDefinition>(&self, workflow_id: &str, name: &str) {
        if std::env::var("HOSTFW_RECORD_HISTORIES").as_deref() != Ok("1") {
            return;
        }
        let handle = self.client.get_workflow_handle::<W>(workflow_id.to_string());
        let json = handle
            .fetch_history(temporalio_client::WorkflowFetchHistoryOptions::default())
            .to_json()
            .await
            .expect("history fetched");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("histories").join(format!("{name}.json"));
        std::fs::write(&path, json).expect("history written");
        eprintln!("recorded {}", path.display());
    }

    /// The `status` query of a host's workflow.
    pub async fn status(&self, machine_id: &str) -> Option<hostfw_workflows::HostStatus> {
        let handle = self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        handle
            .query(HostReprovisionWorkflow::status, (), temporalio_client::WorkflowQueryOptions::default())
            .await
            .ok()
    }

    /// Wait until the host's recorded substate is `substate`.
    pub async fn wait_substate(&self, machine_id: &str, substate: &str, within: Duration) {
        self.wait_for(&format!("{machine_id} to reach {substate}"), within, || async {
            let m = self.store.machine_get(machine_id).await.ok()??;
            (m.substate.map(|s| s.as_str()) == Some(substate)).then_some(())
        })
        .await
    }

    /// Poll `check` until it returns `Some`, or fail after `within`.
    pub async fn wait_for<T, F, Fut>(&self, what: &str, within: Duration, mut check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        let deadline = Instant::now() + within;
        loop {
            if let Some(v) = check().await {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out after {within:?} waiting for {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Stop the Temporal dev server and start it again on the same port (and, with
    /// `temporal_db`, the same database file): what a server restart looks like to workers.
    pub async fn restart_temporal(&mut self) {
        if let Some(env) = self.env.take() {
            env.shutdown().await.expect("dev server stopped");
        }
        let env = start_temporal(&self.temporal_options).await.expect("dev server restarted");
        self.client = env.client().clone();
        self.env = Some(env);
    }

    /// Stop the Temporal dev server (workers lose it: an outage). [`Site::start_temporal`] brings
    /// it back on the same port and, with `temporal_db`, the same database file.
    pub async fn stop_temporal(&mut self) {
        if let Some(env) = self.env.take() {
            env.shutdown().await.expect("dev server stopped");
        }
    }

    /// Start the dev server again after [`Site::stop_temporal`].
    pub async fn start_temporal(&mut self) {
        assert!(self.env.is_none(), "start_temporal: the dev server is running");
        let env = start_temporal(&self.temporal_options).await.expect("dev server restarted");
        self.client = env.client().clone();
        self.env = Some(env);
    }

    /// SIGKILL the Temporal dev server (no graceful shutdown: what a crashed server or host looks
    /// like) and wait until its port is free. [`Site::start_temporal`] brings it back.
    pub async fn kill_temporal_9(&mut self) {
        let port = self.temporal_options.port;
        let pid = listener_pid(port).unwrap_or_else(|| panic!("no process listens on the dev server's port {port}"));
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        assert!(comm.trim().starts_with("temporal"), "the process on port {port} is {comm:?}, not the dev server");
        let status = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().expect("kill runs");
        assert!(status.success(), "kill -9 {pid} failed: {status}");
        eprintln!("killed the Temporal dev server {pid} with SIGKILL");
        self.wait_for("the dev server's port to be free", Duration::from_secs(30), || async {
            listener_pid(port).is_none().then_some(())
        })
        .await;
        // The handle's server is dead; dropping it reaps what is left.
        drop(self.env.take());
    }

    /// Stop the worker, the simulators and the dev server.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.worker.stop.take() {
            let _ = stop.send(());
        }
        if let Some(join) = self.worker.join.take() {
            let _ = tokio::task::spawn_blocking(move || join.join()).await;
        }
        if let Some(env) = self.env.take() {
            let _ = env.shutdown().await;
        }
    }
}

/// The process holding a listening TCP socket on `port` (from /proc/net/tcp{,6} and /proc/*/fd).
fn listener_pid(port: u16) -> Option<u32> {
    let local = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() > 9 && cols[1].ends_with(&local) && cols[3] == "0A" {
                inodes.push(format!("socket:[{}]", cols[9]));
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if inodes.iter().any(|i| target.as_os_str() == i.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

/// Run the real worker (artifact server included) on its own thread: the SDK's worker future is
/// not `Send`, so it gets a current-thread runtime of its own.
/// `scout_hosts`: machines whose Scout agent runs beside the worker (one process for all, as in
/// the demo).
fn spawn_worker(site: SiteConfig, scout_hosts: Vec<String>) -> WorkerThread {
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
            let client = hostfw_worker::connect(&site, "hostfw-e2e-worker").await?;
            let deps = hostfw_worker::build_deps(&site, settings, Some(client.clone())).await?;
            let (stop_tx2, stop_rx2) = tokio::sync::oneshot::channel::<()>();
            let worker = hostfw_worker::run_worker(client.clone(), &site.temporal.task_queue, deps, async move {
                let _ = stop_rx.await;
                let _ = stop_tx2.send(());
            });
            if scout_hosts.is_empty() {
                return worker.await;
            }
            let scout = hostfw_scout::run_agent(client, scout_hosts, async move {
                let _ = stop_rx2.await;
            });
            let (w, s) = futures::join!(worker, scout);
            w.and(s)
        })
    });
    WorkerThread { stop: Some(stop_tx), join: Some(join) }
}

/// One pending activity of a workflow, as `temporal workflow describe` shows it.
#[derive(Debug, Clone)]
pub struct PendingActivity {
    /// Activity type, e.g. `hostfw.firmware.upload`.
    pub name: String,
    pub attempt: i32,
    /// The last heartbeat details, decoded as text (JSON of what the activity recorded).
    pub heartbeat: String,
    /// When the current attempt started, and when the server last received its heartbeat
    /// (server clock, since the Unix epoch).
    pub last_started: Option<Duration>,
    pub last_heartbeat: Option<Duration>,
}

impl PendingActivity {
    /// How long the current attempt has kept heartbeating: last heartbeat minus start.
    pub fn heartbeating_for(&self) -> Option<Duration> {
        self.last_heartbeat?.checked_sub(self.last_started?)
    }
}

impl Site {
    /// The host's substate as recorded in the site database.
    pub async fn substate(&self, machine_id: &str) -> Option<String> {
        self.store.machine_get(machine_id).await.ok()??.substate.map(|s| s.to_string())
    }

    /// Whether the host's workflow is still running (read from the server: needs no worker).
    pub async fn workflow_running(&self, machine_id: &str) -> bool {
        let handle = self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        let description = handle
            .describe(temporalio_client::WorkflowDescribeOptions::default())
            .await
            .expect("workflow described");
        let status = description.raw_description.workflow_execution_info.as_ref().map(|i| i.status).unwrap_or_default();
        status == temporalio_common::protos::temporal::api::enums::v1::WorkflowExecutionStatus::Running as i32
    }

    /// The host workflow's pending activities (read from the server: needs no worker).
    pub async fn pending_activities(&self, machine_id: &str) -> Vec<PendingActivity> {
        let handle = self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        let Ok(description) = handle.describe(temporalio_client::WorkflowDescribeOptions::default()).await else {
            return Vec::new();
        };
        description
            .raw_description
            .pending_activities
            .iter()
            .map(|a| PendingActivity {
                name: a.activity_type.as_ref().map(|t| t.name.clone()).unwrap_or_default(),
                attempt: a.attempt,
                heartbeat: a
                    .heartbeat_details
                    .iter()
                    .flat_map(|p| p.payloads.iter())
                    .map(|p| String::from_utf8_lossy(&p.data).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
                last_started: a.last_started_time.as_ref().map(|t| Duration::new(t.seconds as u64, t.nanos as u32)),
                last_heartbeat: a.last_heartbeat_time.as_ref().map(|t| Duration::new(t.seconds as u64, t.nanos as u32)),
            })
            .collect()
    }

    /// The full history of the host's workflow, in the SDK's JSON form (payload bytes base64).
    pub async fn history_json(&self, machine_id: &str) -> serde_json::Value {
        let handle = self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        let bytes = handle
            .fetch_history(temporalio_client::WorkflowFetchHistoryOptions::default())
            .to_json()
            .await
            .expect("history fetched");
        serde_json::from_slice(&bytes).expect("history JSON")
    }
}

/// Every event of a history (from [`Site::history_json`]) as `(event id, attributes key,
/// attributes)`, e.g. `(7, "ActivityTaskStartedEventAttributes", {...})`.
pub fn history_events(history: &serde_json::Value) -> Vec<(i64, String, serde_json::Value)> {
    history["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| {
            let id = e["event_id"].as_i64()?;
            let (key, attributes) = e["attributes"].as_object()?.iter().next()?;
            Some((id, key.clone(), attributes.clone()))
        })
        .collect()
}

/// How the executions of one activity type went, from a history: for each execution (scheduled
/// event), the attempt that ended it and the failure that ended the attempt before it (e.g. a
/// heartbeat timeout), and whether it ended in a timeout.
#[derive(Debug, Clone, Default)]
pub struct ActivityRecord {
    pub scheduled_event_id: i64,
    /// Attempt number of the last start (1 = never retried).
    pub attempt: i64,
    /// Message of the failure of the previous attempt, when retried.
    pub last_failure: Option<String>,
    /// The execution ended in ActivityTaskTimedOut, with this failure message.
    pub timed_out: Option<String>,
    pub completed: bool,
}

/// Every execution of activity type `name` in `history`, in order.
pub fn activity_records(history: &serde_json::Value, name: &str) -> Vec<ActivityRecord> {
    let mut records: Vec<ActivityRecord> = Vec::new();
    fn failure_text(f: &serde_json::Value) -> String {
        let mut parts = vec![f["message"].as_str().unwrap_or_default().to_string()];
        if let Some(info) = f.get("failure_info") {
            parts.push(info.to_string());
        }
        parts.join(" ")
    }
    for (id, key, attributes) in history_events(history) {
        let scheduled = attributes["scheduled_event_id"].as_i64();
        let record = |records: &mut Vec<ActivityRecord>| -> Option<usize> {
            records.iter().position(|r| Some(r.scheduled_event_id) == scheduled)
        };
        match key.as_str() {
            "ActivityTaskScheduledEventAttributes" if attributes["activity_type"]["name"] == name => {
                records.push(ActivityRecord { scheduled_event_id: id, ..ActivityRecord::default() });
            }
            "ActivityTaskStartedEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].attempt = attributes["attempt"].as_i64().unwrap_or(1);
                    records[i].last_failure =
                        attributes.get("last_failure").filter(|f| !f.is_null()).map(failure_text);
                }
            }
            "ActivityTaskTimedOutEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].timed_out = Some(failure_text(&attributes["failure"]));
                }
            }
            "ActivityTaskCompletedEventAttributes" => {
                if let Some(i) = record(&mut records) {
                    records[i].completed = true;
                }
            }
            _ => {}
        }
    }
    records
}

/// Whether `needle` occurs anywhere in a history: in its plain JSON text, or inside any string
/// that decodes as base64 (payload `data` and `metadata` are base64 in the JSON form, so a
/// search of the raw bytes alone would never find what a workflow input or result carries).
pub fn history_contains(history: &serde_json::Value, needle: &str) -> bool {
    fn walk(v: &serde_json::Value, needle: &str) -> bool {
        match v {
            serde_json::Value::String(s) => {
                s.contains(needle)
                    || base64_decode(s).is_some_and(|b| String::from_utf8_lossy(&b).contains(needle))
            }
            serde_json::Value::Array(a) => a.iter().any(|x| walk(x, needle)),
            serde_json::Value::Object(o) => o.iter().any(|(k, x)| k.contains(needle) || walk(x, needle)),
            _ => false,
        }
    }
    walk(history, needle)
}

/// Standard base64 (with or without padding); `None` when `s` is not base64.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let body = s.trim_end_matches('=');
    if body.is_empty() || s.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in body.bytes() {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The `hostfw-worker` binary the child-process tests run: `$HOSTFW_WORKER_BIN`, else the
/// workspace's `target/debug/hostfw-worker` when it exists (`cargo build --workspace --bins`).
pub fn worker_bin() -> PathBuf {
    if let Ok(p) = std::env::var("HOSTFW_WORKER_BIN") {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "HOSTFW_WORKER_BIN={} is not a file", p.display());
        return p;
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/hostfw-worker");
    assert!(
        p.is_file(),
        "the hostfw-worker binary is missing at {}: run `cargo build --workspace --bins` or set HOSTFW_WORKER_BIN",
        p.display()
    );
    p
}

/// The real `hostfw-worker` binary as a child process of the test, on the site's config
/// (`hostfw-worker --config <site.toml>`, `RUST_LOG=info`), with its output in
/// `<site dir>/worker-<n>.log` (one file per start). Only one process runs at a time: it must be
/// killed before it is restarted. Dropping it kills the process; when the test is failing, the
/// tail of its log is printed.
pub struct ChildWorker {
    /// "" for the site's worker; else the name of an extra worker (its own config and log files).
    name: String,
    bin: PathBuf,
    config: PathBuf,
    dir: PathBuf,
    artifact_listen: String,
    /// Holds the artifact port while no worker runs (dropped right before a worker starts).
    reservation: Option<TcpListener>,
    child: Option<std::process::Child>,
    logs: Vec<PathBuf>,
}

/// How long a started worker may take to connect to Temporal.
const WORKER_READY_WITHIN: Duration = Duration::from_secs(60);
/// The line `hostfw-worker` logs once it is connected and about to poll.
const WORKER_READY_LINE: &str = "worker running";

impl ChildWorker {
    /// Start the worker for `site` (which must have been started with `external_worker`) and
    /// wait until it is connected to Temporal.
    pub async fn start(site: &Site) -> ChildWorker {
        let mut w = ChildWorker {
            name: String::new(),
            bin: worker_bin(),
            config: site.config_path.clone(),
            dir: site.dir.path().to_path_buf(),
            artifact_listen: site.site.worker.artifact_listen.clone(),
            reservation: site.artifact_reservation.lock().unwrap().take(),
            child: None,
            logs: Vec::new(),
        };
        w.spawn().await;
        w
    }

    /// Start another worker process for `site` beside the one [`ChildWorker::start`] runs (same
    /// task queue, site database and firmware directory), named `name`: it gets its own artifact
    /// port (reserved here, like the site's) in its own config file `<site dir>/site-<name>.toml`,
    /// and its own log files `worker-<name>-<n>.log`. Its metrics port is picked by the system.
    pub async fn start_extra(site: &Site, name: &str) -> ChildWorker {
        let port = free_port();
        let reservation = TcpListener::bind(("127.0.0.1", port)).ok();
        let ours = &site.site.worker.artifact_listen;
        let config = std::fs::read_to_string(&site.config_path)
            .expect("site config read")
            .replace(&format!("127.0.0.1:{}", ours.rsplit(':').next().unwrap()), &format!("127.0.0.1:{port}"));
        let path = site.dir.path().join(format!("site-{name}.toml"));
        std::fs::write(&path, config).expect("extra worker config written");
        let mut w = ChildWorker {
            name: name.to_string(),
            bin: worker_bin(),
            config: path,
            dir: site.dir.path().to_path_buf(),
            artifact_listen: format!("127.0.0.1:{port}"),
            reservation,
            child: None,
            logs: Vec::new(),
        };
        w.spawn().await;
        w
    }

    /// Start the worker again after [`ChildWorker::kill_9`].
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "restart: the previous worker process is still running; kill it first");
        self.spawn().await;
    }

    /// SIGKILL the worker (no graceful shutdown, nothing flushed) and wait until the process is
    /// gone. Panics unless the process was alive and died of that signal.
    pub fn kill_9(&mut self) {
        let mut child = self.child.take().expect("kill_9: no worker process running");
        let pid = child.id();
        if let Ok(Some(status)) = child.try_wait() {
            panic!("kill_9: worker {pid} had already exited ({status}) before the kill\n{}", self.log_tail(60));
        }
        child.kill().expect("SIGKILL sent");
        let status = child.wait().expect("worker reaped");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "worker {pid} ended by SIGKILL, not {status}");
        eprintln!("killed worker {pid} with SIGKILL");
        // The process is reaped, so its listener is closed: hold the port until the restart.
        self.reservation = TcpListener::bind(&self.artifact_listen).ok();
    }

    /// The process id of the running worker.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Log files, one per start, oldest first.
    pub fn log_paths(&self) -> &[PathBuf] {
        &self.logs
    }

    /// Everything every run of the worker printed, oldest first.
    pub fn log(&self) -> String {
        self.logs.iter().map(|p| std::fs::read_to_string(p).unwrap_or_default()).collect::<Vec<_>>().join("\n")
    }

    /// The last `lines` lines of [`ChildWorker::log`], with a heading naming the files.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = self.log();
        let all: Vec<&str> = log.lines().collect();
        let tail = all[all.len().saturating_sub(lines)..].join("\n");
        let files: Vec<String> = self.logs.iter().map(|p| p.display().to_string()).collect();
        format!("--- last {lines} lines of the worker log ({}) ---\n{tail}\n--- end of worker log ---", files.join(", "))
    }

    async fn spawn(&mut self) {
        self.reservation = None;
        self.wait_artifact_port_free().await;
        let prefix = if self.name.is_empty() { "worker".to_string() } else { format!("worker-{}", self.name) };
        let log_path = self.dir.join(format!("{prefix}-{}.log", self.logs.len() + 1));
        let log = std::fs::File::create(&log_path).expect("worker log created");
        let child = std::process::Command::new(&self.bin)
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            // The site config decides where Temporal is, not the caller's environment.
            .env_remove("TEMPORAL_ADDRESS")
            .env_remove("TEMPORAL_NAMESPACE")
            .env_remove("HOSTFW_CONFIG")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bin.display()));
        eprintln!("started worker {} (log {})", child.id(), log_path.display());
        self.child = Some(child);
        self.logs.push(log_path.clone());
        let deadline = Instant::now() + WORKER_READY_WITHIN;
        loop {
            if std::fs::read_to_string(&log_path).unwrap_or_default().contains(WORKER_READY_LINE) {
                return;
            }
            if let Ok(Some(status)) = self.child.as_mut().unwrap().try_wait() {
                self.child = None;
                panic!("the worker exited ({status}) before it was ready\n{}", self.log_tail(60));
            }
            assert!(
                Instant::now() < deadline,
                "the worker was not ready within {WORKER_READY_WITHIN:?}\n{}",
                self.log_tail(60)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The artifact server of a new process listens where the old one did (the site config's
    /// `artifact_listen`): check that nothing holds that port any more.
    async fn wait_artifact_port_free(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match TcpListener::bind(&self.artifact_listen) {
                Ok(_) => return,
                Err(e) => assert!(
                    Instant::now() < deadline,
                    "the artifact port {} is still in use: {e}",
                    self.artifact_listen
                ),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for ChildWorker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() && !self.logs.is_empty() {
            eprintln!("{}", self.log_tail(80));
        }
    }
}
