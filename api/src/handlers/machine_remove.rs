//! `POST /v1/machines/{id}/remove` (admin): `hostfw machine remove`, decommissioning a machine.
//! The request is the confirmation; it is refused while the host has a reprovisioning request.
//!
//! Owns the request body and mounting the command. It must not decide when a removal is safe.

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

/// Why the machine leaves the site.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveRequest {
    /// Kept in the audit trail.
    pub reason: String,
}

/// Remove a machine from the site (its credentials destroyed, its history kept).
#[utoipa::path(post, path = "/v1/machines/{id}/remove", tag = "machines", request_body = RemoveRequest,
    params(("id" = String, Path, description = "Machine id")),
    responses((status = 200, description = "Removed", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody),
              (status = 422, description = "Refused (it has a reprovisioning request); nothing was changed", body = ErrorBody)))]
pub async fn remove(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RemoveRequest>,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move {
        hostfw_starter::machine_remove::remove(&ctx, &id, &body.reason, true).await
    })
    .await
}
