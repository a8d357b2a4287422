//! A running site for end-to-end tests: a Temporal dev server ([`DevServer`]), a bmc-sim fleet on
//! port 0, a SQLite site database and firmware directory in a temp dir (its `site.toml` rendered
//! from a [`SiteToml`]), every host of the fleet registered through `hostfw-store`, and a hostfw
//! worker on its own thread (or, with `external_worker`, none: the test runs [`ChildWorker`]s).
//! Commands go through the real `hostfw` CLI code.
//!
//! Tests call [`Site::start`], drive it with [`Site::cli`], and await conditions with
//! [`Site::wait_for`] (never fixed sleeps).
//!
//! [`ChildWorker`]: crate::ChildWorker

use std::future::Future;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::anyhow;
use clap::Parser;
use hostfw_bmc_sim::{FleetSpec, RunningFleet};
use hostfw_model::SiteConfig;
use hostfw_store::{NewMachine, Store};
use hostfw_workflows::{host_reprovision_workflow_id, HostOutcome, HostReprovisionWorkflow};
use tempfile::TempDir;
use temporalio_client::errors::WorkflowGetResultError;
use temporalio_client::{Client, WorkflowGetResultOptions};

use crate::config::SiteToml;
use crate::fixtures::write_image;
use crate::history::PendingActivity;
use crate::temporal::{DevServer, DevServerOptions, Persistence};
use crate::tools::free_port;
use crate::wait::wait_for;
use crate::worker::WorkerThread;

/// A running site.
pub struct Site {
    pub dir: TempDir,
    pub config_path: PathBuf,
    /// The config as written (the typed builder it was rendered from is [`Site::toml`]).
    pub site: SiteConfig,
    pub toml: SiteToml,
    pub store: Store,
    pub fleet: RunningFleet,
    /// A client of the dev server (a new one after each restart of the server).
    pub client: Client,
    temporal: DevServer,
    worker: WorkerThread,
    /// With `external_worker`: a listener holding the worker's artifact port until
    /// [`crate::ChildWorker::start`] takes it, so no other process picks that port meanwhile.
    artifact_reservation: Mutex<Option<TcpListener>>,
    /// This site's turn among the sites of the process (see [`SiteSpec::exclusive`]).
    _turn: Turn,
}

/// Inputs of [`Site::start`].
#[derive(Default)]
pub struct SiteSpec<'a> {
    /// bmc-sim fleet TOML; `bmc_address` should be `127.0.0.1:0`.
    pub fleet: &'a str,
    /// The site config: settings and catalog ([`SiteToml::default`] when not given). The
    /// Temporal address and the artifact port are set by [`Site::start`].
    pub config: SiteToml,
    /// Firmware images: (path under the firmware dir, applies_to regex, version).
    pub images: &'a [(&'a str, &'a str, &'a str)],
    /// Other files to write, relative to the site directory (scripts, Scout packages); `{SITE}`
    /// in their text becomes the site directory.
    pub files: &'a [(&'a str, &'a str)],
    /// Machines to register as Assigned: (machine id, instance id).
    pub assigned: &'a [(&'a str, &'a str)],
    /// Run a Scout agent serving every host of the fleet.
    pub scout: bool,
    /// Start no in-process worker: the test runs the real `hostfw-worker` binary itself
    /// ([`crate::ChildWorker`]), so it can kill it with SIGKILL and restart it.
    pub external_worker: bool,
    /// Extra `--dynamic-config-value` settings of the dev server (`key=value`), e.g.
    /// `limit.historyCount.suggestContinueAsNew=60`.
    pub temporal_dynamic_config: &'a [&'a str],
    /// Persist the dev server's state in `<site dir>/temporal.db`, so that
    /// [`Site::restart_temporal`] keeps every workflow.
    pub temporal_db: bool,
    /// Run while no other site of this process runs (it waits for those to end, and those started
    /// after it wait for it): for a test that reads a process-wide counter of the worker.
    pub exclusive: bool,
}

