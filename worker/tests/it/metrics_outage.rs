//! `/metrics` during a site-database outage answers within `tuning::METRICS_DB_TIMEOUT` with
//! `hostfw_metrics_scrape_error 1` instead of hanging. The outage: the worker's PostgreSQL
//! connections go through a proxy that, once frozen, keeps every connection open and answers
//! nothing (a hung server or a silent network drop), so each query waits forever unless bounded.
//! Needs PostgreSQL (`HOSTFW_TEST_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test`);
//! skipped loudly without it unless `HOSTFW_REQUIRE_PG=1`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hostfw_fixtures::SiteToml;
use hostfw_worker::serve_metrics;
use hostfw_worker::tuning::METRICS_DB_TIMEOUT;
use sqlx::{Connection, Executor};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy to `upstream` that forwards until frozen, then holds every connection (old and
/// new) open and silent.
struct FreezableProxy {
    addr: std::net::SocketAddr,
    frozen: Arc<AtomicBool>,
}

impl FreezableProxy {
    async fn start(upstream: String) -> FreezableProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let frozen = Arc::new(AtomicBool::new(false));
        let flag = frozen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { return };
                let flag = flag.clone();
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if flag.load(Ordering::SeqCst) {
                        return hold(client).await;
                    }
                    let Ok(server) = TcpStream::connect(&upstream).await else { return };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    tokio::join!(pipe(cr, sw, flag.clone()), pipe(sr, cw, flag));
                });
            }
        });
        FreezableProxy { addr, frozen }
    }

    fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }
}

/// Keep `socket` open, never answering.
async fn hold<T>(socket: T) {
    std::future::pending::<()>().await;
    drop(socket);
}

/// Copy `from` to `to` until frozen; then keep both open and forward nothing more.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if frozen.load(Ordering::SeqCst) {
            return hold((from, to)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

fn pg_admin_url() -> String {
    std::env::var("HOSTFW_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_answer_at_once_when_the_database_hangs() {
    sqlx::any::install_default_drivers();
    let admin_url = pg_admin_url();
    let mut admin = match tokio::time::timeout(Duration::from_secs(5), sqlx::AnyConnection::connect(&admin_url)).await {
        Ok(Ok(conn)) => conn,
        other => {
            let why =
                other.map_or_else(|_| "timed out".to_string(), |r| r.err().map(|e| e.to_string()).unwrap_or_default());
            assert!(std::env::var("HOSTFW_REQUIRE_PG").as_deref() != Ok("1"), "PostgreSQL at {admin_url}: {why}");
            eprintln!("SKIPPED: metrics_answer_at_once_when_the_database_hangs needs PostgreSQL at {admin_url}: {why}");
            return;
        }
    };
    let db = format!("hostfw_w_{}_{}", std::process::id(), hostfw_store::now_ms());
    admin.execute(format!("CREATE DATABASE {db}").as_str()).await.unwrap();

    let mut url = reqwest::Url::parse(&admin_url).unwrap();
    let upstream = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
    let proxy = FreezableProxy::start(upstream).await;
    url.set_host(Some("127.0.0.1")).unwrap();
    url.set_port(Some(proxy.addr.port())).unwrap();
    url.set_path(&format!("/{db}"));

    let dir = TempDir::new().unwrap();
    let mut site = SiteToml::sim_site(crate::common::SITE_NAME).install(dir.path());
    site.site.database_url = url.to_string();
    let deps = crate::common::deps(&site).await;
    let (addr, server) = serve_metrics("127.0.0.1:0", deps.clone(), None).await.unwrap();
    let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let page = http.get(format!("http://{addr}/metrics")).send().await.unwrap().text().await.unwrap();
    let page = crate::common::without_site(&page, "worker-tests");
    assert!(page.contains("hostfw_metrics_scrape_error 0"), "{page}");

    proxy.freeze();
    let started = Instant::now();
    let response = http.get(format!("http://{addr}/metrics")).send().await;
    let took = started.elapsed();
    let response = response.unwrap_or_else(|e| panic!("/metrics did not answer within 20 s of a database hang: {e}"));
    assert_eq!(response.status(), 200);
    let page = crate::common::without_site(&response.text().await.unwrap(), "worker-tests");
    assert!(page.contains("hostfw_metrics_scrape_error 1"), "{page}");
    assert!(page.contains("hostfw_build_info{"), "the rest of the page is served: {page}");
    assert!(took < METRICS_DB_TIMEOUT + Duration::from_secs(2), "took {took:?}, bound {METRICS_DB_TIMEOUT:?}");

    server.abort();
    let _ = admin.execute(format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)").as_str()).await;
}
