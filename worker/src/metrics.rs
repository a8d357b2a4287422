//! The worker's Prometheus endpoint (seed rule S47): `GET /metrics` on `[worker] metrics_listen`,
//! beside the probes `/healthz` and `/readyz` (`crate::health`).
//!
//! Every scrape reads the site database, so each worker replica reports the same site-wide truth
//! (NICo's gauges are only fresh on the replica holding the scheduler lock): the scheduler gauges
//! come from the site view (`deps.site_view`, the same as `site_view::read`) + `gates::plan`, the
//! `*_total` counters from the `counters` table, the compliance series (`hostfw_component_*`, the
//! numbers of `hostfw compliance`) from `compliance_read::read`, the error-budget series
//! (`hostfw_error_budget_hosts`, `hostfw_target_paused`, `budget`) and the approval-deadline
//! gauges (`hostfw_approval_*_hosts`, `approval`) and the brakes (`hostfw_freezes_active`,
//! `brakes`) from the same site view and plan, and the webhook outbox
//! (`hostfw_notification_deliveries_*`, `notifications`) from its tables and counter.
//! `hostfw_build_info` (`crate::build_info`) and the Temporal SDK's own worker metrics
//! (`temporal_*`) follow hostfw's series on the same page. Every sample carries the label
//! `site="<[site] name>"` (`site_label`), so one Prometheus can watch several sites.
//!
//! Owns the HTTP server and one scrape. It must not decide what a gauge means (`gauges`), format
//! text (`render`), write to the database, or answer a scrape with an error status: a failed
//! database read, or one slower than `tuning::METRICS_DB_TIMEOUT`, is logged and shown as
//! `hostfw_metrics_scrape_error 1`.

mod approval;
mod brakes;
mod budget;
mod compliance;
mod gauges;
mod notifications;
mod render;
mod sdk;
mod site_label;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use anyhow::Context;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use hostfw_activities::{compliance_read, Deps};
use hostfw_model::{gates, ComplianceView};
use tokio::task::JoinHandle;

use crate::site_workflows::KeeperStatus;
use crate::tuning::METRICS_DB_TIMEOUT;
use crate::{build_info, health};

pub use gauges::compute as compute_gauges;
pub use render::{render, Counters, Gauges, CONTENT_TYPE};
pub use sdk::{start_sdk_metrics, SdkMetrics};
pub use site_label::{label_site, SITE_LABEL};

/// What the endpoints read once the worker has its connections.
struct Attached {
    deps: Deps,
    sdk_metrics: Option<SocketAddr>,
}

#[derive(Clone)]
struct Shared {
    /// `[site] name`, the `site` label of every sample.
    site: Arc<str>,
    attached: Arc<OnceLock<Attached>>,
    keeper: Arc<OnceLock<KeeperStatus>>,
    http: reqwest::Client,
}

/// The metrics listener, serving from before the worker has its connections: until
/// [`MetricsServer::attach`], `/readyz` answers 503 and `/metrics` shows only the build info and
/// `hostfw_metrics_scrape_error 1`.
pub struct MetricsServer {
    /// The bound address.
    pub addr: SocketAddr,
    /// The server task.
    pub handle: JoinHandle<()>,
    attached: Arc<OnceLock<Attached>>,
    keeper: Arc<OnceLock<KeeperStatus>>,
}

impl MetricsServer {
    /// Serve `/metrics`, `/healthz` and `/readyz` on `listen` (port 0 picks one) for the site
    /// named `site` (`[site] name`: the `site` label of every sample).
    pub async fn start(listen: &str, site: &str) -> anyhow::Result<MetricsServer> {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("metrics server cannot listen on {listen}"))?;
        let addr = listener.local_addr()?;
        let attached = Arc::new(OnceLock::new());
        let keeper = Arc::new(OnceLock::new());
        let shared = Shared {
            site: Arc::from(site),
            attached: attached.clone(),
            keeper: keeper.clone(),
            http: reqwest::Client::new(),
        };
        let app = Router::new()
            .route("/metrics", get(metrics))
            .route("/healthz", get(health::healthz))
            .route("/readyz", get(readyz))
            .with_state(shared);
        let handle = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "metrics server stopped");
            }
        });
        Ok(MetricsServer { addr, handle, attached, keeper })
    }

    /// Make `/readyz` require the site workflows to run (a worker with `[worker]
    /// site_workflows`), naming the keeper's last failed start when one does not. Only the first
    /// call counts.
    pub fn watch_site_workflows(&self, keeper: KeeperStatus) {
        let _ = self.keeper.set(keeper);
    }

    /// Hand the endpoints the worker's dependencies; `sdk_metrics_addr` is the Temporal SDK
    /// exporter whose page is appended (see [`start_sdk_metrics`]). Only the first call counts.
    pub fn attach(&self, deps: Deps, sdk_metrics_addr: Option<SocketAddr>) {
        let _ = self.attached.set(Attached { deps, sdk_metrics: sdk_metrics_addr });
    }
}

/// [`MetricsServer::start`] and [`MetricsServer::attach`] at once. Returns the bound address and
/// the server task.
pub async fn serve_metrics(
    listen: &str,
    deps: Deps,
    sdk_metrics_addr: Option<SocketAddr>,
) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let server = MetricsServer::start(listen, &deps.site.current().site.name).await?;
    server.attach(deps, sdk_metrics_addr);
    Ok((server.addr, server.handle))
}

