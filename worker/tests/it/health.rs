//! The probes beside `/metrics` without a Temporal server: `/healthz` 200; `/readyz` 200 with a
//! working site database and 503 naming it once the database stops answering; before the worker
//! has its connections `/readyz` is 503 and `/metrics` shows the build info and a scrape error;
//! a failed scheduler pass shows in `hostfw_manager_passes_total{result="failed"}`.

use std::net::SocketAddr;

use hostfw_fixtures::SiteToml;
use hostfw_worker::{serve_metrics, MetricsServer};
use hostfw_workflows::PassRequest;
use tempfile::TempDir;

async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let response = reqwest::get(format!("http://{addr}{path}")).await.expect("GET");
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_follows_the_site_database() {
    let dir = TempDir::new().unwrap();
    let site = SiteToml::sim_site(crate::common::SITE_NAME).install(dir.path());
    let deps = crate::common::deps(&site).await;
    let (addr, server) = serve_metrics("127.0.0.1:0", deps.clone(), None).await.unwrap();
    assert_eq!(get(addr, "/healthz").await, (200, "ok\n".to_string()));
    assert_eq!(get(addr, "/readyz").await, (200, "ready\n".to_string()));
    deps.store.close().await;
    let (status, body) = get(addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("not ready: the site database: ping"), "{body}");
    assert_eq!(get(addr, "/healthz").await.0, 200, "liveness does not depend on the database");
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_attach_the_worker_is_not_ready_but_serves_build_info() {
    let server = MetricsServer::start("127.0.0.1:0", "health-site").await.unwrap();
    let (status, body) = get(server.addr, "/readyz").await;
    assert_eq!(status, 503);
    assert!(body.contains("waiting for Temporal and the site database"), "{body}");
    let (status, page) = get(server.addr, "/metrics").await;
    assert_eq!(status, 200);
    let page = crate::common::without_site(&page, "health-site");
    let build = format!(
        "hostfw_build_info{{version=\"{}\",git_commit=\"{}\",workflow_changes=\"{}\"}} 1",
        hostfw_worker::build_info::VERSION,
        hostfw_worker::build_info::GIT_COMMIT,
        hostfw_workflows::versions::newest()
    );
    assert!(page.contains(&build), "{page}");
    assert!(page.contains("hostfw_metrics_scrape_error 1"), "{page}");

    let dir = TempDir::new().unwrap();
    let site = SiteToml::sim_site(crate::common::SITE_NAME).install(dir.path());
    server.attach(crate::common::deps(&site).await, None);
    assert_eq!(get(server.addr, "/readyz").await.0, 200);
    let page = crate::common::without_site(&get(server.addr, "/metrics").await.1, "health-site");
    assert!(page.contains("hostfw_metrics_scrape_error 0") && page.contains(&build), "{page}");
    server.handle.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_scheduler_pass_is_counted() {
    let dir = TempDir::new().unwrap();
    let site = SiteToml::sim_site(crate::common::SITE_NAME).install(dir.path());
    // No Temporal client: the pass cannot start host workflows and fails.
    let deps = crate::common::deps(&site).await;
    let (addr, server) = serve_metrics("127.0.0.1:0", deps.clone(), None).await.unwrap();
    let page = crate::common::without_site(&get(addr, "/metrics").await.1, "worker-tests");
    assert!(page.contains("hostfw_manager_passes_total{result=\"failed\"} 0\n"), "{page}");
    let failed = hostfw_activities::manager_pass::pass(&deps, PassRequest { reasons: vec!["test".into()] }).await;
    assert!(failed.is_err());
    let page = crate::common::without_site(&get(addr, "/metrics").await.1, "worker-tests");
    assert!(page.contains("hostfw_manager_passes_total{result=\"failed\"} 1\n"), "{page}");
    assert!(page.contains("hostfw_manager_passes_total{result=\"succeeded\"} 0\n"), "{page}");
    server.abort();
}
