//! The worker under test, two ways:
//! - [`WorkerThread`]: the real worker (artifact server included, and optionally a Scout agent for
//!   some hosts) on its own thread of this process; dropping it stops it;
//! - [`ChildWorker`]: the real `hostfw-worker` binary as a child process, which a test can SIGKILL
//!   and start again; dropping it kills it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use hostfw_model::SiteConfig;

use crate::config::SiteToml;
use crate::site::Site;
use crate::tools::{free_port, worker_bin};

/// The real worker (artifact server included) on its own thread: the SDK's worker future is not
/// `Send`, so it gets a current-thread runtime of its own. Dropping it asks the worker to stop.
pub struct WorkerThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    join: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl WorkerThread {
    /// Start the worker of `site`. `scout_hosts`: machines whose Scout agent runs beside it (one
    /// agent for all, as in the demo).
    pub fn spawn(site: SiteConfig, scout_hosts: Vec<String>) -> WorkerThread {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let join = std::thread::spawn(move || -> anyhow::Result<()> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, async move {
                let settings = hostfw_activities::ActivitySettings::from_site(&site);
                let store = hostfw_store::Store::open_site(&site).await?;
                let (_addr, _server) = hostfw_worker::serve_artifacts(
                    settings.artifact_root.clone(),
                    settings.scout_scripts_dir.clone(),
                    &site.worker.artifact_listen.to_string(),
                    settings.artifact_urls(store.site_key()),
                )
                .await?;
                let client = hostfw_worker::connect(&site, "hostfw-kit-worker").await?;
                let deps = hostfw_activities::Deps::open(&site, store, Some(client.clone())).await?;
                let (stop_tx2, stop_rx2) = tokio::sync::oneshot::channel::<()>();
                let worker = hostfw_worker::run_worker(client.clone(), &site.temporal.task_queue, deps, async move {
                    let _ = stop_rx.await;
                    let _ = stop_tx2.send(());
                });
                if scout_hosts.is_empty() {
                    return worker.await;
                }
                let trusted = crate::site::scout_keys_dir(&site.config_dir())
                    .join(hostfw_activities::host::scout_signing::PUBLIC_KEY_FILE);
                let settings = hostfw_scout::ScoutSettings {
                    trusted_key: Some(hostfw_scout::TrustedKey::from_file(&trusted).map_err(anyhow::Error::msg)?),
                    ..hostfw_scout::ScoutSettings::default()
                };
                let scout = hostfw_scout::run_agent_with(client, scout_hosts, settings, async move {
                    let _ = stop_rx2.await;
                });
                let (w, s) = futures::join!(worker, scout);
                w.and(s)
            })
        });
        WorkerThread { stop: Some(stop_tx), join: Some(join) }
    }

    /// A worker that is not running (the site's worker is a [`ChildWorker`]).
    pub fn none() -> WorkerThread {
        WorkerThread { stop: None, join: None }
    }

    /// Stop the worker gracefully and wait for its thread; its result.
    pub async fn stop(mut self) -> anyhow::Result<()> {
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
    /// Extra environment variables of the process.
    env: Vec<(String, String)>,
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
            reservation: site.take_artifact_reservation(),
            child: None,
            logs: Vec::new(),
            env: Vec::new(),
        };
        w.spawn().await.unwrap_or_else(|e| panic!("{e}"));
        w
    }

    /// Start `bin --config <config>` with its logs in `dir`, and wait until it is connected to
    /// Temporal; an error (with the tail of its log) when it exits or is not ready in time.
    pub async fn start_config(bin: PathBuf, config: &Path, dir: &Path) -> anyhow::Result<ChildWorker> {
        let site = SiteConfig::load(config).map_err(|e| anyhow!("{}: {e}", config.display()))?;
        let mut w = ChildWorker {
            name: String::new(),
            bin,
            config: config.to_path_buf(),
            dir: dir.to_path_buf(),
            artifact_listen: site.worker.artifact_listen.clone(),
            reservation: None,
            child: None,
            logs: Vec::new(),
            env: Vec::new(),
        };
        w.spawn().await?;
        Ok(w)
    }

    /// Start another worker process for `site` beside the one [`ChildWorker::start`] runs (same
    /// task queue, site database and firmware directory), named `name`: it gets its own artifact
    /// port (reserved here, like the site's) in its own config file `<site dir>/site-<name>.toml`,
    /// and its own log files `worker-<name>-<n>.log`. Its metrics port is picked by the system.
    pub async fn start_extra(site: &Site, name: &str) -> ChildWorker {
        ChildWorker::start_extra_with(site, name, site.toml.clone(), &[]).await
    }

    /// [`ChildWorker::start_extra`] with its own config `toml` (the site's, changed: same
    /// Temporal, database and firmware directory) and extra environment variables `env`.
    pub async fn start_extra_with(site: &Site, name: &str, toml: SiteToml, env: &[(&str, &str)]) -> ChildWorker {
        let port = free_port();
        let reservation = TcpListener::bind(("127.0.0.1", port)).ok();
        let path = site.dir.path().join(format!("site-{name}.toml"));
        std::fs::write(&path, toml.artifact_port(port).render()).expect("extra worker config written");
        let mut w = ChildWorker {
            name: name.to_string(),
            bin: worker_bin(),
            config: path,
            dir: site.dir.path().to_path_buf(),
            artifact_listen: format!("127.0.0.1:{port}"),
            reservation,
            child: None,
            logs: Vec::new(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        };
        w.spawn().await.unwrap_or_else(|e| panic!("{e}"));
        w
    }

    /// Write `toml` (with this worker's artifact port) over this worker's config file and send
    /// SIGHUP: the running worker re-reads it (live keys applied, others refused, as logged).
    pub fn reload_with(&self, toml: SiteToml) {
        let port: u16 = self.artifact_listen.rsplit(':').next().and_then(|p| p.parse().ok()).expect("artifact port");
        std::fs::write(&self.config, toml.artifact_port(port).render()).expect("worker config rewritten");
        self.signal("-HUP");
    }

    /// SIGTERM the worker (a graceful stop: running activities finish first) and wait until it
    /// has exited; its exit status.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            if let Some(status) = self.child.as_mut().expect("terminate: no worker process").try_wait().unwrap() {
                self.child = None;
                eprintln!("worker exited after SIGTERM: {status}");
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the worker did not exit within 300 s of SIGTERM\n{}",
                self.log_tail(60)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn signal(&self, which: &str) {
        let pid = self.pid().expect("no worker process running").to_string();
        let status = std::process::Command::new("kill").args([which, &pid]).status().expect("kill runs");
        assert!(status.success(), "kill {which} {pid}");
    }

    /// Start the worker again after [`ChildWorker::kill_9`].
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "restart: the previous worker process is still running; kill it first");
        self.spawn().await.unwrap_or_else(|e| panic!("{e}"));
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
        format!(
            "--- last {lines} lines of the worker log ({}) ---\n{tail}\n--- end of worker log ---",
            files.join(", ")
        )
    }

    async fn spawn(&mut self) -> anyhow::Result<()> {
        self.reservation = None;
        self.wait_artifact_port_free().await?;
        let prefix = if self.name.is_empty() { "worker".to_string() } else { format!("worker-{}", self.name) };
        let log_path = self.dir.join(format!("{prefix}-{}.log", self.logs.len() + 1));
        let log = std::fs::File::create(&log_path)?;
        let child = std::process::Command::new(&self.bin)
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            // The site config decides where Temporal is, not the caller's environment.
            .env_remove("TEMPORAL_ADDRESS")
            .env_remove("TEMPORAL_NAMESPACE")
            .env_remove("HOSTFW_CONFIG")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| anyhow!("cannot start {}: {e}", self.bin.display()))?;
        eprintln!("started worker {} (log {})", child.id(), log_path.display());
        self.child = Some(child);
        self.logs.push(log_path.clone());
        let deadline = Instant::now() + WORKER_READY_WITHIN;
        loop {
            if std::fs::read_to_string(&log_path).unwrap_or_default().contains(WORKER_READY_LINE) {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.as_mut().unwrap().try_wait() {
                self.child = None;
                anyhow::bail!("the worker exited ({status}) before it was ready\n{}", self.log_tail(60));
            }
            if Instant::now() >= deadline {
                anyhow::bail!("the worker was not ready within {WORKER_READY_WITHIN:?}\n{}", self.log_tail(60));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The artifact server of a new process listens where the old one did (the site config's
    /// `artifact_listen`): check that nothing holds that port any more.
    async fn wait_artifact_port_free(&self) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match TcpListener::bind(&self.artifact_listen) {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    anyhow::bail!("the artifact port {} is still in use: {e}", self.artifact_listen)
                }
                Err(_) => {}
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
