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
    worker: WorkerThread,
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
        let mut extra_args = vec![
            "--dynamic-config-value".to_string(),
            "history.transferProcessorMaxPollRPS=10000".to_string(),
        ];
        for (name, kind) in search_attributes::REGISTRATION {
            extra_args.push("--search-attribute".into());
            extra_args.push(format!("{name}={kind}"));
        }
        let options = LocalWorkflowEnvironmentOptions::builder()
            .server_executable(EphemeralExe::ExistingPath(temporal_cli().display().to_string()))
            .port(temporal_port)
            .extra_args(extra_args)
            .build();
        let env = WorkflowEnvironment::start_local(options).await.context("starting the Temporal dev server")?;
        let client = env.client().clone();

        let config = format!(
            r#"
[site]
name = "e2e"
database_url = "sqlite://site.db"
data_dir = "data"

[temporal]
address = "http://127.0.0.1:{temporal_port}"
namespace = "default"
task_queue = "hostfw-e2e"

[worker]
metrics_listen = "127.0.0.1:0"
artifact_listen = "127.0.0.1:{artifact_port}"
artifact_base_url = "http://127.0.0.1:{artifact_port}"

[redfish]
timeout = "5s"
task_timeout = "2m"

[host_reprovision]
{host_reprovision}

[firmware_global]
firmware_directory = "firmware"
scout_scripts_directory = "scout"
host_firmware_upgrade_retry_interval = "1s"
{firmware_global}

[machine_updater]
{machine_updater}

{catalog}
"#,
            host_reprovision = with_defaults(
                spec.host_reprovision,
                &[("verify_poll_interval", "\"1s\""), ("verify_max_polls", "20"), ("task_poll_interval", "\"1s\""), ("bmc_healthy_reads", "2")],
            ),
            firmware_global = spec.firmware_global,
            machine_updater = spec.machine_updater,
            catalog = spec.catalog,
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
                    bmc_address: host.addr.to_string(),
                    vendor: Some(host.vendor.clone()),
                    model: Some(host.model.clone()),
                    state: if instance.is_some() { "Assigned" } else { "Ready" }.to_string(),
                    instance_id: instance,
                })
                .await?;
            store.credentials_put(&host.id, &host.username, &host.password).await?;
        }

        let scout_hosts = if spec.scout { fleet.hosts().into_iter().map(|h| h.id).collect() } else { Vec::new() };
        let worker = if spec.external_worker {
            WorkerThread { stop: None, join: None }
        } else {
            spawn_worker(site.clone(), scout_hosts)
        };
        Ok(Site { dir, config_path, site, store, fleet, client, env: Some(env), worker })
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
        if std::env::var("HOSTFW_RECORD_HISTORIES").as_deref() != Ok("1") {
            return;
        }
        let handle = self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
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
            (m.substate.as_deref() == Some(substate)).then_some(())
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
            let deps = hostfw_worker::build_deps(&site, settings).await?;
            let client = hostfw_worker::connect(&site, "hostfw-e2e-worker").await?;
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
