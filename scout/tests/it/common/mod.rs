//! Test fixtures for Scout: a file server on port 0 (with per-file injected 503s and hit
//! counts), task building and signing, and an `ActivityEnvironment` around a Scout for machine
//! `m1` that trusts `signing_key()`.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use hostfw_model::{ComponentType, ScoutManifest};
use hostfw_scout::{ScoutActivitiesImpl, ScoutSettings, TrustedKey};
use hostfw_workflows::scout::{ScoutFile, ScoutResult, ScoutTask};
use sha2::{Digest, Sha256};
use temporalio_sdk::testing::{ActivityEnvironment, ActivityEnvironmentError};

pub const MACHINE: &str = "m1";

#[derive(Default)]
struct Files {
    content: HashMap<String, Vec<u8>>,
    /// How many more requests for a file get a 503.
    failures_left: HashMap<String, u32>,
    hits: HashMap<String, u32>,
}

/// Serves `/files/<name>` from memory.
pub struct FileServer {
    pub base: String,
    files: Arc<Mutex<Files>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_file(State(files): State<Arc<Mutex<Files>>>, UrlPath(name): UrlPath<String>) -> (StatusCode, Vec<u8>) {
    let mut files = files.lock().unwrap();
    *files.hits.entry(name.clone()).or_default() += 1;
    if let Some(left) = files.failures_left.get_mut(&name) {
        if *left > 0 {
            *left -= 1;
            return (StatusCode::SERVICE_UNAVAILABLE, b"try later".to_vec());
        }
    }
    match files.content.get(&name) {
        Some(body) => (StatusCode::OK, body.clone()),
        None => (StatusCode::NOT_FOUND, Vec::new()),
    }
}

impl FileServer {
    pub async fn start() -> FileServer {
        let files = Arc::new(Mutex::new(Files::default()));
        let app = Router::new().route("/files/{name}", get(serve_file)).with_state(files.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/files", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        FileServer { base, files, task }
    }

    /// Serve `content` as `name`; returns the file's URL.
    pub fn put(&self, name: &str, content: impl Into<Vec<u8>>) -> String {
        self.files.lock().unwrap().content.insert(name.to_string(), content.into());
        format!("{}/{name}", self.base)
    }

    /// The next `count` requests for `name` get a 503.
    pub fn fail_next(&self, name: &str, count: u32) {
        self.files.lock().unwrap().failures_left.insert(name.to_string(), count);
    }

    pub fn hits(&self, name: &str) -> u32 {
        self.files.lock().unwrap().hits.get(name).copied().unwrap_or(0)
    }
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// A served file with its true digest.
pub fn served(server: &FileServer, name: &str, content: &[u8]) -> ScoutFile {
    ScoutFile { url: server.put(name, content.to_vec()), sha256: sha256_hex(content), file_name: name.to_string() }
}

/// A task for machine `m1` (a `dell`/`r760`), component `bmc`, target `1.2.3`, running `script`.
pub fn task(server: &FileServer, script: &str, artifacts: Vec<ScoutFile>) -> ScoutTask {
    ScoutTask {
        upgrade_task_id: "task-42".to_string(),
        machine_id: MACHINE.to_string(),
        vendor: "dell".to_string(),
        model: "r760".to_string(),
        component: ComponentType::Bmc,
        target_version: "1.2.3".to_string(),
        script: served(server, "upgrade.sh", script.as_bytes()),
        artifacts,
        execution_timeout_secs: 20,
        artifact_download_timeout_secs: 20,
        manifest: None,
        signature: None,
    }
}

/// The operator's package signing key in these tests (Scout trusts its public half).
pub fn signing_key() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[11; 32])
}

/// The signed manifest of the package `<vendor>/<model>/<component>` for the task's target
/// version, no expiry, as `task` describes it.
pub fn manifest_of(task: &ScoutTask) -> ScoutManifest {
    ScoutManifest {
        package: format!("{}/{}/{}", task.vendor, task.model, task.component.as_str()),
        version: task.target_version.clone(),
        not_after_ms: None,
        script_sha256: task.script.sha256.to_ascii_lowercase(),
        execution_timeout_seconds: task.execution_timeout_secs,
        artifact_download_timeout_seconds: task.artifact_download_timeout_secs,
        artifacts: Vec::new(),
    }
}

/// `task` carrying `manifest` signed by `key`.
pub fn signed_with(task: ScoutTask, manifest: &ScoutManifest, key: &ed25519_dalek::SigningKey) -> ScoutTask {
    signed_text(task, &manifest.render(), key)
}

/// `task` carrying the manifest text `text` (any format) signed by `key`.
pub fn signed_text(mut task: ScoutTask, text: &str, key: &ed25519_dalek::SigningKey) -> ScoutTask {
    use base64::Engine as _;
    use ed25519_dalek::Signer as _;
    let signature = key.sign(text.as_bytes());
    task.signature = Some(base64::engine::general_purpose::STANDARD.encode(signature.to_bytes()));
    task.manifest = Some(text.to_string());
    task
}

/// `task` signed as the operator would sign its package.
pub fn signed(task: ScoutTask) -> ScoutTask {
    let manifest = manifest_of(&task);
    signed_with(task, &manifest, &signing_key())
}

/// A Scout for `m1` in an activity test environment, with its own work root.
pub struct Harness {
    pub env: ActivityEnvironment,
    pub work_root: tempfile::TempDir,
    /// A directory outside any working directory, for markers scripts leave behind.
    pub outside: tempfile::TempDir,
    pub heartbeats: Arc<Mutex<Vec<String>>>,
    /// Scout's state directory (its task records).
    pub state_dir: PathBuf,
    _state: Option<tempfile::TempDir>,
}

impl Harness {
    pub fn new() -> Harness {
        let state = tempfile::tempdir().unwrap();
        let mut h = Harness::with_state_dir(state.path());
        h._state = Some(state);
        h
    }

