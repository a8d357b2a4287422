//! Timeouts, pool sizes and retry counts of the site database, each with the reason for its value.
//!
//! Owns every tunable number of this crate so they are reviewed in one place. It must not contain
//! logic: only constants.

use std::time::Duration;

/// How long an SQLite connection waits on a locked database before failing with SQLITE_BUSY.
/// SQLite serialises writers; our writes are single rows or tiny transactions (milliseconds), so
/// 5 s only trips when something is really stuck, and stays far below activity timeouts.
pub(crate) const SQLITE_BUSY_TIMEOUT_MS: u64 = 5_000;

/// Pooled SQLite connections for reads. WAL lets readers run beside the one writer (writes have a
/// pool of one connection of their own, `Store::writer`); a handful is enough for a worker plus
/// the metrics endpoint.
pub(crate) const SQLITE_MAX_CONNECTIONS: u32 = 8;

/// Pooled PostgreSQL connections per process. Workers scale horizontally, so keep each one modest
/// (the default server `max_connections` is 100).
pub(crate) const POSTGRES_MAX_CONNECTIONS: u32 = 10;

/// How long a caller waits for a free pooled connection before `PoolTimedOut`. Longer than any
/// single query should take, shorter than the activity start-to-close timeouts that wrap us.
pub(crate) const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// Attempts for inserts whose key is `MAX + 1` (audit log, state history) when a concurrent
/// writer took the same number first (possible on PostgreSQL under READ COMMITTED). Each retry
/// re-reads MAX, so a handful always suffices unless dozens of writers race on one key.
pub(crate) const SEQ_INSERT_ATTEMPTS: u32 = 16;

/// Rounds of `request_create` when the existing request vanishes between the conditional INSERT
/// and the read that reports it (a concurrent clear). Each round is a fresh attempt; two races in a
/// row are already unlikely, three is generous.
pub(crate) const REQUEST_CREATE_ATTEMPTS: u32 = 3;

/// Activation marks older than this are removed whenever a new one is recorded (a step never runs
/// that long).
pub(crate) const ACTIVATION_MARK_KEEP_MS: i64 = 24 * 3600 * 1000;

/// A worker seen polling for reload requests within this long counts as live
/// (`Store::workers_live`): `hostfw config reload` waits for its answer. Five of the workers'
/// 2 s polls, so a worker busy for a few seconds is not dropped, and one that stopped is
/// forgotten within 10 s.
pub const WORKER_LIVE_WITHIN_MS: i64 = 10_000;
