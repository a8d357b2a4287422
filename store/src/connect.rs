//! Connecting: choose the backend from the URL, prepare SQLite files (parent directories,
//! `mode=rwc`, WAL, busy timeout), build the pools (reads, and the one-connection writer of an
//! SQLite file) and run the migrations.
//!
//! It must not contain table SQL, and it must never log or return a database password: every URL
//! that leaves this module goes through `redact_url`.

use std::path::{Path, PathBuf};

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Executor};

use crate::error::{Result, StoreError};
use crate::tuning::{ACQUIRE_TIMEOUT, POSTGRES_MAX_CONNECTIONS, SQLITE_BUSY_TIMEOUT_MS, SQLITE_MAX_CONNECTIONS};
use crate::Backend;

/// The migrations in `store/migrations/`, embedded at compile time; the same files for both backends.
static MIGRATOR: Migrator = sqlx::migrate!();

/// What a URL asks for, normalised for sqlx.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    Postgres { url: String },
    SqliteFile { url: String, path: PathBuf },
    SqliteMemory { url: String },
}

/// A database just opened: its pool, engine, and the SQLite file this open created (if any).
pub(crate) struct Opened {
    pub pool: AnyPool,
    /// Where writes go (`Store::writer`): one connection on an SQLite file, else `pool`.
    pub writer: AnyPool,
    pub backend: Backend,
    pub created: Option<PathBuf>,
}

/// Opens, prepares and migrates the database at `url`. Creating a SQLite file that did not exist
/// is logged as a WARN naming the full path: a mistyped or moved `site.database_url` otherwise
/// shows up only as a site with no machines.
pub(crate) async fn open(url: &str) -> Result<Opened> {
    sqlx::any::install_default_drivers();
    let shown = redact_url(url);
    let target = parse_target(url)?;
    let backend = match target {
        Target::Postgres { .. } => Backend::Postgres,
        Target::SqliteFile { .. } | Target::SqliteMemory { .. } => Backend::Sqlite,
    };
    let connect_err = |source| StoreError::Connect { backend, url: shown.clone(), source };
    let mut created = None;

    let mut writer = None;
    let pool = match &target {
        Target::Postgres { url } => AnyPoolOptions::new()
            .max_connections(POSTGRES_MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect(url)
            .await
            .map_err(connect_err)?,
        Target::SqliteFile { url, path } => {
            let existed = path.try_exists().unwrap_or(true);
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|source| StoreError::CreateDir { path: dir.display().to_string(), source })?;
            }
            private_file(path)?;
            let pool = sqlite_options(SQLITE_MAX_CONNECTIONS).connect(url).await.map_err(connect_err)?;
            // WAL is a property of the file: set once here, every later connection inherits it.
            let mode: String =
                sqlx::query_scalar("PRAGMA journal_mode = WAL").fetch_one(&pool).await.map_err(connect_err)?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(journal_mode = %mode, "SQLite site database is not in WAL mode");
            }
            if !existed {
                tracing::warn!(
                    path = %path.display(),
                    "created a new, empty site database at {}; if you expected an existing one, check site.database_url",
                    path.display()
                );
                created = Some(path.clone());
            }
            writer = Some(sqlite_options(1).connect(url).await.map_err(connect_err)?);
            pool
        }
        // Every connection to `:memory:` is its own database: keep exactly one, forever.
        Target::SqliteMemory { url } => sqlite_options(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect(url)
            .await
            .map_err(connect_err)?,
    };

    let writer = writer.unwrap_or_else(|| pool.clone());
    MIGRATOR.run(&writer).await.map_err(|source| StoreError::Migrate { backend, source })?;
    tracing::info!(backend = %backend, url = %shown, "site database opened and migrated");
    Ok(Opened { pool, writer, backend, created })
}

/// The SQLite file `url` names (absolute), or `None` for PostgreSQL, `:memory:` and bad URLs.
pub(crate) fn sqlite_file(url: &str) -> Option<PathBuf> {
    match parse_target(url).ok()? {
        Target::SqliteFile { path, .. } => Some(path),
        Target::Postgres { .. } | Target::SqliteMemory { .. } => None,
    }
}