/// A shared turn (any number of sites at once) or an exclusive one.
enum Turn {
    Shared(#[allow(dead_code)] tokio::sync::OwnedRwLockReadGuard<()>),
    Exclusive(#[allow(dead_code)] tokio::sync::OwnedRwLockWriteGuard<()>),
}

async fn take_turn(exclusive: bool) -> Turn {
    static TURNS: OnceLock<Arc<tokio::sync::RwLock<()>>> = OnceLock::new();
    let turns = TURNS.get_or_init(|| Arc::new(tokio::sync::RwLock::new(()))).clone();
    if exclusive {
        Turn::Exclusive(turns.write_owned().await)
    } else {
        Turn::Shared(turns.read_owned().await)
    }
}

/// Write a site directory: the firmware images under `firmware/` (path, applies_to regex,
/// version), an empty `scout/`, the other `files` (`{SITE}` in their text becomes `dir`), and
/// `site.toml` from `config`; Scout packages among the files are then signed for the catalog's
/// target versions (see [`sign_scout_packages`]). Returns its path and the config as the worker
/// and the CLI load it.
pub fn write_dir(
    dir: &Path,
    config: &SiteToml,
    images: &[(&str, &str, &str)],
    files: &[(&str, &str)],
) -> anyhow::Result<(PathBuf, SiteConfig)> {
    let firmware = dir.join("firmware");
    std::fs::create_dir_all(&firmware)?;
    std::fs::create_dir_all(dir.join("scout"))?;
    for (rel, applies_to, version) in images {
        write_image(&firmware, rel, applies_to, version);
    }
    for (rel, content) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("a file path has a parent"))?;
        std::fs::write(&path, content.replace("{SITE}", &dir.display().to_string()))?;
    }
    let (path, site) = config.write(dir)?;
    sign_scout_packages(dir, &site)?;
    Ok((path, site))
}

/// The directory holding the site's Scout package signing keys (`scout-signing.key`, `.pub`).
pub fn scout_keys_dir(site_dir: &Path) -> PathBuf {
    site_dir.join("scout-keys")
}

