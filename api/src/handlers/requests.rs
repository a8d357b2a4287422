//! Reprovisioning requests and managed-host actions over the API (operator): `POST
//! /v1/reprovision-requests` (host reprovision set), `POST /v1/reprovision-requests/all-drifted`,
//! `DELETE /v1/reprovision-requests/{id}` (clear), `POST
//! /v1/reprovision-requests/{id}/manual-upgrade-complete`, `POST
//! /v1/managed-hosts/{id}/reset` (reset-host-reprovisioning) and `POST
//! /v1/managed-hosts/start-updates`.
//!
//! Owns the request bodies and mounting the commands; an unknown machine id is a 404. `all-drifted`
//! answers once the hosts are requested (the CLI follows them with `watch`), and without `yes` it
//! changes nothing and answers 422 with the preview and the question. It must not decide whether
//! a host may be requested (the commands do).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use hostfw_starter::cli::{AllDriftedArgs, StartUpdatesArgs};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// hostfw host reprovision set.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReprovisionSetRequest {
    pub machine_id: String,
    /// Ticket or maintenance reference.
    #[serde(default)]
    pub update_message: Option<String>,
    /// Request it even when the rollout gates hold it (audited so).
    #[serde(default)]
    pub ignore_rollout_gates: bool,
}

/// hostfw host reprovision all-drifted --bypass-ceiling.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AllDriftedRequest {
    /// Must be true: these direct requests bypass the site ceiling, windows and auto-update policy.
    pub bypass_ceiling: bool,
    /// Confirmed: without it nothing is requested and the answer is a 422 with the preview.
    #[serde(default)]
    pub yes: bool,
    /// Only list the hosts that would be requested.
    #[serde(default)]
    pub dry_run: bool,
    /// Explore every BMC first (default true).
    #[serde(default)]
    pub explore: Option<bool>,
    /// Message recorded on each request.
    #[serde(default)]
    pub update_message: Option<String>,
    /// Also request the hosts the rollout gates hold.
    #[serde(default)]
    pub ignore_rollout_gates: bool,
}

/// hostfw managed-host start-updates.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartUpdatesRequest {
    /// Machine ids (every one must be registered).
    pub machines: Vec<String>,
    /// Window start, RFC 3339 or YYYY-MM-DDTHH:MM:SS+0000 (default now).
    #[serde(default)]
    pub start: Option<String>,
    /// Window end, same forms (default start + 24 h).
    #[serde(default)]
    pub end: Option<String>,
    /// Remove the machines' window instead.
    #[serde(default)]
    pub cancel: bool,
}

/// Request reprovisioning of one host now (hostfw host reprovision set).
#[utoipa::path(post, path = "/v1/reprovision-requests", tag = "requests", request_body = ReprovisionSetRequest,
    responses((status = 200, description = "Requested", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody),
              (status = 422, description = "Refused; nothing was requested", body = ErrorBody)))]
pub async fn set(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ReprovisionSetRequest>,
) -> Response {
    let id = body.machine_id.clone();
    verb::run_on_machine(&state, &p, &headers, &id, |ctx| async move {
        hostfw_starter::reprovision::set(&ctx, &body.machine_id, body.update_message, body.ignore_rollout_gates).await
    })
    .await
}

