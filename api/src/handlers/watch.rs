//! What `hostfw -a URL watch` polls (viewer): `GET /v1/watch/tally` (one look at the rollout:
//! compliant, in progress, waiting, failed, paused, canary waves) and `GET /v1/watch/report` (the
//! final report of a watch that began at `since_ms`). The CLI runs the loop, the bar and the
//! exit status; a request never holds a connection for the rollout.
//!
//! Owns the query parameters and mounting the two reads. It must not change anything.

use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use serde::Deserialize;
use utoipa::IntoParams;

use super::verb;
use crate::error::ApiQuery;
use crate::principal::Principal;
use crate::state::ApiState;

/// `?since_ms=...&watched_ms=...`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// When the watch began (milliseconds since the epoch): hosts updated since then are counted.
    pub since_ms: i64,
    /// How long the watch ran, in milliseconds (shown).
    #[serde(default)]
    pub watched_ms: u64,
}

/// One look at the rollout (hostfw watch's tally), always JSON.
#[utoipa::path(get, path = "/v1/watch/tally", tag = "site",
    responses((status = 200, description = "The tally", content((hostfw_starter::watch::Tally = "application/json")))))]
pub async fn tally(State(state): State<ApiState>, Extension(p): Extension<Principal>, headers: HeaderMap) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::watch::print_tally(&ctx).await }).await
}

/// The final report of a watch (hostfw watch's report).
#[utoipa::path(get, path = "/v1/watch/report", tag = "site", params(ReportQuery),
    responses((status = 200, description = "The report", content((hostfw_starter::watch::ReportLine = "application/json"), (String = "text/plain")))))]
pub async fn report(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> Response {
    let took = Duration::from_millis(q.watched_ms);
    verb::run(&state, &p, &headers, |ctx| {
        Box::pin(async move { hostfw_starter::watch::print_report(&ctx, q.since_ms, took).await })
    })
    .await
}
