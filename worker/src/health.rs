//! Liveness and readiness on the metrics listener (`[worker] metrics_listen`):
//! - `GET /healthz`: 200 `ok` while the process serves HTTP (a liveness probe restarts it otherwise);
//! - `GET /readyz`: 200 `ready` only when Temporal's frontend answers its gRPC health check as
//!   SERVING, the site database answers `SELECT 1` and, on a worker that keeps the site workflows
//!   (`[worker] site_workflows`), the Machine Update Manager and the Site Explorer both run; else
//!   503 with one plain-text line naming what is not ready and why (also while the worker is
//!   still waiting for them at start).
//!
//! Owns the probes and their answers. Each readiness check is bounded by
//! `tuning::READINESS_TIMEOUT` and all run at once, so a probe costs a few gRPC calls and one
//! query and never hangs. It must not change anything (no writes, no reconnects, no starts: the
//! keeper in `site_workflows` starts what is missing).

use std::future::Future;

use axum::http::StatusCode;
use hostfw_activities::Deps;
use hostfw_model::error_chain;
use temporalio_client::tonic;
use temporalio_client::Client;
use temporalio_common::protos::grpc::health::v1::health_check_response::ServingStatus;
use temporalio_common::protos::grpc::health::v1::HealthCheckRequest;

use crate::site_workflows::{self, KeeperStatus};
use crate::tuning::READINESS_TIMEOUT;

/// The gRPC service whose health Temporal's frontend reports (what `temporal operator cluster
/// health` asks for).
const FRONTEND_SERVICE: &str = "temporal.api.workflowservice.v1.WorkflowService";

/// The `/healthz` answer.
pub async fn healthz() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok\n")
}

/// The `/readyz` answer before the worker has its connections.
pub fn starting() -> (StatusCode, String) {
    (StatusCode::SERVICE_UNAVAILABLE, "not ready: starting: waiting for Temporal and the site database\n".to_string())
}

/// The `/readyz` answer for a worker with its dependencies; `keeper` is set on a worker that keeps
/// the site workflows running (then both must run).
pub async fn readyz(deps: &Deps, keeper: Option<&KeeperStatus>) -> (StatusCode, String) {
    let temporal = async {
        match &deps.temporal {
            Some(client) => bounded("Temporal", temporal_serving(client)).await,
            None => Ok(()),
        }
    };
    let database = bounded("the site database", async { deps.store.ping().await.map_err(|e| error_chain(&e)) });
    let site_workflows = async {
        match (&deps.temporal, keeper) {
            (Some(client), Some(keeper)) => bounded("site workflows", site_workflows::readiness(client, keeper)).await,
            _ => Ok(()),
        }
    };
    let (temporal, database, site_workflows) = tokio::join!(temporal, database, site_workflows);
    // With Temporal away, the site workflows' state cannot be read: naming Temporal is enough.
    let site_workflows = if temporal.is_err() { Ok(()) } else { site_workflows };
    let problems: Vec<String> = [temporal.err(), database.err(), site_workflows.err()].into_iter().flatten().collect();
    if problems.is_empty() {
        (StatusCode::OK, "ready\n".to_string())
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {}\n", problems.join("; ")))
    }
}

/// `check` within the readiness timeout; the problem as text, prefixed with `what`.
async fn bounded(what: &str, check: impl Future<Output = Result<(), String>>) -> Result<(), String> {
    match tokio::time::timeout(READINESS_TIMEOUT, check).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(problem)) => Err(format!("{what}: {problem}")),
        Err(_) => Err(format!("{what}: no answer within {READINESS_TIMEOUT:?}")),
    }
}

/// Temporal's frontend answers its health check as SERVING.
async fn temporal_serving(client: &Client) -> Result<(), String> {
    let request = HealthCheckRequest { service: FRONTEND_SERVICE.to_string() };
    let response = client
        .connection()
        .health_service()
        .check(tonic::Request::new(request))
        .await
        .map_err(|status| format!("health check failed: {}: {}", status.code(), status.message()))?;
    let status = response.into_inner().status;
    if status == ServingStatus::Serving as i32 {
        Ok(())
    } else {
        let name = ServingStatus::try_from(status).map_or_else(|_| status.to_string(), |s| s.as_str_name().to_string());
        Err(format!("frontend reports {name}"))
    }
}

/// `hostfw-worker --health-check URL`: GET `url` (e.g. `http://127.0.0.1:9464/readyz`) within the
/// readiness timeout; the body when the answer is 2xx, else what went wrong. For container
/// healthchecks in images without curl.
pub async fn probe(url: &str) -> Result<String, String> {
    let client = reqwest::Client::builder().timeout(READINESS_TIMEOUT * 2).build().map_err(|e| error_chain(&e))?;
    let response = client.get(url).send().await.map_err(|e| format!("{url}: {}", error_chain(&e)))?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if status.is_success() {
        Ok(body)
    } else {
        Err(format!("{url}: {status}: {}", body.trim()))
    }
}