/// Creates the SQLite file with mode 0600 if it does not exist (SQLite gives its `-wal` and
/// `-shm` files the mode of the database file), and logs a WARN for each of the three files that
/// exists readable by group or others: it holds BMC logins.
fn private_file(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path);
        match created {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(StoreError::CreateFile { path: path.display().to_string(), source }),
        }
        for suffix in ["", "-wal", "-shm"] {
            let file = PathBuf::from(format!("{}{suffix}", path.display()));
            if let Ok(meta) = std::fs::metadata(&file) {
                let mode = meta.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    tracing::warn!(file = %file.display(), mode = format!("{mode:o}"),
                        "SQLite site database file is readable by group or others; it holds BMC logins: chmod 600 it");
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Pool options for SQLite: bounded pool, busy timeout on every connection.
fn sqlite_options(max_connections: u32) -> AnyPoolOptions {
    AnyPoolOptions::new().max_connections(max_connections).acquire_timeout(ACQUIRE_TIMEOUT).after_connect(
        |conn, _meta| {
            Box::pin(async move {
                conn.execute(format!("PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}").as_str()).await?;
                Ok(())
            })
        },
    )
}

/// Decides the backend and rewrites SQLite URLs to an absolute file path with `mode=rwc`.
fn parse_target(url: &str) -> Result<Target> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        return Ok(Target::Postgres { url: url.to_owned() });
    }
    let unsupported = || StoreError::UnsupportedUrl { url: redact_url(url) };
    let (path_part, params) = if let Some(rest) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))
    {
        match rest.split_once('?') {
            Some((p, q)) => (percent_decode(p).ok_or_else(unsupported)?, q.to_owned()),
            None => (percent_decode(rest).ok_or_else(unsupported)?, String::new()),
        }
    } else if url.contains("://") || url.is_empty() {
        return Err(unsupported());
    } else {
        // A plain file path: taken literally (no query string, no percent-decoding).
        (url.to_owned(), String::new())
    };

    let has_param = |key: &str| params.split('&').any(|kv| kv.split('=').next() == Some(key));
    let memory = path_part == ":memory:" || params.split('&').any(|kv| kv == "mode=memory");
    if memory {
        let query = if params.is_empty() { String::new() } else { format!("?{params}") };
        return Ok(Target::SqliteMemory { url: format!("sqlite::memory:{query}") });
    }
    if path_part.is_empty() {
        return Err(unsupported());
    }

    let path = absolute(Path::new(&path_part));
    let mut query = params.clone();
    if !has_param("mode") {
        if !query.is_empty() {
            query.push('&');
        }
        query.push_str("mode=rwc");
    }
    let url = format!("sqlite://{}?{query}", percent_encode_path(&path.to_string_lossy()));
    Ok(Target::SqliteFile { url, path })
}

/// Joins a relative path onto the current directory (so the URL never has a "host" part).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|cwd| cwd.join(path)).unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Percent-encodes everything in a path that could confuse URL parsing (`?`, `#`, `%`, spaces, …).
fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/+,=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes; `None` if an escape is malformed or the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The URL with the userinfo password and any `password=` query value replaced by `***`.
pub(crate) fn redact_url(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let start = scheme_end + 3;
        let after = &out[start..];
        let authority_len = after.find(['/', '?', '#']).unwrap_or(after.len());
        if let Some(at) = after[..authority_len].rfind('@') {
            if let Some(colon) = after[..at].find(':') {
                out.replace_range(start + colon + 1..start + at, "***");
            }
        }
    }
    if let Some((base, query)) = out.split_once('?') {
        let redacted: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_owned(),
            })
            .collect();
        out = format!("{base}?{}", redacted.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_urls_pass_through() {
        for url in ["postgres://u@h/db", "postgresql://u:p@h:5432/db?sslmode=disable"] {
            assert_eq!(parse_target(url).unwrap(), Target::Postgres { url: url.to_owned() });
        }
    }

    #[test]
    fn sqlite_urls_get_absolute_paths_and_rwc() {
        let Target::SqliteFile { url, path } = parse_target("sqlite:///var/lib/hostfw/site.db").unwrap() else {
            panic!("not a file target")
        };
        assert_eq!(url, "sqlite:///var/lib/hostfw/site.db?mode=rwc");
        assert_eq!(path, PathBuf::from("/var/lib/hostfw/site.db"));

        let Target::SqliteFile { url, .. } = parse_target("sqlite:///x/site.db?mode=ro").unwrap() else {
            panic!("not a file target")
        };
        assert_eq!(url, "sqlite:///x/site.db?mode=ro");

        let Target::SqliteFile { url, path } = parse_target("/tmp/a dir/s?.db").unwrap() else {
            panic!("not a file target")
        };
        assert_eq!(url, "sqlite:///tmp/a%20dir/s%3F.db?mode=rwc");
        assert_eq!(path, PathBuf::from("/tmp/a dir/s?.db"));

        let Target::SqliteFile { path, .. } = parse_target("sqlite:data/site.db").unwrap() else {
            panic!("not a file target")
        };
        assert!(path.is_absolute() && path.ends_with("data/site.db"));
    }

    #[test]
    fn memory_and_unsupported() {
        assert!(matches!(parse_target("sqlite::memory:"), Ok(Target::SqliteMemory { .. })));
        assert!(matches!(parse_target("mysql://h/db"), Err(StoreError::UnsupportedUrl { .. })));
        assert!(matches!(parse_target(""), Err(StoreError::UnsupportedUrl { .. })));
        assert!(matches!(parse_target("sqlite://"), Err(StoreError::UnsupportedUrl { .. })));
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact_url("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("postgres://h/db?user=u&password=secret"), "postgres://h/db?user=u&password=***");
        assert!(!format!("{}", StoreError::UnsupportedUrl { url: redact_url("mysql://a:pw@h/d") }).contains("pw@"));
    }
}
