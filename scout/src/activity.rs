//! The Scout activity as Temporal sees it: binds `run_upgrade` to the contract
//! `hostfw_workflows::scout::scout_defs::RunUpgrade`, heartbeats while the task runs, turns a
//! cancellation into killing the script and reporting `Cancelled`, and runs each task id at most
//! once (the activity is retried, the script is not idempotent):
//!
//! - attempts of one task in this agent take turns; a later one waits for the earlier one;
//! - a task whose record holds a result reports that result and runs nothing;
//! - a task started by an agent process that is gone (killed, restarted) reports an honest
//!   failure with an unknown outcome, after waiting for its script if that still runs (killing it
//!   once past its execution timeout, as the dead agent would have); the workflow then judges the
//!   host by its inventory. Only a task whose script had surely not started yet runs again.
//!
//! The records are [`crate::ledger`]'s.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hostfw_workflows::scout::{scout_defs, ScoutResult, ScoutTask};
use hostfw_workflows::step_failure::{failed_step, SCRIPT_FAILED};
use temporalio_common::error::ApplicationFailure;
use temporalio_common::ActivityError;
use temporalio_macros::activities;
use temporalio_sdk::activities::ActivityContext;
use tokio::sync::watch;
use tracing::Instrument;

use crate::error::ScoutError;
use crate::ledger::{Ledger, TaskRecord, KEEP_RECORDS};
use crate::process::ProcessId;
use crate::settings::ScoutSettings;
use crate::upgrade::{execute, TaskContext};
use hostfw_script_runner::process::kill_group;
use hostfw_script_runner::ScriptEvent;

/// Failure type of the agent's own errors; retried by the workflow's retry policy.
pub const AGENT_FAILURE_TYPE: &str = "ScoutAgent";

