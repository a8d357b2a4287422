//! `POST /v1/instances/{id}/reboot`: the tenant's reboot of its instance, which with
//! `apply_updates_on_reboot` approves the host's pending firmware update (the seed's `instance
//! reboot --apply-updates-on-reboot`). A tenant token may call it for its own instances only.
//!
//! Owns the request body and mounting the command. It must not decide whether an update may start.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// What the reboot takes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RebootRequest {
    /// Approve the host's pending firmware update (it runs in this reboot).
    #[serde(default)]
    pub apply_updates_on_reboot: bool,
}

/// Reboot an instance, approving its host's firmware update.
#[utoipa::path(post, path = "/v1/instances/{id}/reboot", tag = "tenant", request_body = RebootRequest,
    params(("id" = String, Path, description = "Instance id")),
    responses((status = 200, description = "What was done", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn reboot(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RebootRequest>,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move {
        hostfw_starter::signals::instance_reboot(&ctx, &id, body.apply_updates_on_reboot).await
    })
    .await
}
