//! Test harness: runs one test body on SQLite (a file in a temp dir, always) and on PostgreSQL
//! (a fresh database per test, dropped afterwards) when a server is reachable.
//!
//! Owns backend setup and teardown only (every store starts with `test_key()` as its site key); it must not contain assertions about store behaviour.
//! PostgreSQL URL: `HOSTFW_TEST_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test`.
//! Unreachable server: prints `SKIPPED: ...` to stderr and passes, unless `HOSTFW_REQUIRE_PG=1`.
#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hostfw_store::{Backend, SiteKey, Store};
use sqlx::{Connection, Executor};

/// What a test body gets.
pub struct Ctx {
    /// A migrated, empty store.
    pub store: Store,
    /// The URL it was opened with (to reconnect).
    pub url: String,
}

/// The site key every test store starts with (fixed bytes; `other_key` is a different one).
pub fn test_key() -> SiteKey {
    SiteKey::from_bytes([7; 32])
}

/// A second, different site key.
pub fn other_key() -> SiteKey {
    SiteKey::from_bytes([9; 32])
}

/// The PostgreSQL server used for tests (a database on it that we may connect to).
pub fn pg_admin_url() -> String {
    std::env::var("HOSTFW_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

fn pg_required() -> bool {
    std::env::var("HOSTFW_REQUIRE_PG").is_ok_and(|v| v == "1")
}

/// A name unique across tests, processes and runs.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    format!("{}_{:x}_{}", std::process::id(), nanos, COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// `admin` with its database name replaced by `db` (query string kept).
pub fn with_database(admin: &str, db: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (admin, String::new()),
    };
    let authority_start = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{base}/{db}{query}")
}

/// Runs `body` in its own task so a panic still lets the caller clean up; re-raises the panic.
async fn run_body<F, Fut>(ctx: Ctx, body: F) -> Result<(), tokio::task::JoinError>
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(body(ctx)).await
}

fn reraise(res: Result<(), tokio::task::JoinError>) {
    if let Err(e) = res {
        if e.is_panic() {
            std::panic::resume_unwind(e.into_panic());
        }
        panic!("test body did not finish: {e}");
    }
}

/// Runs `body` against a fresh SQLite file under a temp dir (in a directory that does not exist
/// yet, so parent creation is exercised every time).
pub async fn on_sqlite<F, Fut>(body: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("nested").join("site.db");
    let url = format!("sqlite://{}", path.display());
    let store = Store::connect(&url).await.expect("connect SQLite").with_site_key(Some(test_key()));
    assert_eq!(store.backend(), Backend::Sqlite);
    let res = run_body(Ctx { store: store.clone(), url }, body).await;
    store.close().await;
    drop(dir);
    reraise(res);
}

/// Runs `body` against a fresh PostgreSQL database, or skips loudly if the server is unreachable.
pub async fn on_postgres<F, Fut>(test: &str, body: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    sqlx::any::install_default_drivers();
    let admin_url = pg_admin_url();
    let connect = tokio::time::timeout(Duration::from_secs(5), sqlx::AnyConnection::connect(&admin_url)).await;
    let mut admin = match connect {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return skip(test, &admin_url, &e.to_string()),
        Err(_) => return skip(test, &admin_url, "timed out after 5 s"),
    };

    let db = format!("hostfw_t_{}", unique_suffix());
    let mut attempt = 0;
    loop {
        attempt += 1;
        match admin.execute(format!("CREATE DATABASE {db}").as_str()).await {
            Ok(_) => break,
            // Concurrent CREATE DATABASE from template1 can collide; try again shortly.
            Err(e) if attempt < 10 && e.to_string().contains("being accessed by other users") => {
                tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
            }
            Err(e) => panic!("CREATE DATABASE {db} on {admin_url}: {e}"),
        }
    }

    let url = with_database(&admin_url, &db);
    let res = match Store::connect(&url).await {
        Ok(store) => {
            let store = store.with_site_key(Some(test_key()));
            assert_eq!(store.backend(), Backend::Postgres);
            let res = run_body(Ctx { store: store.clone(), url }, body).await;
            store.close().await;
            res
        }
        Err(e) => {
            drop_database(&mut admin, &db).await;
            panic!("Store::connect to fresh PostgreSQL database {db}: {e}");
        }
    };
    drop_database(&mut admin, &db).await;
    let _ = admin.close().await;
    reraise(res);
}

async fn drop_database(admin: &mut sqlx::AnyConnection, db: &str) {
    if let Err(e) = admin.execute(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)").as_str()).await {
        eprintln!("warning: could not drop test database {db}: {e}");
    }
}

fn skip(test: &str, url: &str, error: &str) {
    if pg_required() {
        panic!("HOSTFW_REQUIRE_PG=1 but PostgreSQL is not reachable at {url}: {error}");
    }
    // Written to the real stderr (not `eprintln!`, which libtest captures for passing tests), so
    // the skip is visible in every `cargo test` run.
    let line = format!("SKIPPED: PostgreSQL not reachable at {url}: {error} (test {test})\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

/// Declares `sqlite::<name>` and `postgres::<name>` tests running the async fn `<name>(Ctx)`.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    $crate::common::on_sqlite(super::$name).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    $crate::common::on_postgres(stringify!($name), super::$name).await
                }
            )*
        }
    };
}
