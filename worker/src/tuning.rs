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
