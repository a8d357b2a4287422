//! Databases written before `BmcAddress` (migration 0006 plus the startup pass), on both
//! backends: bare addresses keep their old meaning (plain http), every stored address ends
//! canonical in `machines` and `explored_reports`, lookups find the rewritten rows, and two machines
//! that turn out to share a BMC stop the startup, naming both, until an operator removes one.
//!
//! A "previous version" database is made by un-recording migration 6 and writing rows the way the
//! old code did (raw SQL: the store API only accepts canonical addresses now).

use crate::common;

use common::Ctx;
use hostfw_model::BmcLookup;
use hostfw_store::Store;
use sqlx::AnyPool;

/// Rolls the database at `url` back to "0006 not applied" and inserts legacy rows.
async fn as_previous_version(url: &str, machines: &[(&str, &str)], reports: &[(&str, Option<&str>, i64)]) {
    let pool = AnyPool::connect(url).await.expect("raw connection");
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = 6").execute(&pool).await.unwrap();
    for (id, bmc) in machines {
        sqlx::query(
            "INSERT INTO machines (id, bmc_address, state, created_at_ms, updated_at_ms) VALUES ($1, $2, 'Ready', 1, 1)",
        )
        .bind(*id)
        .bind(*bmc)
        .execute(&pool)
        .await
        .unwrap();
    }
    for (bmc, machine, at) in reports {
        sqlx::query(
            "INSERT INTO explored_reports (bmc_address, machine_id, error, explored_at_ms) VALUES ($1, $2, 'old', $3)",
        )
        .bind(*bmc)
        .bind(*machine)
        .bind(*at)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
}

/// The stored text of a column, ordered.
async fn stored(url: &str, sql: &str) -> Vec<String> {
    let pool = AnyPool::connect(url).await.expect("raw connection");
    let rows: Vec<String> = sqlx::query_scalar(sql).fetch_all(&pool).await.unwrap();
    pool.close().await;
    rows
}

async fn legacy_addresses_keep_their_meaning(Ctx { store, url }: Ctx) {
    store.close().await;
    as_previous_version(
        &url,
        &[
            ("a", "10.0.0.1:443"),
            ("b", "HTTPS://10.0.0.2/"),
            ("c", "http://127.0.0.1:8000/bmc/H1/"),
            ("d", "[fe80::1]:8000"),
            ("e", "10.0.0.5"),
            ("f", "BMC-6.example:8443"),
        ],
        // The same BMC twice: bare (newer) and already with http:// (older).
        &[("10.0.0.1:443", Some("a"), 20), ("http://10.0.0.1:443", None, 10), ("127.0.0.1:8000/bmc/H1", Some("c"), 5)],
    )
    .await;

    let store = Store::connect(&url).await.expect("migrates");
    let expected = [
        "http://10.0.0.1:443",
        "https://10.0.0.2:443",
        "http://127.0.0.1:8000/bmc/H1",
        "http://[fe80::1]:8000",
        "http://10.0.0.5:80",
        "http://bmc-6.example:8443",
    ];
    assert_eq!(stored(&url, "SELECT bmc_address FROM machines ORDER BY id").await, expected);
    assert_eq!(
        stored(&url, "SELECT bmc_address FROM explored_reports ORDER BY bmc_address").await,
        ["http://10.0.0.1:443", "http://127.0.0.1:8000/bmc/H1"],
        "one report per BMC, canonical"
    );

    // The old meaning (http) is kept: the bare form now means https, and is still found because a
    // lookup without a scheme tries both; with the scheme written only http matches.
    let find = |text: &str| text.parse::<BmcLookup>().unwrap();
    let a = store.machine_by_bmc(&find("http://10.0.0.1:443")).await.unwrap().unwrap();
    assert_eq!((a.id.as_str(), a.bmc_address.scheme().as_str()), ("a", "http"));
    assert_eq!(store.machine_by_bmc(&find("https://10.0.0.1:443")).await.unwrap(), None);
    assert_eq!(store.machine_by_bmc(&find("10.0.0.1:443")).await.unwrap().unwrap().id, "a");
    let report = store.report_get(&find("10.0.0.1:443")).await.unwrap().unwrap();
    assert_eq!((report.machine_id.as_deref(), report.explored_at_ms), (Some("a"), 20), "the newest report is kept");

    // Idempotent: connecting again changes nothing.
    store.close().await;
    let again = Store::connect(&url).await.expect("second connect");
    assert_eq!(stored(&url, "SELECT bmc_address FROM machines ORDER BY id").await, expected);
    assert_eq!(again.machine_count().await.unwrap(), 6);
    again.close().await;
}

async fn two_machines_on_one_bmc_stop_the_startup(Ctx { store, url }: Ctx) {
    store.close().await;
    as_previous_version(&url, &[("x", "10.0.0.7:80"), ("y", "http://10.0.0.7:80"), ("z", "10.0.0.8:443")], &[]).await;

    let err = Store::connect(&url).await.expect_err("x and y are one BMC");
    let text = err.to_string();
    assert!(
        text.contains("x (stored as") && text.contains("y (stored as") && text.contains("http://10.0.0.7:80"),
        "{text}"
    );
    // The meaning of no row changed: 0006 only wrote the scheme down (and a slash, to avoid a clash).
    assert_eq!(
        stored(&url, "SELECT bmc_address FROM machines ORDER BY id").await,
        ["http://10.0.0.7:80/", "http://10.0.0.7:80", "http://10.0.0.8:443"]
    );

    // The operator removes one; the next start finishes the rewrite.
    let pool = AnyPool::connect(&url).await.unwrap();
    sqlx::query("DELETE FROM machines WHERE id = 'y'").execute(&pool).await.unwrap();
    pool.close().await;
    let store = Store::connect(&url).await.expect("starts once the duplicate is gone");
    assert_eq!(
        stored(&url, "SELECT bmc_address FROM machines ORDER BY id").await,
        ["http://10.0.0.7:80", "http://10.0.0.8:443"]
    );
    store.close().await;
}

both_backends!(legacy_addresses_keep_their_meaning, two_machines_on_one_bmc_stop_the_startup);
