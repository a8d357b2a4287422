//! Timeouts and retry delays of the worker binary, each with the reason for its value.
//!
//! Owns every tunable number of this crate so they are reviewed in one place. It must not contain
//! logic: only constants.

use std::time::Duration;

/// First delay before retrying Temporal or the site database at start. Short, so a worker started
/// together with its dependencies (compose, systemd) connects as soon as they listen.
pub const STARTUP_RETRY_FIRST: Duration = Duration::from_millis(500);

/// Longest delay between start-up attempts (the delay doubles up to this). 30 s keeps the log to
/// two WARN lines a minute during a long outage and still connects within 30 s of recovery.
pub const STARTUP_RETRY_MAX: Duration = Duration::from_secs(30);

/// How long `/readyz` waits for each dependency (Temporal's health check, `SELECT 1` on the site
/// database; both run at once). Below the usual 5 s probe timeouts of Kubernetes and compose, so
/// a hung dependency answers 503 instead of a probe timeout.
pub const READINESS_TIMEOUT: Duration = Duration::from_secs(2);

/// How often each worker describes the site workflows (manager, explorer) and starts one that is
/// not running. Two `DescribeWorkflowExecution` calls per worker every 5 s are negligible load for
/// the frontend, and a terminated scheduler is back within 5 s (`/readyz` says why meanwhile).
pub const SITE_WORKFLOWS_CHECK_EVERY: Duration = Duration::from_secs(5);

/// Bound on one describe-and-start of a site workflow by the keeper: the client retries an
/// unavailable frontend on its own for a long time; 10 s lets the keeper log the outage and back
/// off instead of waiting silently.
pub const SITE_WORKFLOW_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one `/metrics` scrape waits for the site database (all its reads together). The
/// pool's acquire timeout is 30 s, longer than Prometheus' default 10 s scrape timeout: during
/// an outage the scrape would hang and Prometheus would record the target down instead of
/// `hostfw_metrics_scrape_error 1`. 2 s is ample for the scrape's few indexed reads on a healthy
/// database and leaves the SDK metrics and rendering well inside any scrape timeout.
pub const METRICS_DB_TIMEOUT: Duration = Duration::from_secs(2);

/// How often each worker polls the site database for stored reload requests (`hostfw config
/// reload`) and marks itself present (`worker_presence`; a worker silent for
/// `hostfw_store::WORKER_LIVE_WITHIN` no longer counts as live). One indexed read and one upsert per
/// worker every 2 s is negligible; an operator's reload is answered within about 2 s.
pub const RELOAD_POLL_EVERY: Duration = Duration::from_secs(2);
