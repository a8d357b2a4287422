//! The operator's brakes over the API: `POST /v1/freezes` (freeze), `GET /v1/freezes` (freeze
//! list, viewer), `POST /v1/freezes/lift` (unfreeze) and `POST /v1/budgets/pause` (budget pause).
//!
//! Owns the request bodies and mounting the commands. It must not decide what a freeze holds or
//! whether a target may be paused (`hostfw_starter::brakes` does).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use hostfw_starter::cli::{BudgetCmd, BudgetPauseArgs, BudgetTargetArgs, FreezeArgs, FreezeCmd, UnfreezeArgs};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// A freeze to set (hostfw freeze).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FreezeRequest {
    /// Why (shown in `plan` and on every held host).
    pub reason: String,
    /// `model=<vendor>/<model>`, `model=<model>` or `label=<key>=<value>`; absent: the whole site.
    #[serde(default)]
    pub selector: Option<String>,
    /// Hosts in flight finish all their components instead of holding before the next one.
    #[serde(default)]
    pub drain: bool,
}

/// Which freezes to lift (hostfw unfreeze): `id`, or every freeze on `selector`; neither: the
/// site freeze.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UnfreezeRequest {
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub selector: Option<String>,
}

/// A target to pause by hand (hostfw budget pause).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    #[serde(default)]
    pub vendor: Option<String>,
    pub model: String,
    pub component: String,
    pub version: String,
    /// Why (shown in `plan` and every host's reason).
    pub reason: String,
}

/// The freezes in force (hostfw freeze list).
#[utoipa::path(get, path = "/v1/freezes", tag = "brakes",
    responses((status = 200, description = "The freezes in force", content((hostfw_starter::brakes::FreezeList = "application/json"), (String = "text/plain")))))]
pub async fn list(State(state): State<ApiState>, Extension(p): Extension<Principal>, headers: HeaderMap) -> Response {
    let args = FreezeArgs { cmd: Some(FreezeCmd::List), reason: None, selector: None, drain: false };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::brakes::freeze(&ctx, &args).await }).await
}

/// Set a freeze (hostfw freeze).
#[utoipa::path(post, path = "/v1/freezes", tag = "brakes", request_body = FreezeRequest,
    responses((status = 200, description = "Set", content((hostfw_starter::brakes::FreezeSet = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn freeze(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<FreezeRequest>,
) -> Response {
    let args = FreezeArgs { cmd: None, reason: Some(body.reason), selector: body.selector, drain: body.drain };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::brakes::freeze(&ctx, &args).await }).await
}

/// Lift freezes (hostfw unfreeze).
#[utoipa::path(post, path = "/v1/freezes/lift", tag = "brakes", request_body = UnfreezeRequest,
    responses((status = 200, description = "Lifted", content((hostfw_starter::brakes::Unfrozen = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn unfreeze(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<UnfreezeRequest>,
) -> Response {
    let args = UnfreezeArgs { id: body.id, selector: body.selector };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::brakes::unfreeze_cmd(&ctx, &args).await }).await
}

/// Pause a rollout target by hand (hostfw budget pause).
#[utoipa::path(post, path = "/v1/budgets/pause", tag = "brakes", request_body = PauseRequest,
    responses((status = 200, description = "Paused", content((hostfw_starter::brakes::TargetPaused = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn pause(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<PauseRequest>,
) -> Response {
    let target =
        BudgetTargetArgs { vendor: body.vendor, model: body.model, component: body.component, version: body.version };
    let cmd = BudgetCmd::Pause(BudgetPauseArgs { target, reason: body.reason });
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::budget::budget(&ctx, &cmd).await }).await
}