/// Scout's activities for one machine (one instance per machine's task queue).
pub struct ScoutActivitiesImpl {
    machine_id: String,
    settings: ScoutSettings,
    http: reqwest::Client,
    ledger: Ledger,
    /// Tells this instance's records from those of other instances and earlier processes.
    instance: String,
    /// One turn per task id among this instance's running attempts.
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl ScoutActivitiesImpl {
    /// The activities of the Scout serving `machine_id`.
    pub fn new(machine_id: impl Into<String>, settings: ScoutSettings) -> Result<Self, ScoutError> {
        let http = reqwest::Client::builder().build().map_err(|source| ScoutError::HttpClient { source })?;
        let ledger = Ledger::new(&settings.state_dir);
        let pruned = ledger.prune(KEEP_RECORDS);
        if pruned > 0 {
            tracing::info!(pruned, "removed old task records");
        }
        Ok(ScoutActivitiesImpl {
            machine_id: machine_id.into(),
            settings,
            http,
            ledger,
            instance: uuid::Uuid::new_v4().to_string(),
            turns: Mutex::new(HashMap::new()),
        })
    }

    /// The machine this instance serves.
    pub fn machine_id(&self) -> &str {
        &self.machine_id
    }
}

#[activities]
impl ScoutActivitiesImpl {
    /// Download, verify, run; see [`crate::upgrade`]. At most once per task id (module doc).
    #[activity(definition = scout_defs::RunUpgrade)]
    pub async fn run_upgrade(
        self: Arc<Self>,
        ctx: ActivityContext,
        task: ScoutTask,
    ) -> Result<ScoutResult, ActivityError> {
        // Named `hostfw_logging::CONTEXT_SPAN`: every line of the task carries these fields.
        let span = tracing::info_span!(
            "hostfw",
            task = %task.upgrade_task_id,
            machine_id = %task.machine_id,
            component = %task.component,
            attempt = ctx.info().attempt,
        );
        // A task that failed on this host is a failed activity (red in the Web UI) carrying its
        // result, which the workflow reads as before.
        match self.once(&ctx, &task).instrument(span).await? {
            r if r.success => Ok(r),
            r => {
                let why = r.error.clone().or(r.exit_code.map(|c| format!("exit code {c}")));
                let message = format!(
                    "Scout task {} ({} {}) failed: {}",
                    task.upgrade_task_id,
                    task.component,
                    task.target_version,
                    why.as_deref().unwrap_or("no detail")
                );
                Err(failed_step(SCRIPT_FAILED, message, r))
            }
        }
    }
}

fn failed(error: String) -> ScoutResult {
    ScoutResult { success: false, exit_code: None, stdout: String::new(), stderr: String::new(), error: Some(error) }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

impl ScoutActivitiesImpl {
    /// Take this task's turn, then report its recorded result, settle an interrupted run, or run it.
    async fn once(&self, ctx: &ActivityContext, task: &ScoutTask) -> Result<ScoutResult, ActivityError> {
        let id = &task.upgrade_task_id;
        let turn = self.turns.lock().unwrap().entry(id.clone()).or_default().clone();
        let held = match turn.clone().try_lock_owned() {
            Ok(held) => held,
            Err(_) => {
                tracing::warn!(
                    "an earlier attempt of this task is still running in this agent; waiting for its result"
                );
                let what = || "waiting for the earlier attempt of this task".to_string();
                self.heartbeating(ctx, what, turn.clone().lock_owned()).await?
            }
        };
        let result = self.settle_or_run(ctx, task).await;
        drop(held);
        let mut turns = self.turns.lock().unwrap();
        if Arc::strong_count(&turn) <= 2 {
            turns.remove(id);
        }
        result
    }

    async fn settle_or_run(&self, ctx: &ActivityContext, task: &ScoutTask) -> Result<ScoutResult, ActivityError> {
        let id = &task.upgrade_task_id;
        match self.ledger.read(id).map_err(agent_failure)? {
            Some(TaskRecord { result: Some(result), .. }) => {
                tracing::info!(success = result.success, "this task already ran; reporting its recorded result");
                Ok(result)
            }
            Some(record) if record.spawning || record.script.is_some() => self.settle_interrupted(ctx, record).await,
            // Taken by an agent that stopped before the script could start: run it now.
            Some(_) | None => self.run(ctx, task).await,
        }
    }

    /// The task was taken by an attempt that is gone, after its script may have started: wait for
    /// that script if it still runs, then record and report an unknown outcome.
    async fn settle_interrupted(
        &self,
        ctx: &ActivityContext,
        mut record: TaskRecord,
    ) -> Result<ScoutResult, ActivityError> {
        let agent = record.agent.as_ref().map_or_else(|| "an unknown pid".to_string(), |a| format!("pid {}", a.pid));
        let script = match &record.script {
            None => "may have started (the agent stopped while starting it)".to_string(),
            Some(p) if !p.group_alive() => format!("(pid {}) is no longer running", p.pid),
            Some(p) => {
                let began = Instant::now();
                tracing::warn!(script_pid = p.pid, "the script of an earlier agent process still runs; waiting for it");
                let mut killed = false;
                loop {
                    if !p.group_alive() {
                        break;
                    }
                    if !killed && record.deadline_ms.is_some_and(|d| now_ms() >= d) {
                        tracing::warn!(
                            script_pid = p.pid,
                            "the orphaned script passed its execution timeout; killing it"
                        );
                        kill_group(p.pid);
                        killed = true;
                    }
                    let pause = tokio::time::sleep(self.settings.orphan_poll);
                    let what = || format!("waiting for the script (pid {}) of an earlier agent process", p.pid);
                    self.heartbeating(ctx, what, pause).await?;
                }
                let how = if killed { "was killed at its execution timeout" } else { "ended" };
                format!("(pid {}) {how} after a {} s wait", p.pid, began.elapsed().as_secs())
            }
        };
        let result = failed(format!(
            "interrupted: the Scout agent ({agent}) that ran this task stopped while it ran; the script {script}; \
             its outcome is unknown and it is not run again, so the inventory decides"
        ));
        tracing::warn!(error = ?result.error, "reporting an interrupted task");
        record.result = Some(result.clone());
        self.ledger.write(&record).map_err(agent_failure)?;
        Ok(result)
    }

    /// Record the task as taken, run it while heartbeating its phase, record how it ended. On
    /// cancellation drop it (which kills the script and removes the working directory) and report
    /// `Cancelled`.
    async fn run(&self, ctx: &ActivityContext, task: &ScoutTask) -> Result<ScoutResult, ActivityError> {
        tracing::info!(target_version = %task.target_version, artifacts = task.artifacts.len(), "upgrade task received");
        let record = Mutex::new(TaskRecord {
            task_id: task.upgrade_task_id.clone(),
            agent: ProcessId::current(),
            agent_instance: self.instance.clone(),
            spawning: false,
            script: None,
            deadline_ms: None,
            result: None,
        });
        self.ledger.write(&record.lock().unwrap()).map_err(agent_failure)?;
        let on_script = |event: ScriptEvent| {
            let mut r = record.lock().unwrap();
            match event {
                ScriptEvent::Spawning => r.spawning = true,
                ScriptEvent::Started(pid) => {
                    r.script = ProcessId::of(pid);
                    r.deadline_ms = Some(now_ms() + task.execution_timeout_secs as i64 * 1000);
                }
            }
            if let Err(e) = self.ledger.write(&r) {
                tracing::error!(error = %e, "could not record the script's start");
            }
        };
        let (phase, phase_rx) = watch::channel("starting".to_string());
        let cx = TaskContext {
            agent_machine: &self.machine_id,
            settings: &self.settings,
            http: &self.http,
            phase: &phase,
            on_script: &on_script,
        };
        let work = execute(&cx, task);
        let what = || phase_rx.borrow().clone();
        let ended = self.heartbeating(ctx, what, work).await;
        let mut record = record.into_inner().unwrap();
        let started = record.spawning || record.script.is_some();
        let result = match ended {
            Ok(Ok(result)) => result,
            Ok(Err(err)) if !started => {
                self.ledger.remove(&record.task_id).map_err(agent_failure)?;
                return Err(agent_failure(err));
            }
            Ok(Err(err)) => failed(format!(
                "the Scout agent failed while the script ran: {err}; its outcome is unknown and it is not run again"
            )),
            Err(cancelled) if !started => {
                self.ledger.remove(&record.task_id).map_err(agent_failure)?;
                return Err(cancelled);
            }
            Err(cancelled) => {
                record.result = Some(failed(
                    "cancelled while the script ran; the script was killed and its outcome is unknown".to_string(),
                ));
                self.ledger.write(&record).map_err(agent_failure)?;
                return Err(cancelled);
            }
        };
        record.result = Some(result.clone());
        if let Err(e) = self.ledger.write(&record) {
            tracing::error!(error = %e, "could not record the task's result; a retry will report it as interrupted");
        }
        Ok(result)
    }

    /// Await `work` while heartbeating `what()`; a cancelled activity stops waiting (dropping it).
    async fn heartbeating<T>(
        &self,
        ctx: &ActivityContext,
        what: impl Fn() -> String,
        work: impl Future<Output = T>,
    ) -> Result<T, ActivityError> {
        tokio::pin!(work);
        let mut heartbeat = tokio::time::interval(self.settings.heartbeat_interval);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                result = &mut work => return Ok(result),
                _ = ctx.cancelled() => {
                    tracing::warn!("activity cancelled; stopping the task");
                    return Err(ActivityError::cancelled());
                }
                _ = heartbeat.tick() => {
                    if let Err(e) = ctx.record_heartbeat(what()).await {
                        tracing::warn!(error = %e, "could not record a heartbeat");
                    }
                }
            }
        }
    }
}

fn agent_failure(err: ScoutError) -> ActivityError {
    let message = hostfw_model::error_chain(&err);
    tracing::error!(error = %message, "scout could not carry out the task");
    ActivityError::application(
        ApplicationFailure::builder(message).type_name(AGENT_FAILURE_TYPE.to_string()).non_retryable(false).build(),
    )
}
