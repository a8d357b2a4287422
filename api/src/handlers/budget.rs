//! `POST /v1/budgets/resume` (operator): resume a paused rollout target (hostfw budget resume).
//!
//! Owns the request body and mounting the command. It must not decide whether a target is paused.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use hostfw_starter::cli::{BudgetCmd, BudgetTargetArgs};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// A rollout target, named as `plan` and `budget list` print it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetRequest {
    /// The catalog entry's vendor (may be left out when only one catalog model has this name).
    #[serde(default)]
    pub vendor: Option<String>,
    pub model: String,
    /// bmc, uefi, ...
    pub component: String,
    /// The desired version.
    pub version: String,
}

/// Resume a paused target.
#[utoipa::path(post, path = "/v1/budgets/resume", tag = "brakes", request_body = TargetRequest,
    responses((status = 200, description = "Resumed", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn resume(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<TargetRequest>,
) -> Response {
    let args =
        BudgetTargetArgs { vendor: body.vendor, model: body.model, component: body.component, version: body.version };
    verb::run(&state, &p, &headers, |ctx| async move {
        hostfw_starter::budget::budget(&ctx, &BudgetCmd::Resume(args)).await
    })
    .await
}
