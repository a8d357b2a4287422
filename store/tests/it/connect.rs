//! Connecting on both backends (migrations idempotent, data survives reconnecting), and the
//! SQLite specifics: directories and file created (mode 0600, WAL and shm files too), WAL mode, URL forms, unsupported URLs.

use crate::common;

use common::Ctx;
use hostfw_store::{Backend, NewMachine, Store, StoreError};
use sqlx::Connection;

async fn migrations_are_idempotent(Ctx { store, url }: Ctx) {
    store
        .machine_upsert(&NewMachine {
            id: "m".to_owned(),
            bmc_address: "10.0.0.1".parse().unwrap(),
            vendor: None,
            model: None,
            state: hostfw_model::HostState::Ready,
            instance_id: None,
            labels: None,
        })
        .await
        .unwrap();
    // Connect twice more to the same database: migrations re-run as no-ops, data stays.
    let again = Store::connect(&url).await.expect("second connect");
    let third = Store::connect(&url).await.expect("third connect");
    assert_eq!(again.backend(), store.backend());
    assert_eq!(again.machine_count().await.unwrap(), 1);
    assert_eq!(third.machine_get("m").await.unwrap().unwrap().bmc_address.to_string(), "https://10.0.0.1:443");
    again.close().await;
    third.close().await;
    assert!(format!("{store:?}").contains("backend"));
}

both_backends!(migrations_are_idempotent);

#[tokio::test]
async fn sqlite_creates_dirs_file_and_uses_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("site.db");
    let store = Store::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    assert_eq!(store.backend(), Backend::Sqlite);
    assert!(path.is_file(), "database file created");
    store.machine_count().await.unwrap();

    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&format!("sqlite://{}?mode=ro", path.display())).await.unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut conn).await.unwrap();
    assert_eq!(mode.to_ascii_lowercase(), "wal");
    conn.close().await.unwrap();

    // It holds BMC logins: owner-only, and SQLite gives its WAL and shared-memory files the same mode.
    store.audit_append("t", "a", "x", "").await.unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    for suffix in ["", "-wal", "-shm"] {
        let file = format!("{}{suffix}", path.display());
        let mode = std::fs::metadata(&file).unwrap_or_else(|e| panic!("{file}: {e}")).permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{file} has mode {mode:o}");
    }
    store.close().await;
}

#[tokio::test]
async fn sqlite_url_forms() {
    let dir = tempfile::tempdir().unwrap();
    // Plain path (with a space) and the `sqlite:` form both work and point at the same file.
    let path = dir.path().join("with space").join("site.db");
    let plain = Store::connect(path.to_str().unwrap()).await.unwrap();
    plain.audit_append("t", "a", "x", "").await.unwrap();
    assert!(path.is_file());
    let encoded = format!("sqlite:{}", path.display().to_string().replace(' ', "%20"));
    let same = Store::connect(&encoded).await.unwrap();
    assert_eq!(same.audit_list(10).await.unwrap().len(), 1);

    // In-memory works too (one connection, one database).
    let mem = Store::connect("sqlite::memory:").await.unwrap();
    mem.audit_append("t", "a", "x", "").await.unwrap();
    mem.audit_append("t", "a", "y", "").await.unwrap();
    assert_eq!(mem.audit_list(10).await.unwrap().len(), 2);
}

#[tokio::test]
async fn unsupported_url() {
    match Store::connect("mysql://user:hunter2@db/site").await {
        Err(e @ StoreError::UnsupportedUrl { .. }) => {
            assert!(!e.to_string().contains("hunter2"), "{e}")
        }
        other => panic!("expected UnsupportedUrl, got {other:?}"),
    }
}

#[tokio::test]
async fn postgres_connect_error_hides_password() {
    // An invalid option fails at once (an unreachable server would be retried for the whole
    // acquire timeout); the error must name the URL without its password.
    match Store::connect("postgres://user:hunter2@127.0.0.1:1/db?sslmode=bogus").await {
        Err(e @ StoreError::Connect { backend: Backend::Postgres, .. }) => {
            assert!(!e.to_string().contains("hunter2"), "{e}");
            assert!(!format!("{e:?}").contains("hunter2"), "{e:?}");
            assert!(e.to_string().contains("user:***@127.0.0.1:1/db"), "{e}");
        }
        other => panic!("expected Connect error, got {other:?}"),
    }
}

#[test]
fn test_database_urls() {
    assert_eq!(common::with_database("postgres://u@h:5432/test", "x"), "postgres://u@h:5432/x");
    assert_eq!(common::with_database("postgres://u@h:5432", "x"), "postgres://u@h:5432/x");
    assert_eq!(common::with_database("postgres://u@h/test?sslmode=disable", "x"), "postgres://u@h/x?sslmode=disable");
}

#[tokio::test]
async fn a_new_or_machineless_sqlite_database_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("site.db");
    let url = format!("sqlite://{}", path.display());

    let created = Store::connect(&url).await.unwrap();
    assert_eq!(created.created_file(), Some(path.as_path()));
    let warning = created.emptiness_warning().await.unwrap().expect("a created database warns");
    assert!(warning.contains("created a new, empty site database at") && warning.contains(&path.display().to_string()));
    assert!(warning.contains("site.database_url"), "{warning}");
    created.close().await;

    let existing = Store::connect(&url).await.unwrap();
    assert_eq!(existing.created_file(), None, "the file existed: not created again");
    let warning = existing.emptiness_warning().await.unwrap().expect("no machines warns");
    assert!(warning.contains("has no machines registered") && warning.contains("site.database_url"), "{warning}");
    existing
        .machine_upsert(&NewMachine {
            id: "m".to_owned(),
            bmc_address: "10.0.0.1".parse().unwrap(),
            vendor: None,
            model: None,
            state: hostfw_model::HostState::Ready,
            instance_id: None,
            labels: None,
        })
        .await
        .unwrap();
    assert_eq!(existing.emptiness_warning().await.unwrap(), None);
    existing.close().await;

    let memory = Store::connect("sqlite::memory:").await.unwrap();
    assert_eq!(memory.created_file(), None);
    memory.close().await;
}
