//! Site Explorer over the API: `POST /v1/site-explorer/explore` and `POST
//! /v1/site-explorer/re-explore` (operator), `GET /v1/site-explorer/report?bmc=...` (viewer).
//!
//! Owns the request bodies and mounting the commands. It must not talk to a BMC itself.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::verb;
use crate::error::{ApiError, ApiJson, ApiQuery, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// The most BMCs one request explores at once.
const MAX_CONCURRENCY: usize = 256;

/// hostfw site-explorer explore.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreRequest {
    /// Only this machine (default: every registered machine).
    #[serde(default)]
    pub machine_id: Option<String>,
    /// BMCs explored at once (default 16, 1 to 256).
    #[serde(default)]
    pub concurrency: Option<usize>,
}

/// hostfw site-explorer re-explore.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReExploreRequest {
    /// BMC address in any form (`10.0.4.17`, `10.0.4.17:443`, `https://10.0.4.17:443/`).
    pub bmc_ip: String,
}

/// `?bmc=...`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// BMC address in any form.
    pub bmc: String,
}

/// Explore BMCs now (hostfw site-explorer explore).
#[utoipa::path(post, path = "/v1/site-explorer/explore", tag = "explorer", request_body = ExploreRequest,
    responses((status = 200, description = "Explored", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody)))]
pub async fn explore(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ExploreRequest>,
) -> Response {
    let concurrency = body.concurrency.unwrap_or(16);
    if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
        return ApiError::bad_request(format!("concurrency: {concurrency} is not between 1 and {MAX_CONCURRENCY}"))
            .into_response();
    }
    let only = body.machine_id;
    let command = |ctx| {
        let only = only.clone();
        Box::pin(async move { hostfw_starter::explore::explore_cmd(&ctx, only.as_deref(), concurrency).await })
    };
    match &only {
        Some(id) => verb::run_on_machine(&state, &p, &headers, id, command).await,
        None => verb::run(&state, &p, &headers, command).await,
    }
}

/// Ask the Site Explorer workflow to explore one BMC now (hostfw site-explorer re-explore).
#[utoipa::path(post, path = "/v1/site-explorer/re-explore", tag = "explorer", request_body = ReExploreRequest,
    responses((status = 200, description = "Asked", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused", body = ErrorBody)))]
pub async fn re_explore(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ReExploreRequest>,
) -> Response {
    verb::run(
        &state,
        &p,
        &headers,
        |ctx| async move { hostfw_starter::re_explore::re_explore(&ctx, &body.bmc_ip).await },
    )
    .await
}

/// A stored exploration report (hostfw site-explorer get-report managed-host BMC).
#[utoipa::path(get, path = "/v1/site-explorer/report", tag = "explorer", params(ReportQuery),
    responses((status = 200, description = "The report", content((hostfw_starter::explore::ReportView = "application/json"), (String = "text/plain"))),
              (status = 400, description = "No bmc parameter", body = ErrorBody)))]
pub async fn report(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::explore::get_report(&ctx, &q.bmc).await }).await
}
