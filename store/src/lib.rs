//! The hostfw site database: the `Store` handle, the `Backend` it runs on, and `now_ms`.
//!
//! Owns the public surface of the crate (one `Store`, cheap to clone, wrapping an `AnyPool`) and
//! re-exports the row types. It must not contain table SQL: each table lives in its own module
//! (machines, reports, requests, health, history, credentials, audit, counters, brakes, config_reloads,
//! notifications, gate_fence), connecting lives in `connect`,
//! registering machines in `registration`, the site key in `site_key`, the at-rest format of
//! encrypted values in `sealed` and the `rev` change marker of machines and reports in `revisions`.
//!
//! The same migrations (`store/migrations/`) and the same queries run on SQLite (the embedded
//! default, a file in WAL mode) and on PostgreSQL (production): `$1` placeholders,
//! `ON CONFLICT … DO UPDATE`, portable types only (TEXT, BIGINT; booleans as BIGINT 0/1, JSON as
//! TEXT, times as BIGINT unix milliseconds).

mod activation_marks;
mod address;
mod api_tokens;
mod approval;
mod audit;
mod audit_query;
mod brakes;
mod config_reloads;
mod connect;
mod counters;
mod credentials;
mod db_clock;
mod error;
mod error_budget;
mod firmware_config;
mod firmware_config_pending;
mod gate_fence;
mod health;
mod history;
mod labels;
mod legacy_addresses;
mod machines;
mod maintenance;
mod notifications;
mod registration;
mod removal;
mod repair;
mod reports;
mod requests;
mod revisions;
mod script_locks;
mod sealed;
mod site_key;
mod tuning;
mod update_runs;
mod upload_slots;
mod windows;

use std::fmt;

pub use api_tokens::{ApiToken, NewToken, TokenRefused, TOKEN_PREFIX};
pub use approval::{Approval, ApprovalTaken};
pub use audit::AuditEntry;
pub use brakes::{FreezeSelector, AUDIT_BUDGET_PAUSE, AUDIT_FREEZE_LIFT, AUDIT_FREEZE_SET};
pub use config_reloads::{ReloadAnswer, ReloadOutcome, ReloadRequest, AUDIT_CONFIG_RELOAD, AUDIT_CONFIG_RELOAD_ANSWER};
pub use counters::{
    FIRMWARE_UPDATES_TOTAL, HOST_REPROVISION_RETRIES_TOTAL, MANAGER_PASSES_TOTAL, PASS_FAILED, PASS_SUCCEEDED,
    PHASE_COMPLETED, PHASE_FAILED, PHASE_STARTED,
};
pub use credentials::{Credentials, Rekeyed};
pub use error::{Result, StoreError};
pub use error_budget::{Resumed, AUDIT_BUDGET_RESUME};
pub use firmware_config::{FirmwareConfigAudit, FirmwareConfigVersion, NewFirmwareConfig};
pub use firmware_config_pending::{NewPendingFirmwareConfig, PendingFirmwareConfig, PendingRefused};
pub use gate_fence::GateFence;
pub use health::HealthReport;
pub use history::HistoryEntry;
pub use labels::LabelCapHit;
pub use machines::{Machine, NewMachine};
pub use maintenance::MaintenanceChange;
pub use notifications::{
    DeliveryState, DueDelivery, NotificationEvent, NotificationRecord, NOTIFICATION_DELIVERIES_TOTAL,
    OUTCOME_DELIVERED, OUTCOME_FAILED, OUTCOME_GAVE_UP,
};
pub use registration::Registration;
pub use removal::{refusal as removal_refusal, Removal, AUDIT_MACHINE_REMOVE};
pub use repair::RepairMark;
pub use reports::ExploredReport;
pub use requests::{ClearOutcome, NewRequest, Request, RequestCreate};
pub use revisions::Revised;
pub use script_locks::ScriptLock;
pub use sealed::SealError;
pub use site_key::{SiteKey, SiteKeyError, SITE_KEY_ENV, SITE_KEY_FILE_ENV};
pub use tuning::WORKER_LIVE_WITHIN_MS;
pub use upload_slots::{HeldSlotRow, SlotGrant};

/// Which database engine a `Store` talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Backend {
    /// SQLite file (the embedded default).
    Sqlite,
    /// PostgreSQL server (production).
    Postgres,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        })
    }
}

/// The site database. Clone it freely: clones share one connection pool.
#[derive(Clone)]
pub struct Store {
    /// Reads (and, on PostgreSQL, writes too).
    pool: sqlx::AnyPool,
    /// Writes. On an SQLite file a pool of one connection: this process's writers queue for it in
    /// order (the pool is fair) instead of racing for SQLite's write lock, where a loser sleeps in
    /// the busy handler and can starve behind the others until `database is locked`. Elsewhere
    /// the same pool as `pool`.
    writer: sqlx::AnyPool,
    backend: Backend,
    /// Seals and opens BMC passwords (`credentials`); `None`: legacy plaintext is read, writes refused.
    site_key: Option<SiteKey>,
    /// The SQLite file this handle's `connect` created (it did not exist before).
    created: Option<std::path::PathBuf>,
    /// Added to this process's clock by `local_now_ms` (tests of clock skew; 0 otherwise).
    clock_skew_ms: i64,
}