/// Signs every package under `<dir>/scout` as an operator would (`hostfw scout-package sign
/// --version <target>` per package), for the version the catalog of `site` targets for the
/// package's vendor, model (as normalised for the package directory) and component, with a key
/// pair generated in [`scout_keys_dir`] the first time. A package nothing in the catalog targets
/// is an error: no operator signs it.
pub fn sign_scout_packages(dir: &Path, site: &SiteConfig) -> anyhow::Result<()> {
    use hostfw_activities::host::scout_package::normalize_segment;
    use hostfw_activities::host::scout_signing;
    let packages = match scout_signing::packages_at(&dir.join("scout")) {
        Ok(packages) => packages,
        Err(scout_signing::SigningError::NoPackages { .. }) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let keys = scout_keys_dir(dir);
    if !keys.join(scout_signing::PRIVATE_KEY_FILE).exists() {
        scout_signing::keygen(&keys)?;
    }
    let key = scout_signing::load_signing_key(&keys.join(scout_signing::PRIVATE_KEY_FILE))?;
    let catalog = hostfw_model::Catalog::load(site).map_err(|e| anyhow!("{e}"))?;
    for (package_dir, package) in packages {
        let named = |name: &str, segment: &str| normalize_segment(name).is_ok_and(|n| n == segment);
        let version = match package.split('/').collect::<Vec<_>>()[..] {
            [vendor, model, component] => {
                catalog.models().iter().filter(|m| named(&m.vendor, vendor) && named(&m.model, model)).find_map(|m| {
                    m.desired_versions().into_iter().find(|(c, _)| c.as_str() == component).map(|(_, v)| v)
                })
            }
            _ => None,
        };
        let version =
            version.ok_or_else(|| anyhow!("Scout package {package}: no catalog target version to sign it for"))?;
        scout_signing::sign(&key, &package_dir, &scout_signing::SignFor { version, ..Default::default() })?;
    }
    Ok(())
}

/// Register every host of `fleet` and its BMC login (through the store, 64 hosts at a time);
/// `instance(host id)` names the tenant instance of an Assigned host, `None` for a Ready one.
pub async fn register_fleet(
    store: &Store,
    fleet: &RunningFleet,
    instance: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<()> {
    let hosts = fleet.hosts();
    let instance = &instance;
    futures::future::try_join_all(hosts.chunks(64).map(|chunk| async move {
        for host in chunk {
            let instance_id = instance(&host.id);
            store
                .machine_upsert(&NewMachine {
                    id: host.id.clone(),
                    bmc_address: host.base_url.parse()?,
                    vendor: Some(host.vendor.clone()),
                    model: Some(host.model.clone()),
                    state: if instance_id.is_some() {
                        hostfw_model::HostState::Assigned
                    } else {
                        hostfw_model::HostState::Ready
                    },
                    instance_id,
                    labels: None,
                })
                .await?;
            store.credentials_put(&host.id, &host.username, &host.password).await?;
        }
        anyhow::Ok(())
    }))
    .await?;
    Ok(())
}

impl Site {
    pub async fn start(spec: SiteSpec<'_>) -> anyhow::Result<Site> {
        let turn = take_turn(spec.exclusive).await;
        let dir = tempfile::tempdir()?;

        let artifact_port = free_port();
        let artifact_reservation =
            if spec.external_worker { TcpListener::bind(("127.0.0.1", artifact_port)).ok() } else { None };
        let temporal = DevServer::start(DevServerOptions {
            persistence: if spec.temporal_db {
                Persistence::File(dir.path().join("temporal.db"))
            } else {
                Persistence::InMemory
            },
            dynamic_config: spec.temporal_dynamic_config.iter().map(|s| s.to_string()).collect(),
        })
        .await?;
        let client = temporal.client().clone();

        let toml = spec.config.temporal_port(temporal.port()).artifact_port(artifact_port);
        let (config_path, site) = write_dir(dir.path(), &toml, spec.images, spec.files)?;
        let store = Store::open_site(&site).await?;

        let fleet_spec = FleetSpec::from_toml_str(spec.fleet).map_err(|e| anyhow!("{e}"))?;
        let fleet = hostfw_bmc_sim::start(fleet_spec).await.map_err(|e| anyhow!("{e}"))?;
        let assigned = spec.assigned;
        register_fleet(&store, &fleet, |id| assigned.iter().find(|(m, _)| *m == id).map(|(_, i)| i.to_string()))
            .await?;

        let scout_hosts = if spec.scout { fleet.hosts().into_iter().map(|h| h.id).collect() } else { Vec::new() };
        let worker =
            if spec.external_worker { WorkerThread::none() } else { WorkerThread::spawn(site.clone(), scout_hosts) };
        Ok(Site {
            dir,
            config_path,
            site,
            toml,
            store,
            fleet,
            client,
            temporal,
            worker,
            artifact_reservation: Mutex::new(artifact_reservation),
            _turn: turn,
        })
    }

    /// The listener holding the site worker's artifact port (once).
    pub(crate) fn take_artifact_reservation(&self) -> Option<TcpListener> {
        self.artifact_reservation.lock().unwrap().take()
    }

    /// The dev server (its port, its process).
    pub fn temporal(&self) -> &DevServer {
        &self.temporal
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
        // On the site, against its database (break-glass `--local`), unless the command names the API.
        if !args.iter().any(|a| *a == "-a" || *a == "--api") {
            argv.push("--local".to_string());
        }
        argv.extend(args.iter().map(|s| s.to_string()));
        let cli = match hostfw_starter::cli::Cli::try_parse_from(argv) {
            Ok(cli) => cli,
            Err(e) => return (Err(e.into()), String::new()),
        };
        // Boxed: the CLI's future is large, and a test awaiting many commands would otherwise
        // carry it on its own (2 MiB) stack.
        hostfw_starter::output::capture(Box::pin(hostfw_starter::run(cli))).await
    }

    /// Await the end of a host's workflow.
    pub async fn host_result(&self, machine_id: &str) -> Result<HostOutcome, WorkflowGetResultError> {
        let handle =
            self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
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
    pub async fn record_workflow_history<W: temporalio_common::HasWorkflowDefinition>(
        &self,
        workflow_id: &str,
        name: &str,
    ) {
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
        let handle =
            self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        handle.query(HostReprovisionWorkflow::status, (), temporalio_client::WorkflowQueryOptions::default()).await.ok()
    }

    /// The `status` query of the Machine Update Manager: its pass count and last pass.
    pub async fn manager_status(&self) -> Option<hostfw_workflows::machine_update_manager::ManagerStatus> {
        let handle = self.client.get_workflow_handle::<hostfw_workflows::MachineUpdateManagerWorkflow>(
            hostfw_workflows::names::MACHINE_UPDATE_MANAGER_ID,
        );
        handle
            .query(
                hostfw_workflows::MachineUpdateManagerWorkflow::status,
                (),
                temporalio_client::WorkflowQueryOptions::default(),
            )
            .await
            .ok()
    }

    /// Wait until the host's recorded substate is `substate`. `within` is a deadline for the
    /// condition, sized for the whole suite on a loaded 2-core machine, never a timing claim.
    pub async fn wait_substate(&self, machine_id: &str, substate: &str, within: Duration) {
        self.wait_for(&format!("{machine_id} to reach {substate}"), within, || async {
            let m = self.store.machine_get(machine_id).await.ok()??;
            (m.substate.map(|s| s.as_str()) == Some(substate)).then_some(())
        })
        .await
    }

    /// Poll `check` every 100 ms until it returns `Some`; panics after `within`.
    pub async fn wait_for<T, F, Fut>(&self, what: &str, within: Duration, check: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        wait_for(what, within, Duration::from_millis(100), check).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Stop the Temporal dev server and start it again on the same port (and, with
    /// `temporal_db`, the same database file): what a server restart looks like to workers.
    pub async fn restart_temporal(&mut self) {
        self.temporal.restart().await;
        self.client = self.temporal.client().clone();
    }

    /// Stop the Temporal dev server (workers lose it: an outage). [`Site::start_temporal`] brings
    /// it back on the same port and, with `temporal_db`, the same database file.
    pub async fn stop_temporal(&mut self) {
        self.temporal.stop().await;
    }

    /// Start the dev server again after [`Site::stop_temporal`] or [`Site::kill_temporal_9`].
    pub async fn start_temporal(&mut self) {
        self.temporal.start_again().await;
        self.client = self.temporal.client().clone();
    }

    /// SIGKILL the Temporal dev server (no graceful shutdown: what a crashed server or host looks
    /// like) and wait until its port is free. [`Site::start_temporal`] brings it back.
    pub async fn kill_temporal_9(&mut self) {
        self.temporal.kill_9().await;
    }

    /// Stop the worker, the simulators and the dev server.
    pub async fn shutdown(self) {
        let _ = self.worker.stop().await;
        self.temporal.shutdown().await;
    }

    /// The host's substate as recorded in the site database.
    pub async fn substate(&self, machine_id: &str) -> Option<String> {
        self.store.machine_get(machine_id).await.ok()??.substate.map(|s| s.to_string())
    }

    /// The ids of the workflows a visibility query lists (open and closed), e.g.
    /// `HostfwRetriesExhausted = true`.
    pub async fn workflow_ids(&self, query: &str) -> Vec<String> {
        let mut list =
            self.client.list_workflows(query, temporalio_client::WorkflowListOptions::builder().limit(1000).build());
        let mut ids = Vec::new();
        while let Some(w) = futures::StreamExt::next(&mut list).await {
            ids.push(w.expect("workflow listed").id().to_string());
        }
        ids
    }

    /// Whether the host's workflow is still running (read from the server: needs no worker).
    pub async fn workflow_running(&self, machine_id: &str) -> bool {
        let handle =
            self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        let description =
            handle.describe(temporalio_client::WorkflowDescribeOptions::default()).await.expect("workflow described");
        let status = description.raw_description.workflow_execution_info.as_ref().map(|i| i.status).unwrap_or_default();
        status == temporalio_common::protos::temporal::api::enums::v1::WorkflowExecutionStatus::Running as i32
    }

    /// The host workflow's pending activities (read from the server: needs no worker).
    pub async fn pending_activities(&self, machine_id: &str) -> Vec<PendingActivity> {
        let handle =
            self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
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
        let handle =
            self.client.get_workflow_handle::<HostReprovisionWorkflow>(host_reprovision_workflow_id(machine_id));
        let bytes = handle
            .fetch_history(temporalio_client::WorkflowFetchHistoryOptions::default())
            .to_json()
            .await
            .expect("history fetched");
        serde_json::from_slice(&bytes).expect("history JSON")
    }
}