    /// A Scout (a fresh agent instance) keeping its task records in `state_dir`.
    pub fn with_state_dir(state_dir: &Path) -> Harness {
        let trusted = TrustedKey::from_bytes(signing_key().verifying_key().as_bytes()).unwrap();
        Harness::build(state_dir, Some(trusted), false, Vec::new())
    }

    /// A Scout that passes `script_env` (`--script-env`) on to its scripts.
    pub fn with_script_env(script_env: Vec<(&'static str, String)>) -> Harness {
        let state = tempfile::tempdir().unwrap();
        let trusted = TrustedKey::from_bytes(signing_key().verifying_key().as_bytes()).unwrap();
        let mut h = Harness::build(state.path(), Some(trusted), false, script_env);
        h._state = Some(state);
        h
    }

    /// A Scout trusting `trusted_key` (or none), with `allow_unsigned` as given.
    pub fn with_trust(trusted_key: Option<TrustedKey>, allow_unsigned: bool) -> Harness {
        let state = tempfile::tempdir().unwrap();
        let mut h = Harness::build(state.path(), trusted_key, allow_unsigned, Vec::new());
        h._state = Some(state);
        h
    }

    fn build(
        state_dir: &Path,
        trusted_key: Option<TrustedKey>,
        allow_unsigned: bool,
        script_env: Vec<(&'static str, String)>,
    ) -> Harness {
        let work_root = tempfile::tempdir().unwrap();
        let settings = ScoutSettings {
            work_root: work_root.path().to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            orphan_poll: Duration::from_millis(100),
            download_first_backoff: Duration::from_millis(20),
            heartbeat_interval: Duration::from_millis(100),
            trusted_key,
            allow_unsigned,
            script_env,
            ..ScoutSettings::default()
        };
        let heartbeats = Arc::new(Mutex::new(Vec::new()));
        let seen = heartbeats.clone();
        let env = ActivityEnvironment::builder_with_default()
            .register_activities(ScoutActivitiesImpl::new(MACHINE, settings).unwrap())
            .on_heartbeat(move |details| {
                if let Ok(phase) = details.downcast::<String>() {
                    seen.lock().unwrap().push(*phase);
                }
            })
            .build();
        Harness {
            env,
            work_root,
            outside: tempfile::tempdir().unwrap(),
            heartbeats,
            state_dir: state_dir.to_path_buf(),
            _state: None,
        }
    }

    /// Runs `task` signed (as its package would be) by the key this Scout trusts.
    pub async fn run(&self, task: ScoutTask) -> Result<ScoutResult, ActivityEnvironmentError> {
        reported(self.env.run(ScoutActivitiesImpl::run_upgrade, signed(task)).await)
    }

    /// Runs `task` exactly as given (its signature, if any, untouched).
    pub async fn run_as_is(&self, task: ScoutTask) -> Result<ScoutResult, ActivityEnvironmentError> {
        reported(self.env.run(ScoutActivitiesImpl::run_upgrade, task).await)
    }

    /// A path outside the working directory, for a script to write to.
    pub fn marker(&self, name: &str) -> PathBuf {
        self.outside.path().join(name)
    }

    /// True when no task directory is left under the work root.
    pub fn work_root_is_empty(&self) -> bool {
        std::fs::read_dir(self.work_root.path()).unwrap().next().is_none()
    }
}

/// Wait (bounded) until `cond` holds; panics with `what` after `limit`.
pub async fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// True when `pid` no longer runs (gone, or a zombie awaiting its reaper).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The pid a script wrote to `path`.
pub fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// The task's result as the workflow reads it: a task that failed must be a failed activity
/// (`ScriptFailed`, red in the Web UI) carrying its result, never a completed one saying it failed.
pub fn reported(
    outcome: Result<ScoutResult, ActivityEnvironmentError>,
) -> Result<ScoutResult, ActivityEnvironmentError> {
    use hostfw_workflows::step_failure::{failed_step_result, SCRIPT_FAILED};
    match outcome {
        Ok(r) => {
            assert!(r.success, "a failed task completed its activity instead of failing it: {r:?}");
            Ok(r)
        }
        Err(ActivityEnvironmentError::Activity(e)) => match failed_step_result::<ScoutResult>(&e, SCRIPT_FAILED) {
            Some(r) => {
                assert!(!r.success, "a failed activity carries a failed result: {r:?}");
                Ok(r)
            }
            None => Err(ActivityEnvironmentError::Activity(e)),
        },
        Err(e) => Err(e),
    }
}
