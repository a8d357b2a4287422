//! Downloading one file of a task to disk: bounded, retried tries (transient failures only),
//! SHA-256 computed while streaming, then checked against the digest the task names.

use std::path::Path;
use std::time::Duration;

use hostfw_workflows::scout::ScoutFile;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::error::{ScoutError, StepError, TaskFailure};

/// How hard to try for one file.
#[derive(Debug, Clone)]
pub(crate) struct FetchPolicy {
    /// Bound on each try (connect, headers and body).
    pub try_timeout: Option<Duration>,
    /// Bound on all tries together, backoffs included.
    pub overall_timeout: Option<Duration>,
    pub tries: u32,
    pub first_backoff: Duration,
}

/// Why one try failed.
enum TryError {
    /// Worth another try: connection trouble, a timeout, 5xx, 408, 429.
    Transient(String),
    /// Another try would get the same answer: 4xx, a malformed URL.
    Permanent(String),
    /// Our own disk failed.
    Local(ScoutError),
}

/// Download `file` to `dest` and check its digest. Digest mismatches and download failures are
/// [`TaskFailure`]s; only local write errors are the agent's.
pub(crate) async fn fetch_verified(
    http: &reqwest::Client,
    file: &ScoutFile,
    dest: &Path,
    policy: &FetchPolicy,
) -> Result<(), StepError> {
    let tries = fetch_with_retries(http, file, dest, policy);
    let actual = match policy.overall_timeout {
        Some(limit) => tokio::time::timeout(limit, tries).await.map_err(|_| TaskFailure::DownloadTimedOut {
            file_name: file.file_name.clone(),
            url: file.url.clone(),
            seconds: limit.as_secs(),
        })??,
        None => tries.await?,
    };
    if !actual.eq_ignore_ascii_case(&file.sha256) {
        return Err(
            TaskFailure::Digest { file_name: file.file_name.clone(), expected: file.sha256.clone(), actual }.into()
        );
    }
    tracing::info!(file = %file.file_name, "downloaded and verified");
    Ok(())
}

/// The tries, with exponential backoff between them; returns the lowercase hex SHA-256.
async fn fetch_with_retries(
    http: &reqwest::Client,
    file: &ScoutFile,
    dest: &Path,
    policy: &FetchPolicy,
) -> Result<String, StepError> {
    let mut backoff = policy.first_backoff;
    let mut attempt = 1;
    loop {
        let once = fetch_once(http, &file.url, dest);
        let result = match policy.try_timeout {
            Some(limit) => tokio::time::timeout(limit, once).await.unwrap_or_else(|_| {
                Err(TryError::Transient(format!("no complete answer within {} s", limit.as_secs())))
            }),
            None => once.await,
        };
        let failure = |problem: String| TaskFailure::Download {
            file_name: file.file_name.clone(),
            url: file.url.clone(),
            tries: attempt,
            problem,
        };
        match result {
            Ok(digest) => return Ok(digest),
            Err(TryError::Local(e)) => return Err(e.into()),
            Err(TryError::Permanent(problem)) => return Err(failure(problem).into()),
            Err(TryError::Transient(problem)) if attempt >= policy.tries => return Err(failure(problem).into()),
            Err(TryError::Transient(problem)) => {
                tracing::warn!(file = %file.file_name, attempt, %problem, retry_in = ?backoff, "download failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = backoff.saturating_mul(2);
                attempt += 1;
            }
        }
    }
}

/// One GET, streamed into `dest` (truncated first) while hashing.
async fn fetch_once(http: &reqwest::Client, url: &str, dest: &Path) -> Result<String, TryError> {
    let mut response = http.get(url).send().await.map_err(request_error)?;
    let status = response.status();
    if !status.is_success() {
        let problem = format!("HTTP {status}");
        let transient = status.is_server_error()
            || status == reqwest::StatusCode::REQUEST_TIMEOUT
            || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
        return Err(if transient { TryError::Transient(problem) } else { TryError::Permanent(problem) });
    }
    let local = |source| TryError::Local(ScoutError::LocalFile { path: dest.to_path_buf(), source });
    let mut out = tokio::fs::File::create(dest).await.map_err(local)?;
    let mut hasher = Sha256::new();
    while let Some(chunk) = response.chunk().await.map_err(request_error)? {
        hasher.update(&chunk);
        out.write_all(&chunk).await.map_err(local)?;
    }
    out.flush().await.map_err(local)?;
    Ok(hex::encode(hasher.finalize()))
}

fn request_error(err: reqwest::Error) -> TryError {
    let problem = error_chain(&err);
    if err.is_builder() {
        TryError::Permanent(problem)
    } else {
        TryError::Transient(problem)
    }
}

/// An error and its sources on one line (reqwest's own text omits the cause).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
