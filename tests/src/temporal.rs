//! A Temporal dev server: the pinned `temporal` CLI (`server start-dev`) on a free port, with the
//! workflows' search attributes registered, in memory or on a SQLite file. It can be stopped and
//! started again on the same port (and file), or SIGKILLed, as the durability tests need.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context};
use hostfw_workflows::search_attributes;
use temporalio_client::Client;
use temporalio_sdk::testing::{EphemeralExe, LocalServer, LocalWorkflowEnvironmentOptions, WorkflowEnvironment};

use crate::tools::{free_port, listener_pid, temporal_cli};
use crate::wait::wait_for;

/// Where the dev server keeps its state.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Persistence {
    /// In memory: lost when the server stops (and its writes cost nothing to measure).
    #[default]
    InMemory,
    /// A SQLite file (`--db-filename`): a restarted server keeps every workflow.
    File(PathBuf),
}

/// How the dev server is started; [`DevServer::start_again`] starts it again the same way.
#[derive(Clone, Debug, Default)]
pub struct DevServerOptions {
    pub persistence: Persistence,
    /// Extra `--dynamic-config-value` settings (`key=value`), e.g.
    /// `limit.historyCount.suggestContinueAsNew=60`.
    pub dynamic_config: Vec<String>,
}

/// A running (or stopped) dev server and a client connected to it.
pub struct DevServer {
    env: Option<WorkflowEnvironment<LocalServer>>,
    client: Client,
    port: u16,
    extra_args: Vec<String>,
    db: Option<PathBuf>,
}

impl DevServer {
    /// Start a dev server on a free port.
    pub async fn start(options: DevServerOptions) -> anyhow::Result<DevServer> {
        let mut extra_args =
            vec!["--dynamic-config-value".to_string(), "history.transferProcessorMaxPollRPS=10000".to_string()];
        for value in &options.dynamic_config {
            extra_args.push("--dynamic-config-value".to_string());
            extra_args.push(value.clone());
        }
        for (name, kind) in search_attributes::REGISTRATION {
            extra_args.push("--search-attribute".into());
            extra_args.push(format!("{name}={kind}"));
        }
        let db = match options.persistence {
            Persistence::InMemory => None,
            Persistence::File(path) => Some(path),
        };
        let port = free_port();
        let env = launch(port, &extra_args, &db).await?;
        Ok(DevServer { client: env.client().clone(), env: Some(env), port, extra_args, db })
    }

    /// A client of the server (a new one after each restart).
    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The server's process id (the process listening on its port).
    pub fn pid(&self) -> Option<u32> {
        listener_pid(self.port)
    }

    /// How many workflows are running (`temporal workflow count`).
    pub fn running_workflows(&self) -> anyhow::Result<u64> {
        let out = std::process::Command::new(temporal_cli())
            .args(["workflow", "count", "--address", &self.address(), "--query", "ExecutionStatus='Running'"])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .filter_map(|w| w.parse::<u64>().ok())
            .next()
            .ok_or_else(|| anyhow!("unexpected `temporal workflow count` output: {text}"))
    }

    /// A workflow's current details as the Web UI shows them (`temporal workflow metadata`, the
    /// `__temporal_workflow_metadata` query): the markdown the workflow last set, "" if none.
    pub fn current_details(&self, workflow_id: &str) -> anyhow::Result<String> {
        let out = std::process::Command::new(temporal_cli())
            .args(["workflow", "metadata", "--address", &self.address(), "--workflow-id", workflow_id, "-o", "json"])
            .output()?;
        if !out.status.success() {
            return Err(anyhow!("temporal workflow metadata: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        // `{"queryResult": [{"definition": ..., "currentDetails": "..."}]}`
        Ok(doc["queryResult"][0]["currentDetails"].as_str().unwrap_or_default().to_string())
    }

    /// Stop the server gracefully (workers lose it: an outage).
    pub async fn stop(&mut self) {
        if let Some(env) = self.env.take() {
            env.shutdown().await.expect("dev server stopped");
        }
    }

    /// Start the server again after [`DevServer::stop`] or [`DevServer::kill_9`], on the same port
    /// and (with [`Persistence::File`]) the same database file.
    pub async fn start_again(&mut self) {
        assert!(self.env.is_none(), "start_again: the dev server is running");
        let env = launch(self.port, &self.extra_args, &self.db).await.expect("dev server restarted");
        self.client = env.client().clone();
        self.env = Some(env);
    }

    /// Stop and start again.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.start_again().await;
    }

    /// SIGKILL the server (no graceful shutdown: what a crashed server or host looks like) and
    /// wait until its port is free.
    pub async fn kill_9(&mut self) {
        let port = self.port;
        let pid = listener_pid(port).unwrap_or_else(|| panic!("no process listens on the dev server's port {port}"));
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        assert!(comm.trim().starts_with("temporal"), "the process on port {port} is {comm:?}, not the dev server");
        let status = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().expect("kill runs");
        assert!(status.success(), "kill -9 {pid} failed: {status}");
        eprintln!("killed the Temporal dev server {pid} with SIGKILL");
        wait_for("the dev server's port to be free", Duration::from_secs(30), Duration::from_millis(100), || async {
            listener_pid(port).is_none().then_some(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        // The handle's server is dead; dropping it reaps what is left.
        drop(self.env.take());
    }

    /// Stop the server; errors are ignored.
    pub async fn shutdown(mut self) {
        if let Some(env) = self.env.take() {
            let _ = env.shutdown().await;
        }
    }
}

/// How many times a dev server start is tried: the SDK gives the server 5 s to answer, which a
/// loaded 2-core machine (a build beside the tests) sometimes misses.
const START_ATTEMPTS: u32 = 3;

async fn launch(
    port: u16,
    extra_args: &[String],
    db: &Option<PathBuf>,
) -> anyhow::Result<WorkflowEnvironment<LocalServer>> {
    let mut attempt = 1;
    loop {
        let options = LocalWorkflowEnvironmentOptions::builder()
            .server_executable(EphemeralExe::ExistingPath(temporal_cli().display().to_string()))
            .port(port)
            .extra_args(extra_args.to_vec())
            .maybe_database_filename(db.clone())
            .build();
        match WorkflowEnvironment::start_local(options).await {
            Ok(env) => return Ok(env),
            Err(e) if attempt < START_ATTEMPTS => {
                eprintln!(
                    "the Temporal dev server on port {port} did not start (attempt {attempt}): {e}; trying again"
                );
                // The failed server process is killed on drop; let its port go.
                let _ = wait_for(
                    "the dev server's port to be free",
                    Duration::from_secs(10),
                    Duration::from_millis(100),
                    || async { listener_pid(port).is_none().then_some(()) },
                )
                .await;
                attempt += 1;
            }
            Err(e) => return Err(e).context("starting the Temporal dev server"),
        }
    }
}
