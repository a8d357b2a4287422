//! Site-wide operations over the API: `GET /v1/doctor` (viewer: the disagreements between the
//! site database and Temporal), `POST /v1/doctor/fix` (operator: doctor --fix), `POST
//! /v1/config/reload` (admin: ask every running worker to re-read its site config).
//!
//! Owns the request bodies and mounting the commands. `doctor` answers 422 while something is
//! left to fix (the CLI's exit status 1), with the findings in the body's `output`. It must not
//! find or fix anything itself.

use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// The longest a reload request waits for the workers' answers.
pub const MAX_RELOAD_WAIT: Duration = Duration::from_secs(120);

/// hostfw config reload.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReloadRequest {
    /// How long to wait for the running workers' answers, in seconds (default 30, at most 120).
    #[serde(default)]
    pub wait: Option<u64>,
}

/// Every disagreement between the site database and Temporal (hostfw doctor).
#[utoipa::path(get, path = "/v1/doctor", tag = "site",
    responses((status = 200, description = "Nothing to fix", content((Vec<hostfw_starter::doctor::Row> = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Something is left to fix (the findings are in `output`)", body = ErrorBody)))]
pub async fn doctor(State(state): State<ApiState>, Extension(p): Extension<Principal>, headers: HeaderMap) -> Response {
    verb::run(&state, &p, &headers, |ctx| Box::pin(async move { hostfw_starter::doctor::doctor(&ctx, false).await }))
        .await
}

/// Apply doctor's fixes, each audited (hostfw doctor --fix).
#[utoipa::path(post, path = "/v1/doctor/fix", tag = "site",
    responses((status = 200, description = "Everything fixed", content((Vec<hostfw_starter::doctor::Row> = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Something is left (the rows are in `output`)", body = ErrorBody)))]
pub async fn doctor_fix(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| Box::pin(async move { hostfw_starter::doctor::doctor(&ctx, true).await }))
        .await
}

/// Ask every running worker to re-read its site config (hostfw config reload).
#[utoipa::path(post, path = "/v1/config/reload", tag = "site", request_body = ReloadRequest,
    responses((status = 200, description = "Every running worker applied it", content((hostfw_starter::config_reload::ReloadReport = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Some worker refused it or did not answer (the answers are in `output`)", body = ErrorBody)))]
pub async fn config_reload(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ReloadRequest>,
) -> Response {
    let wait = body.wait.unwrap_or(30);
    if wait > MAX_RELOAD_WAIT.as_secs() {
        return ApiError::bad_request(format!("wait: {wait} s is more than {} s", MAX_RELOAD_WAIT.as_secs()))
            .into_response();
    }
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::config_reload::config_reload(&ctx, wait).await })
        .await
}
