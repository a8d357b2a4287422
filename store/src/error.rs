//! `StoreError`: the one error type of the site database.
//!
//! Owns the error variants (which operation, which row, what went wrong) and the small helpers the
//! table modules use to build them. It must not decide retry policy for callers beyond the
//! `is_transient` hint, and it must never carry secret values (passwords, database URL passwords).

use crate::Backend;

/// Everything the site database can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL is neither SQLite nor PostgreSQL.
    #[error(
        "unsupported site database URL {url:?}: expected sqlite://<path>, a file path, postgres:// or postgresql://"
    )]
    UnsupportedUrl {
        /// The URL with any password removed.
        url: String,
    },

    /// The parent directory of the SQLite file could not be created.
    #[error("cannot create directory {path} for the SQLite site database")]
    CreateDir {
        /// The directory that could not be created.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// The SQLite file could not be created.
    #[error("cannot create the SQLite site database file {path}")]
    CreateFile {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// Opening the pool (or preparing the connection: WAL mode) failed.
    #[error("cannot open the {backend} site database at {url}")]
    Connect {
        /// Which backend was being opened.
        backend: Backend,
        /// The URL with any password removed.
        url: String,
        /// The driver error.
        source: sqlx::Error,
    },

    /// Applying the migrations failed.
    #[error("migrating the {backend} site database failed")]
    Migrate {
        /// Which backend was being migrated.
        backend: Backend,
        /// The migration error.
        source: sqlx::migrate::MigrateError,
    },

    /// A registration would change the state, instance or BMC address of a machine that is being
    /// updated (it has a reprovisioning request, or is in HostReprovision): those change only
    /// through the update workflow.
    #[error(
        "machine {machine} is being updated (it has a reprovisioning request or is in HostReprovision): \
         its state, instance and BMC address cannot change until the update ends; nothing was written"
    )]
    MachineBusy {
        /// The machine.
        machine: String,
    },

    /// A request for `machine` would put more hosts labelled `key=value` in flight than
    /// `[machine_updater] max_concurrent_per_label` allows.
    #[error(
        "machine {machine} is labelled {key}={value} and {} of {limit} such hosts are already updating or in \
         maintenance ({}): machine_updater.max_concurrent_per_label.{key} = {limit}; nothing was written",
        holders.len(), holders.join(", ")
    )]
    LabelCapReached { machine: String, key: String, value: String, limit: u32, holders: Vec<String> },

    /// A decision to start `machine` was made from a view that another write has made stale
    /// since (a request, a pause, a freeze, a failure, ...: `gate_fence`): nothing was written;
    /// the decision is to be made again from a fresh view.
    #[error(
        "the site changed since the decision to {decision} was read (gate fence {read}): another request, pause, \
         resume, freeze, maintenance entry, attempt, failure, run end, window or catalog change landed meanwhile; \
         nothing was written"
    )]
    GateMoved {
        /// What was decided: "start m3", "mark the canary waves".
        decision: String,
        read: i64,
    },

    /// A freeze in force covers the machine: no new update starts in its scope (`hostfw freeze`).
    #[error("machine {machine} is frozen by freeze {freeze_id} on {scope} (set by {by}: {reason}): no update starts until `hostfw unfreeze --id {freeze_id}`")]
    Frozen { machine: String, freeze_id: i64, scope: String, by: String, reason: String },

    /// The row the operation needs does not exist.
    #[error("{what} {id:?} not found")]
    NotFound {
        /// The kind of row ("machine", "request", ...).
        what: &'static str,
        /// Its key.
        id: String,
    },

    /// A uniqueness rule would be broken (e.g. a BMC address already owned by another machine).
    #[error("{op} for {id:?} conflicts with an existing row: {detail}")]
    Conflict {
        /// The store function (`<noun>_<verb>`).
        op: &'static str,
        /// The key the caller passed.
        id: String,
        /// What clashed.
        detail: String,
    },

    /// The BMC is already registered to another machine: one BMC is one machine. `address` and
    /// `owned` are canonical; they differ only in scheme when `owner` registered the same
    /// `host:port` listener over the other scheme.
    #[error("machine {machine:?}: BMC {address} is already registered to machine {owner:?} (as {owned}); one BMC is one machine")]
    BmcAddressTaken {
        /// The machine being registered.
        machine: String,
        /// Its BMC address, canonical.
        address: String,
        /// The machine that has that BMC.
        owner: String,
        /// The owner's stored address.
        owned: String,
    },

    /// The caller passed a value the store cannot represent faithfully.
    #[error("{op} for {id:?}: invalid input: {reason}")]
    Invalid {
        /// The store function.
        op: &'static str,
        /// The key the caller passed.
        id: String,
        /// Why it was refused.
        reason: String,
    },

    /// A stored value cannot be decoded (bad JSON, negative counter, ...).
    #[error("{op} for {id:?}: stored value is corrupt: {detail}")]
    Corrupt {
        /// The store function.
        op: &'static str,
        /// The key of the corrupt row.
        id: String,
        /// What could not be decoded.
        detail: String,
    },

    /// The site key could not be read.
    #[error(transparent)]
    SiteKey(#[from] crate::site_key::SiteKeyError),

    /// A BMC password was to be written but no site key is configured.
    #[error(
        "refusing to store the BMC password of machine {machine:?} unencrypted: no site key is configured; \
         create one with `hostfw site-key generate --out FILE` and name it in `[site] secret_key_file` \
         (or the HOSTFW_SITE_KEY_FILE environment variable)"
    )]
    NoSiteKey {
        /// The machine whose login was being stored.
        machine: String,
    },

    /// A BMC password write refused because the stored passwords were re-encrypted with another
    /// site key (`rotate-key`) than this process uses: written, it could not be read.
    #[error(
        "cannot store the BMC password of machine {machine:?}: the stored passwords are encrypted with site key \
         {stored_key} (`hostfw machine rotate-key`), this process uses site key {site_key}; point [site] \
         secret_key_file (or HOSTFW_SITE_KEY_FILE) at the new key and restart it"
    )]
    StaleSiteKey {
        /// The machine whose password was to be written.
        machine: String,
        /// The key id of the stored passwords.
        stored_key: String,
        /// The key id of this process.
        site_key: String,
    },

    /// A stored BMC password cannot be opened with the configured site key.
    #[error("the stored BMC password of machine {machine:?} cannot be read: {source}")]
    Credential {
        /// The machine.
        machine: String,
        /// Why (wrong key, no key, altered value); never the value.
        source: crate::sealed::SealError,
    },

    /// The database rejected or failed a query.
    #[error("{op} for {id:?} failed")]
    Database {
        /// The store function.
        op: &'static str,
        /// The key the caller passed ("" for whole-table operations).
        id: String,
        /// The driver error.
        source: sqlx::Error,
    },
}