impl fmt::Debug for Store {
    // Not derived: the pool's options hold the database URL, which may carry a password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend)
            .field("site_key", &self.site_key)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating the SQLite file and its directories if needed) and migrates the site
    /// database at `url`: `sqlite://path`, `sqlite:path` or a plain file path for SQLite,
    /// `postgres://…` or `postgresql://…` for PostgreSQL. Logs which backend it opened. Then
    /// rewrites BMC addresses stored by older versions to the canonical form (`legacy_addresses`;
    /// refused, changing nothing, if two machines turn out to share a BMC). Creating a SQLite
    /// file is logged as a WARN naming its full path (see [`Store::created_file`]).
    pub async fn connect(url: &str) -> Result<Store> {
        let connect::Opened { pool, writer, backend, created } = connect::open(url).await?;
        legacy_addresses::normalise(&writer).await?;
        Ok(Store { pool, writer, backend, site_key: None, created, clock_skew_ms: 0 })
    }

    /// This store with `key` as its site key: BMC passwords are written encrypted with it and
    /// read with it. `None` (the state after `connect`) reads legacy plaintext passwords only and
    /// refuses to write any.
    pub fn with_site_key(mut self, key: Option<SiteKey>) -> Store {
        self.site_key = key;
        self
    }

    /// The site key this store uses, if any.
    pub fn site_key(&self) -> Option<&SiteKey> {
        self.site_key.as_ref()
    }

    /// Logs, once per process, a WARN when legacy plaintext BMC passwords are stored (how many,
    /// and how to encrypt them). Returns the count.
    pub async fn warn_plaintext_credentials(&self) -> Result<u64> {
        static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let n = self.credentials_plaintext_count().await?;
        if n > 0 && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::warn!(
                count = n,
                "{n} BMC passwords are stored in plaintext; encrypt them with \
                 `hostfw machine rotate-key --new-key-file FILE` (create FILE with `hostfw site-key generate --out FILE`)"
            );
        }
        Ok(n)
    }

    /// Opens the site database of `site` (`connect`) with the site key it configures
    /// (`SiteKey::from_env_or`: `HOSTFW_SITE_KEY`, `HOSTFW_SITE_KEY_FILE`, `[site]
    /// secret_key_file`), then logs the plaintext-credentials WARN if there are any.
    pub async fn open_site(site: &hostfw_model::SiteConfig) -> Result<Store> {
        let key = SiteKey::from_env_or(site.site.secret_key_file.as_deref())?;
        let store = Store::connect(&site.site.database_url).await?.with_site_key(key);
        store.warn_plaintext_credentials().await?;
        Ok(store)
    }

    /// The SQLite file this store's `connect` created because it did not exist: a new, empty
    /// site database. `None` for an existing file, `:memory:` and PostgreSQL.
    pub fn created_file(&self) -> Option<&std::path::Path> {
        self.created.as_deref()
    }

    /// Why this site database looks like the wrong one, if it does: it was just created, or it
    /// exists but has no machines registered. The text names the database and the config key to
    /// check; `None` when machines are registered.
    pub async fn emptiness_warning(&self) -> Result<Option<String>> {
        if let Some(path) = self.created_file() {
            return Ok(Some(format!(
                "created a new, empty site database at {}; if you expected an existing one, check site.database_url",
                path.display()
            )));
        }
        if self.machine_count().await? == 0 {
            return Ok(Some(format!(
                "the {} site database has no machines registered; if you expected an existing site, check site.database_url",
                self.backend
            )));
        }
        Ok(None)
    }

    /// The engine this store runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// A trivial query (`SELECT 1`): the database answers. For readiness probes.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(StoreError::db("ping", ""))?;
        Ok(())
    }

    /// A write transaction. On SQLite it takes the database's write lock at once (`BEGIN
    /// IMMEDIATE`), waiting in the busy handler while another process writes: a deferred
    /// transaction that reads and then writes fails at once with `database is locked` when
    /// another process (a second worker, `hostfw --local`, a standalone `hostfw-api`) committed
    /// in between, since its snapshot is then stale. Every write of the store begins here.
    pub(crate) async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Any>> {
        match self.backend {
            Backend::Sqlite => self.writer.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.writer.begin().await,
        }
    }

    /// Closes every pooled connection (waits for checked-out ones). Other clones stop working.
    pub async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}

/// The SQLite file a `Store::connect(url)` would open (absolute), without opening it: `None`
/// for PostgreSQL, `sqlite::memory:` and URLs `connect` refuses.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    connect::sqlite_file(url)
}

/// Now, as unix milliseconds (the unit of every time column).
pub fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// Encodes a boolean for a BIGINT 0/1 column.
pub(crate) fn bool_to_db(b: bool) -> i64 {
    i64::from(b)
}

/// Decodes a BIGINT 0/1 column.
pub(crate) fn bool_from_db(v: i64) -> bool {
    v != 0
}
