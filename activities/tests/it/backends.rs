//! Where a test's site database lives: a SQLite file in a temp dir (always), or a fresh
//! PostgreSQL database (dropped afterwards) when a server is reachable, as the store's own tests
//! do: `HOSTFW_TEST_PG_URL` (default `postgres://postgres@127.0.0.1:5432/test`); an unreachable
//! server prints `SKIPPED: ...` and passes, unless `HOSTFW_REQUIRE_PG=1`.
//!
//! Owns setting up and tearing down databases only; it must not assert anything about hostfw.

use std::future::Future;
use std::time::Duration;

use sqlx::{Connection, Executor};

/// A test's database: its URL, and raw SQL for what the store cannot do (deletes by hand).
pub struct Db {
    pub url: String,
}

impl Db {
    /// Runs `sql` on its own connection.
    pub async fn execute(&self, sql: &str) {
        sqlx::any::install_default_drivers();
        let url = match self.url.strip_prefix("sqlite://") {
            Some(path) => format!("sqlite://{path}?mode=rw"),
            None => self.url.clone(),
        };
        let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap_or_else(|e| panic!("connect {url}: {e}"));
        conn.execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        conn.close().await.unwrap();
    }
}

/// Runs `body` on a SQLite file in a fresh temp dir.
pub async fn on_sqlite<F, Fut>(body: F)
where
    F: FnOnce(Db) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("site.db").display());
    reraise(tokio::spawn(body(Db { url })).await);
}

/// Runs `body` on a fresh PostgreSQL database, or skips loudly if the server is unreachable.
pub async fn on_postgres<F, Fut>(test: &str, body: F)
where
    F: FnOnce(Db) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    sqlx::any::install_default_drivers();
    let admin_url = std::env::var("HOSTFW_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let mut admin = match tokio::time::timeout(Duration::from_secs(5), sqlx::AnyConnection::connect(&admin_url)).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return skip(test, &admin_url, &e.to_string()),
        Err(_) => return skip(test, &admin_url, "timed out after 5 s"),
    };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let db = format!("hostfw_a_{}_{nanos:x}", std::process::id());
    admin
        .execute(format!("CREATE DATABASE {db}").as_str())
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {db}: {e}"));
    let (path, query) =
        admin_url.split_once('?').map_or((admin_url.as_str(), String::new()), |(p, q)| (p, format!("?{q}")));
    let (base, _) = path.rsplit_once('/').expect("a database in the admin URL");
    let res = tokio::spawn(body(Db { url: format!("{base}/{db}{query}") })).await;
    if let Err(e) = admin.execute(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)").as_str()).await {
        eprintln!("warning: could not drop test database {db}: {e}");
    }
    let _ = admin.close().await;
    reraise(res);
}

fn skip(test: &str, url: &str, error: &str) {
    if std::env::var("HOSTFW_REQUIRE_PG").is_ok_and(|v| v == "1") {
        panic!("HOSTFW_REQUIRE_PG=1 but PostgreSQL is not reachable at {url}: {error}");
    }
    let line = format!("SKIPPED: PostgreSQL not reachable at {url}: {error} (test {test})\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

fn reraise(res: Result<(), tokio::task::JoinError>) {
    if let Err(e) = res {
        if e.is_panic() {
            std::panic::resume_unwind(e.into_panic());
        }
        panic!("test body did not finish: {e}");
    }
}
