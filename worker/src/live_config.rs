//! Live configuration of a running worker: on SIGHUP, and on every reload request stored in the
//! site database (`hostfw config reload`, for every worker process of the site), re-read the site
//! config file and put its live keys in effect without a restart.
//!
//! A file that does not load is refused whole with its error; a file that changes any key that
//! needs a restart (`hostfw_model::config::reload_kind`) is refused whole too, naming each such
//! key: the worker keeps its running config. Every answer is logged and recorded in the site
//! database per worker identity (`config_reload_results`), and each poll marks the worker present
//! (`worker_presence`) so the CLI knows whom to wait for.
//!
//! Owns the reload loop and the decision applied / unchanged / refused / invalid. It must not
//! decide which keys are live (the model's table does), hold a config of its own (the `Deps`'
//! `LiveSite` is the one the activities read), or stop the worker when the database is away (the
//! reload then happens all the same, unrecorded).

use std::path::PathBuf;

use hostfw_activities::{Deps, LiveSite};
use hostfw_model::config::ReloadPlan;
use hostfw_model::{error_chain, SiteConfig};
use hostfw_store::{ReloadAnswer, ReloadOutcome, ReloadRequest, Store};
use tokio::sync::watch;

use crate::tuning::RELOAD_POLL_EVERY;

/// The actor of the request a worker stores for a SIGHUP it received.
pub const SIGHUP_ACTOR: &str = "signal:SIGHUP";

/// Why a refused reload was refused, as logged and stored.
pub const NEEDS_RESTART: &str = "needs a restart";

/// This worker process's identity in the reload tables: `<hostname>/<pid>`.
pub fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown-host".to_string());
    format!("{host}/{}", std::process::id())
}

/// What one re-read of the file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    pub outcome: ReloadOutcome,
    /// Applied: the live keys that changed; refused: the keys that need a restart.
    pub keys: Vec<String>,
    /// Invalid: the load error; refused: [`NEEDS_RESTART`].
    pub problem: Option<String>,
}

/// Re-reads one config file into one running worker.
#[derive(Clone)]
pub struct LiveConfig {
    path: PathBuf,
    site: LiveSite,
    store: Store,
    identity: String,
    started_at_ms: i64,
}

impl LiveConfig {
    /// Reloads `path` (the file the worker started from) into `deps.site`, answering as
    /// `identity`.
    pub fn new(path: PathBuf, deps: &Deps, identity: String) -> LiveConfig {
        LiveConfig {
            path,
            site: deps.site.clone(),
            store: deps.store.clone(),
            identity,
            started_at_ms: hostfw_store::now_ms(),
        }
    }

    /// This worker's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Re-read the file now and put it in effect when only live keys changed. Logs the outcome.
    pub fn reload(&self, why: &str) -> Reloaded {
        let new = match SiteConfig::load(&self.path) {
            Ok(new) => new,
            Err(e) => {
                let problem = error_chain(&e);
                tracing::error!(file = %self.path.display(), why, error = %problem, "config reload refused: the file does not load; the running config is kept");
                return Reloaded { outcome: ReloadOutcome::Invalid, keys: Vec::new(), problem: Some(problem) };
            }
        };
        let plan = ReloadPlan::between(&self.site.current(), &new);
        if !plan.restart.is_empty() {
            let keys = plan.restart.join(", ");
            tracing::warn!(file = %self.path.display(), why, keys = %keys, "config reload refused: {keys} {NEEDS_RESTART}; the running config is kept");
            return Reloaded {
                outcome: ReloadOutcome::Refused,
                keys: plan.restart,
                problem: Some(NEEDS_RESTART.into()),
            };
        }
        if plan.live.is_empty() {
            tracing::info!(file = %self.path.display(), why, "config reload: nothing changed");
            return Reloaded { outcome: ReloadOutcome::Unchanged, keys: Vec::new(), problem: None };
        }
        self.site.replace(new);
        tracing::info!(file = %self.path.display(), why, keys = %plan.live.join(", "), "config reload applied");
        Reloaded { outcome: ReloadOutcome::Applied, keys: plan.live, problem: None }
    }

    /// Reload for `request` and record the answer.
    async fn answer(&self, request: &ReloadRequest) {
        let why = format!("reload request {} by {}", request.id, request.actor);
        let done = self.reload(&why);
        let answer = ReloadAnswer {
            request_id: request.id,
            worker: self.identity.clone(),
            outcome: done.outcome,
            keys: done.keys,
            problem: done.problem,
            answered_at_ms: 0,
        };
        if let Err(e) = self.store.config_reload_answer(&answer, &format!("worker:{}", self.identity)).await {
            tracing::warn!(request = request.id, error = %error_chain(&e), "could not record the config reload's result");
        }
    }

    /// A SIGHUP: stored as a request for this worker alone (so its result is readable like any
    /// other), then answered. Without the database the reload happens all the same.
    async fn on_signal(&self) {
        match self.store.config_reload_request(SIGHUP_ACTOR, Some(&self.identity)).await {
            Ok(request) => self.answer(&request).await,
            Err(e) => {
                tracing::warn!(error = %error_chain(&e), "could not record the SIGHUP reload request; reloading anyway");
                self.reload("SIGHUP");
            }
        }
    }

    /// One poll: mark this worker present and answer the requests for it after `after` (the
    /// newest request when the worker started, read at the first poll that reaches the database).
    async fn poll(&self, after: &mut Option<i64>) {
        if let Err(e) = self.store.worker_seen(&self.identity, self.started_at_ms).await {
            tracing::debug!(error = %error_chain(&e), "could not mark this worker present");
        }
        let from = match *after {
            Some(id) => id,
            None => match self.store.config_reload_last_id().await {
                Ok(id) => *after.insert(id),
                Err(e) => {
                    tracing::debug!(error = %error_chain(&e), "could not read the reload requests");
                    return;
                }
            },
        };
        match self.store.config_reload_pending(&self.identity, from).await {
            Ok(requests) => {
                for request in &requests {
                    self.answer(request).await;
                    *after = Some(request.id.max(after.unwrap_or(0)));
                }
            }
            Err(e) => tracing::debug!(error = %error_chain(&e), "could not read the reload requests"),
        }
    }

    /// Answer SIGHUPs (`hangup`: the stream the caller registered at start, so a SIGHUP never
    /// kills the worker) and stored requests until `stop` turns true.
    pub async fn run(self, hangup: Option<tokio::signal::unix::Signal>, mut stop: watch::Receiver<bool>) {
        let mut hangup = hangup;
        let mut after = None;
        let mut tick = tokio::time::interval(RELOAD_POLL_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let signal = async {
                match hangup.as_mut() {
                    Some(h) => h.recv().await,
                    None => std::future::pending().await,
                }
            };
            let stopping = async {
                let _ = stop.wait_for(|s| *s).await;
            };
            tokio::select! {
                () = stopping => return,
                received = signal => match received {
                    Some(()) => self.on_signal().await,
                    None => hangup = None,
                },
                _ = tick.tick() => self.poll(&mut after).await,
            }
        }
    }
}
