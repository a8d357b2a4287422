//! A real Prometheus server for the tests: the `prometheus` binary on a free loopback port, a temp
//! storage directory, scrape and evaluation intervals of one second, given rule files and scrape
//! targets (job `hostfw-worker`). Dropping it kills the process.
//!
//! The binary comes from the Debian package `prometheus` (`scripts/tools.sh` installs it); when it
//! is absent, [`Prometheus::start`] returns `None` and the caller skips.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde_json::Value;
use tempfile::TempDir;

use crate::tools::free_port;
use crate::wait::wait_for;

/// The `prometheus` binary on the PATH, if installed.
pub fn prometheus_bin() -> Option<PathBuf> {
    which("prometheus")
}

/// The `promtool` binary on the PATH, if installed.
pub fn promtool_bin() -> Option<PathBuf> {
    which("promtool")
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// A running Prometheus.
pub struct Prometheus {
    child: Child,
    addr: String,
    http: reqwest::Client,
    _dir: TempDir,
}

impl Prometheus {
    /// Start Prometheus loading `rule_files` and scraping `targets` (`host:port`, path `/metrics`)
    /// as job `hostfw-worker`; ready when it answers `/-/ready`. `None` when not installed.
    pub async fn start(rule_files: &[&Path], targets: &[String]) -> anyhow::Result<Option<Prometheus>> {
        let Some(bin) = prometheus_bin() else { return Ok(None) };
        let dir = TempDir::new()?;
        let rules: Vec<String> = rule_files
            .iter()
            .map(|p| std::fs::canonicalize(p).map(|p| format!("  - {:?}", p.display().to_string())))
            .collect::<Result<_, _>>()
            .context("rule file")?;
        let targets: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n  scrape_timeout: 1s\nrule_files:\n{}\n\
             scrape_configs:\n  - job_name: hostfw-worker\n    static_configs:\n      - targets: [{}]\n",
            rules.join("\n"),
            targets.join(", ")
        );
        let config_path = dir.path().join("prometheus.yml");
        std::fs::write(&config_path, config)?;
        let addr = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(dir.path().join("prometheus.log"))?;
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting prometheus")?;
        let mut prom = Prometheus { child, addr, http: reqwest::Client::new(), _dir: dir };
        let ready = wait_for("prometheus /-/ready", Duration::from_secs(30), Duration::from_millis(100), || async {
            let url = format!("http://{}/-/ready", prom.addr);
            let ok = prom.http.get(url).send().await.ok()?.status().is_success();
            ok.then_some(())
        })
        .await;
        if let Err(e) = ready {
            let exited = prom.child.try_wait().ok().flatten();
            bail!("{e} (exited: {exited:?})\n{}", prom.log());
        }
        Ok(Some(prom))
    }

    /// `host:port` of its HTTP API.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("prometheus.log")).unwrap_or_default()
    }

    async fn api(&self, path: &str, query: &[(&str, &str)]) -> anyhow::Result<Value> {
        let url = format!("http://{}{path}", self.addr);
        let body: Value = self.http.get(url).query(query).send().await?.json().await?;
        if body["status"] != "success" {
            bail!("{path} {query:?}: {body}");
        }
        Ok(body["data"].clone())
    }

    /// `/api/v1/alerts`: every pending or firing alert.
    pub async fn alerts(&self) -> anyhow::Result<Vec<Value>> {
        let data = self.api("/api/v1/alerts", &[]).await?;
        data["alerts"].as_array().cloned().ok_or_else(|| anyhow!("no alerts array: {data}"))
    }

    /// The alert `name` when it is firing.
    pub async fn firing(&self, name: &str) -> Option<Value> {
        let alerts = self.alerts().await.ok()?;
        alerts.into_iter().find(|a| a["labels"]["alertname"] == name && a["state"] == "firing")
    }

    /// `/api/v1/query` at now: the `data` object, or the server's error for a bad expression.
    pub async fn query(&self, expr: &str) -> anyhow::Result<Value> {
        self.api("/api/v1/query", &[("query", expr)]).await
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            eprintln!("--- prometheus log (last lines) ---\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
    }
}
