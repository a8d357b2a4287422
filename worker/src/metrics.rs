//! The worker's Prometheus endpoint (seed rule S47): `GET /metrics` on `[worker] metrics_listen`.
//!
//! Every scrape reads the site database, so each worker replica reports the same site-wide truth
//! (NICo's gauges are only fresh on the replica holding the scheduler lock): the scheduler gauges
//! come from `site_view::read` + `gates::plan`, the `*_total` counters from the `counters` table.
//! The Temporal SDK's own worker metrics (`temporal_*`) follow hostfw's series on the same page.
//!
//! Owns the HTTP server and one scrape. It must not decide what a gauge means (`gauges`), format
//! text (`render`), write to the database, or answer a scrape with an error status: a failed
//! database read is logged and shown as `hostfw_metrics_scrape_error 1`.

mod gauges;
mod render;
mod sdk;

use std::net::SocketAddr;

use anyhow::Context;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use hostfw_activities::{site_view, Deps};
use hostfw_model::gates;
use tokio::task::JoinHandle;

pub use gauges::compute as compute_gauges;
pub use render::{render, Counters, Gauges, CONTENT_TYPE};
pub use sdk::{start_sdk_metrics, SdkMetrics};

#[derive(Clone)]
struct Scraper {
    deps: Deps,
    sdk_metrics: Option<SocketAddr>,
    http: reqwest::Client,
}

/// Serve `GET /metrics` on `listen` (port 0 picks one); `sdk_metrics_addr` is the Temporal SDK
/// exporter whose page is appended (see [`start_sdk_metrics`]). Returns the bound address and
/// the server task.
pub async fn serve_metrics(
    listen: &str,
    deps: Deps,
    sdk_metrics_addr: Option<SocketAddr>,
) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("metrics server cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let scraper = Scraper { deps, sdk_metrics: sdk_metrics_addr, http: reqwest::Client::new() };
    let app = Router::new().route("/metrics", get(metrics)).with_state(scraper);
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "metrics server stopped");
        }
    });
    Ok((addr, handle))
}

async fn metrics(State(s): State<Scraper>) -> impl IntoResponse {
    let mut page = scrape(&s.deps).await;
    if let Some(addr) = s.sdk_metrics {
        match sdk::fetch(&s.http, addr).await {
            Ok(text) => page.push_str(&text),
            Err(e) => {
                tracing::warn!(error = %hostfw_model::error_chain(&e), %addr, "could not read the Temporal SDK metrics")
            }
        }
    }
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], page)
}

/// hostfw's series as of now (without the SDK's).
pub async fn scrape(deps: &Deps) -> String {
    let gauges = read_gauges(deps)
        .await
        .inspect_err(|e| tracing::error!(error = %hostfw_model::error_chain(e), "metrics: could not compute the scheduler gauges"))
        .ok();
    let counters = deps
        .store
        .counter_list()
        .await
        .map(|rows| Counters::from_rows(&rows))
        .inspect_err(|e| tracing::error!(error = %hostfw_model::error_chain(e), "metrics: could not read the counters"))
        .ok();
    render(gauges.as_ref(), counters.as_ref())
}

/// Why the scheduler gauges could not be computed.
#[derive(Debug, thiserror::Error)]
enum GaugeError {
    #[error(transparent)]
    Catalog(#[from] hostfw_activities::catalog_source::CatalogUnavailable),
    #[error(transparent)]
    Store(#[from] hostfw_store::StoreError),
}

async fn read_gauges(deps: &Deps) -> Result<Gauges, GaugeError> {
    let catalog = deps.catalog.current().await?;
    let view = site_view::read(&deps.store, &catalog, &deps.site, hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    Ok(compute_gauges(&view.requests, &plan))
}