async fn metrics(State(s): State<Shared>) -> impl IntoResponse {
    let Some(attached) = s.attached.get() else {
        let page = format!("{}{}", build_info::render(), render(None, None, None));
        return ([(header::CONTENT_TYPE, CONTENT_TYPE)], label_site(&page, &s.site));
    };
    let mut page = scrape(&attached.deps).await;
    page.push_str(&build_info::render());
    if let Some(addr) = attached.sdk_metrics {
        match sdk::fetch(&s.http, addr).await {
            Ok(text) => page.push_str(&text),
            Err(e) => {
                tracing::warn!(error = %hostfw_model::error_chain(&e), %addr, "could not read the Temporal SDK metrics")
            }
        }
    }
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], label_site(&page, &s.site))
}

async fn readyz(State(s): State<Shared>) -> (StatusCode, String) {
    match s.attached.get() {
        Some(attached) => health::readyz(&attached.deps, s.keeper.get()).await,
        None => health::starting(),
    }
}

/// hostfw's series as of now (without the SDK's). The site database reads run at once and
/// together get `tuning::METRICS_DB_TIMEOUT`: a database that does not answer (an outage, a
/// hung connection) gives `hostfw_metrics_scrape_error 1` within that bound, not a hung scrape.
pub async fn scrape(deps: &Deps) -> String {
    let reads = async {
        let gauges = async {
            read_gauges(deps)
                .await
                .inspect_err(|e| tracing::error!(error = %hostfw_model::error_chain(e), "metrics: could not compute the scheduler gauges"))
                .ok()
        };
        let counters = async {
            deps.store
                .counter_list()
                .await
                .map(|rows| Counters::from_rows(&rows))
                .inspect_err(
                    |e| tracing::error!(error = %hostfw_model::error_chain(e), "metrics: could not read the counters"),
                )
                .ok()
        };
        let compliance = async {
            read_compliance(deps)
                .await
                .inspect_err(
                    |e| tracing::error!(error = %hostfw_model::error_chain(e), "metrics: could not read the compliance view"),
                )
                .ok()
        };
        let notifications = async {
            let read = async {
                let pending = deps.store.notification_pending().await?;
                let rows = deps.store.counter_list().await?;
                Ok::<_, hostfw_store::StoreError>(notifications::NotificationSeries::of(pending, &rows))
            };
            read.await
                .inspect_err(|e| tracing::error!(error = %hostfw_model::error_chain(e), "metrics: could not read the notification outbox"))
                .ok()
        };
        tokio::join!(gauges, counters, compliance, notifications)
    };
    let (gauges, counters, compliance, notified) = match tokio::time::timeout(METRICS_DB_TIMEOUT, reads).await {
        Ok(read) => read,
        Err(_) => {
            tracing::error!(
                timeout = ?METRICS_DB_TIMEOUT,
                "metrics: the site database did not answer within {METRICS_DB_TIMEOUT:?}; scrape_error is 1"
            );
            (None, None, None, None)
        }
    };
    let mut out = render(gauges.as_ref().map(|(g, _, _, _)| g), counters.as_ref(), compliance.as_ref());
    if let Some((_, budgets, approvals, (brakes, repair))) = &gauges {
        budget::write(&mut out, budgets);
        approval::write(&mut out, *approvals);
        brakes::write(&mut out, brakes);
        brakes::write_repair(&mut out, *repair);
    }
    if let Some(n) = &notified {
        notifications::write(&mut out, n);
    }
    out
}

/// Why the scheduler gauges or the compliance view could not be read.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error(transparent)]
    Catalog(#[from] hostfw_activities::catalog_source::CatalogUnavailable),
    #[error(transparent)]
    Store(#[from] hostfw_store::StoreError),
}

/// The scheduler gauges, the error budgets, the approval deadlines and the brakes of one scrape.
type SchedulerSeries = (Gauges, budget::BudgetSeries, approval::ApprovalSeries, (gates::Brakes, brakes::RepairSeries));

async fn read_gauges(deps: &Deps) -> Result<SchedulerSeries, ReadError> {
    let catalog = deps.catalog.current().await?;
    let (view, _) = deps.site_view.read(&deps.store, &catalog, &deps.site.current(), hostfw_store::now_ms()).await?;
    let plan = gates::plan(&view.input);
    let budgets = budget::BudgetSeries {
        records: view.input.targets.clone(),
        paused: plan.paused.clone(),
        waves: plan.waves.clone(),
    };
    let approvals = approval::ApprovalSeries::of(&view.input, &plan);
    let repair = brakes::RepairSeries { in_repair: plan.in_repair.len(), cap: view.input.policy.max_hosts_in_repair };
    Ok((compute_gauges(&view.requests, &plan), budgets, approvals, (plan.brakes.clone(), repair)))
}

async fn read_compliance(deps: &Deps) -> Result<ComplianceView, ReadError> {
    let catalog = deps.catalog.current().await?;
    Ok(compliance_read::read(&deps.store, &catalog, &deps.site.current(), hostfw_store::now_ms()).await?)
}
