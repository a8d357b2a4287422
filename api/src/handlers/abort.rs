//! `POST /v1/aborts` (operator): `hostfw host reprovision abort`, for one host or every host with
//! a request in a selector's scope (a selector needs `dry_run` or `yes`: the API never asks).
//!
//! Owns the request body and mounting the command. It must not decide where an update may stop.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use hostfw_starter::cli::AbortArgs;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// What to abort, and why.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AbortRequest {
    /// One host (give this or `selector`).
    #[serde(default)]
    pub machine_id: Option<String>,
    /// Every host with a request on `model=<vendor>/<model>`, `model=<model>` or `label=<key>=<value>`.
    #[serde(default)]
    pub selector: Option<String>,
    /// Recorded in the host's history and the audit trail.
    pub reason: String,
    /// Leave the host in maintenance, marked for repair (a dead BMC).
    #[serde(default)]
    pub to_maintenance: bool,
    /// With `selector`: list the hosts, change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// With `selector`: the confirmation (without it or `dry_run`, nothing is changed).
    #[serde(default)]
    pub yes: bool,
}

/// Take back an update (one host or a selector's hosts).
#[utoipa::path(post, path = "/v1/aborts", tag = "brakes", request_body = AbortRequest,
    responses((status = 200, description = "What was done", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn abort(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AbortRequest>,
) -> Response {
    let args = AbortArgs {
        machine: body.machine_id,
        selector: body.selector,
        reason: body.reason,
        to_maintenance: body.to_maintenance,
        dry_run: body.dry_run,
        yes: body.yes,
    };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::abort::abort(&ctx, &args).await }).await
}