/// Request every drifted host now, bypassing the ceiling (hostfw host reprovision all-drifted).
#[utoipa::path(post, path = "/v1/reprovision-requests/all-drifted", tag = "requests", request_body = AllDriftedRequest,
    responses((status = 200, description = "Requested (or the dry run)", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Not confirmed (the preview and the question are in the body) or refused; nothing was requested", body = ErrorBody)))]
pub async fn all_drifted(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AllDriftedRequest>,
) -> Response {
    if !body.bypass_ceiling {
        return ApiError::new(
            axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            "bypass_ceiling: must be true (these direct requests bypass the site ceiling, windows and auto-update \
             policy); nothing was requested",
        )
        .into_response();
    }
    let args = AllDriftedArgs {
        bypass_ceiling: true,
        yes: body.yes,
        dry_run: body.dry_run,
        explore: body.explore.unwrap_or(true),
        timeout_secs: 0,
        update_message: body.update_message.unwrap_or_else(|| "hostfw host reprovision all-drifted".into()),
        ignore_rollout_gates: body.ignore_rollout_gates,
        no_follow: true,
    };
    verb::run(&state, &p, &headers, |ctx| {
        Box::pin(async move { hostfw_starter::reprovision_all::all_drifted(&ctx, &args).await })
    })
    .await
}

/// A change to one machine's request that takes nothing but the machine id: its handler runs
/// the CLI's own command on that machine (404 when it is not registered).
macro_rules! on_machine {
    ($name:ident, $method:ident, $path:literal, $tag:literal, $what:literal, $done:literal, $command:path) => {
        #[doc = $what]
        #[utoipa::path($method, path = $path, tag = $tag, params(("id" = String, Path, description = "Machine id")), responses((status = 200, description = $done, content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))), (status = 404, description = "No such machine", body = ErrorBody), (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
        pub async fn $name(
            State(state): State<ApiState>,
            Extension(p): Extension<Principal>,
            headers: HeaderMap,
            Path(id): Path<String>,
        ) -> Response {
            let machine = id.clone();
            verb::run_on_machine(&state, &p, &headers, &id, |ctx| async move { $command(&ctx, &machine).await }).await
        }
    };
}

on_machine!(
    clear,
    delete,
    "/v1/reprovision-requests/{id}",
    "requests",
    "Remove a request that has not started (hostfw host reprovision clear).",
    "Cleared",
    hostfw_starter::signals::clear
);
on_machine!(
    manual_upgrade_complete,
    post,
    "/v1/reprovision-requests/{id}/manual-upgrade-complete",
    "requests",
    "Confirm the manual platform procedure is done (hostfw host reprovision mark-manual-upgrade-complete).",
    "Marked",
    hostfw_starter::signals::mark_manual_upgrade_complete
);
on_machine!(
    reset,
    post,
    "/v1/managed-hosts/{id}/reset",
    "machines",
    "Restart firmware checking of a host and clear its retry count (hostfw managed-host reset-host-reprovisioning).",
    "Reset",
    hostfw_starter::signals::reset
);

/// Open or cancel the update window of hosts (hostfw managed-host start-updates).
#[utoipa::path(post, path = "/v1/managed-hosts/start-updates", tag = "machines", request_body = StartUpdatesRequest,
    responses((status = 200, description = "Windows changed", content((Vec<hostfw_starter::start_updates::MachineWindow> = "application/json"), (String = "text/plain"))),
              (status = 404, description = "A machine is not registered; nothing was changed", body = ErrorBody)))]
pub async fn start_updates(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<StartUpdatesRequest>,
) -> Response {
    if body.machines.is_empty() {
        return ApiError::bad_request("machines: name at least one machine id").into_response();
    }
    if body.cancel && (body.start.is_some() || body.end.is_some()) {
        return ApiError::bad_request("cancel: a cancel takes no start or end").into_response();
    }
    let mut unknown = Vec::new();
    for id in &body.machines {
        match state.store.machine_get(id).await {
            Ok(Some(_)) => {}
            Ok(None) => unknown.push(id.as_str()),
            Err(e) => return ApiError::from(e).into_response(),
        }
    }
    if !unknown.is_empty() {
        let message = format!(
            "machines: {} not registered (hostfw machine list); no window was changed",
            unknown.iter().map(|u| format!("{u:?}")).collect::<Vec<_>>().join(", ")
        );
        return ApiError::new(axum::http::StatusCode::NOT_FOUND, message).into_response();
    }
    let args = StartUpdatesArgs { machines: body.machines, start: body.start, end: body.end, cancel: body.cancel };
    verb::run(
        &state,
        &p,
        &headers,
        |ctx| async move { hostfw_starter::start_updates::start_updates(&ctx, &args).await },
    )
    .await
}