/// Shorthand used by every store function.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// A closure turning a driver error into `StoreError::Database` for `op` on `id`.
    pub(crate) fn db(op: &'static str, id: impl Into<String>) -> impl FnOnce(sqlx::Error) -> StoreError {
        let id = id.into();
        move |source| StoreError::Database { op, id, source }
    }

    /// A `NotFound` for `what` `id`.
    pub(crate) fn not_found(what: &'static str, id: impl Into<String>) -> StoreError {
        StoreError::NotFound { what, id: id.into() }
    }

    /// True for `NotFound`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StoreError::NotFound { .. })
    }

    /// A hint for callers' retry policy: true when the same call may succeed later unchanged
    /// (connection lost, pool exhausted, database busy or locked). The caller decides.
    pub fn is_transient(&self) -> bool {
        let source = match self {
            StoreError::Connect { source, .. } | StoreError::Database { source, .. } => source,
            _ => return false,
        };
        match source {
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_) => true,
            sqlx::Error::Database(e) => {
                // SQLite: SQLITE_BUSY (5) / SQLITE_LOCKED (6) and their extended codes.
                // PostgreSQL: class 08 (connection), 40 (serialization/deadlock), 53 (resources),
                // 57P01..03 (shutdown / cannot connect now).
                let code = e.code().map(|c| c.into_owned()).unwrap_or_default();
                let lower = e.message().to_ascii_lowercase();
                code.starts_with("08")
                    || code.starts_with("40")
                    || code.starts_with("53")
                    || code.starts_with("57P0")
                    || code.parse::<i64>().is_ok_and(|n| matches!(n & 0xff, 5 | 6))
                    || lower.contains("database is locked")
            }
            _ => false,
        }
    }
}

/// True when `e` is a unique / primary-key violation on either backend.
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}
