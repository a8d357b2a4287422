//! The runtime catalog layer over the API (hostfw firmware-config). Admin: `POST
//! /v1/firmware-config` (set), `/diff`, `/unset`, `/rollback`, `/approve`, `/reject`. Viewer:
//! `GET /v1/firmware-config` (show), `/pending`, `/history`.
//!
//! A change without `yes` (and without `dry_run`) changes nothing: the answer is a 422 whose body
//! carries the preview (`output`) and the question (`confirm`); the CLI shows both and sends the
//! request again with `yes`. The document travels in the body (the CLI read the file); this file
//! never reads a path. Owns the request bodies and mounting the commands; it must not preview,
//! check or store a catalog itself.

use std::path::PathBuf;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use hostfw_starter::firmware_config::{self, ChangeFlags};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::verb;
use crate::error::{ApiError, ApiJson, ApiQuery, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// The flags of every change of the runtime layer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeRequest {
    /// Show the changes and stop: nothing is stored.
    #[serde(default)]
    pub dry_run: bool,
    /// Confirmed (the CLI's --yes or the operator's answer).
    #[serde(default)]
    pub yes: bool,
    /// Accept that some default moves to an older version.
    #[serde(default)]
    pub allow_downgrade: bool,
    /// The change ticket.
    #[serde(default)]
    pub message: Option<String>,
}

/// The change flags of a request body. The bodies that carry them besides their own fields
/// (`set`, `rollback`) write them out rather than `#[serde(flatten)]` them: a flattened struct
/// under `deny_unknown_fields` makes an OpenAPI schema no body can satisfy (`allOf` of two
/// closed objects), which schemathesis found.
macro_rules! change_flags {
    ($($ty:ty),*) => {$(
        impl $ty {
            fn flags(&self) -> ChangeFlags {
                ChangeFlags {
                    dry_run: self.dry_run,
                    yes: self.yes,
                    allow_downgrade: self.allow_downgrade,
                    message: self.message.clone(),
                }
            }
        }
    )*};
}
change_flags!(ChangeRequest, SetRequest, RollbackRequest);

/// hostfw firmware-config set (and diff, which takes only `file` and `document`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetRequest {
    /// The file's name, as the client knows it (shown and stored as the origin; never read here).
    pub file: String,
    /// The TOML document of `[host_models.<key>]` tables.
    pub document: String,
    /// Show the changes and stop: nothing is stored.
    #[serde(default)]
    pub dry_run: bool,
    /// Confirmed (the CLI's --yes or the operator's answer).
    #[serde(default)]
    pub yes: bool,
    /// Accept that some default moves to an older version.
    #[serde(default)]
    pub allow_downgrade: bool,
    /// The change ticket.
    #[serde(default)]
    pub message: Option<String>,
}

/// hostfw firmware-config diff.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffRequest {
    pub file: String,
    pub document: String,
}

/// hostfw firmware-config rollback.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RollbackRequest {
    /// The version to restore (1 or more).
    pub to: i64,
    /// Show the changes and stop: nothing is stored.
    #[serde(default)]
    pub dry_run: bool,
    /// Confirmed (the CLI's --yes or the operator's answer).
    #[serde(default)]
    pub yes: bool,
    /// Accept that some default moves to an older version.
    #[serde(default)]
    pub allow_downgrade: bool,
    /// The change ticket.
    #[serde(default)]
    pub message: Option<String>,
}

/// hostfw firmware-config approve.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveRequest {
    /// The pending change (1 or more).
    pub revision: i64,
    #[serde(default)]
    pub yes: bool,
}

/// hostfw firmware-config reject.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectRequest {
    /// The pending change (1 or more).
    pub revision: i64,
    /// Why, for the audit trail.
    #[serde(default)]
    pub message: Option<String>,
}

/// `?limit=N`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// Versions shown, newest first (default 20, at least 1).
    pub limit: Option<u32>,
}

fn at_least_one(field: &str, n: i64) -> Result<(), ApiError> {
    if n < 1 {
        return Err(ApiError::bad_request(format!("{field}: {n} is not a version number (1 or more)")));
    }
    Ok(())
}

/// Store a new runtime layer (hostfw firmware-config set).
#[utoipa::path(post, path = "/v1/firmware-config", tag = "catalog", request_body = SetRequest,
    responses((status = 200, description = "Stored (or the dry run, or unchanged)", content((hostfw_starter::catalog_preview::CatalogChangePreview = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Not confirmed (preview and question in the body), or refused; nothing was stored", body = ErrorBody)))]
pub async fn set(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<SetRequest>,
) -> Response {
    let flags = body.flags();
    verb::run(&state, &p, &headers, |ctx| {
        Box::pin(
            async move { firmware_config::set_document(&ctx, &PathBuf::from(&body.file), body.document, &flags).await },
        )
    })
    .await
}

/// What a document would change, without storing it (hostfw firmware-config diff).
#[utoipa::path(post, path = "/v1/firmware-config/diff", tag = "catalog", request_body = DiffRequest,
    responses((status = 200, description = "The rows that would change", content((hostfw_starter::catalog_preview::CatalogChangePreview = "application/json"), (String = "text/plain"))),
              (status = 422, description = "The document is refused", body = ErrorBody)))]
pub async fn diff(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<DiffRequest>,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| {
        Box::pin(async move { firmware_config::diff_document(&ctx, &PathBuf::from(&body.file), body.document).await })
    })
    .await
}

/// Remove the runtime layer (hostfw firmware-config unset).
#[utoipa::path(post, path = "/v1/firmware-config/unset", tag = "catalog", request_body = ChangeRequest,
    responses((status = 200, description = "Stored (or the dry run, or unchanged)", content((hostfw_starter::catalog_preview::CatalogChangePreview = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Not confirmed (preview and question in the body), or refused; nothing was stored", body = ErrorBody)))]
pub async fn unset(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ChangeRequest>,
) -> Response {
    let flags = body.flags();
    verb::run(&state, &p, &headers, |ctx| Box::pin(async move { firmware_config::unset(&ctx, &flags).await })).await
}

/// Store an earlier version again (hostfw firmware-config rollback).
#[utoipa::path(post, path = "/v1/firmware-config/rollback", tag = "catalog", request_body = RollbackRequest,
    responses((status = 200, description = "Stored (or the dry run, or unchanged)", content((hostfw_starter::catalog_preview::CatalogChangePreview = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Not confirmed (preview and question in the body), or refused; nothing was stored", body = ErrorBody)))]
pub async fn rollback(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<RollbackRequest>,
) -> Response {
    if let Err(refused) = at_least_one("to", body.to) {
        return refused.into_response();
    }
    let flags = body.flags();
    verb::run(&state, &p, &headers, |ctx| {
        Box::pin(async move { firmware_config::rollback(&ctx, body.to, &flags).await })
    })
    .await
}

/// Approve a pending change (hostfw firmware-config approve).
#[utoipa::path(post, path = "/v1/firmware-config/approve", tag = "catalog", request_body = ApproveRequest,
    responses((status = 200, description = "Approved and stored", content((hostfw_starter::catalog_preview::CatalogChangePreview = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Not confirmed (preview and question in the body), or refused", body = ErrorBody)))]
pub async fn approve(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ApproveRequest>,
) -> Response {
    if let Err(refused) = at_least_one("revision", body.revision) {
        return refused.into_response();
    }
    verb::run(&state, &p, &headers, |ctx| {
        Box::pin(async move { firmware_config::approve(&ctx, body.revision, body.yes).await })
    })
    .await
}

/// Reject a pending change (hostfw firmware-config reject).
#[utoipa::path(post, path = "/v1/firmware-config/reject", tag = "catalog", request_body = RejectRequest,
    responses((status = 200, description = "Rejected", content((hostfw_store::PendingFirmwareConfig = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused", body = ErrorBody)))]
pub async fn reject(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<RejectRequest>,
) -> Response {
    if let Err(refused) = at_least_one("revision", body.revision) {
        return refused.into_response();
    }
    verb::run(&state, &p, &headers, |ctx| async move {
        firmware_config::reject(&ctx, body.revision, body.message.as_deref()).await
    })
    .await
}

/// Changes waiting for a second admin (hostfw firmware-config pending).
#[utoipa::path(get, path = "/v1/firmware-config/pending", tag = "catalog",
    responses((status = 200, description = "Pending changes, oldest first", content((Vec<hostfw_store::PendingFirmwareConfig> = "application/json"), (String = "text/plain")))))]
pub async fn pending(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move { firmware_config::pending(&ctx).await }).await
}

/// The current version and the effective catalog (hostfw firmware-config show).
#[utoipa::path(get, path = "/v1/firmware-config", tag = "catalog",
    responses((status = 200, description = "The current version", content((hostfw_starter::firmware_config::ShowJson = "application/json"), (String = "text/plain")))))]
pub async fn show(State(state): State<ApiState>, Extension(p): Extension<Principal>, headers: HeaderMap) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move { firmware_config::show(&ctx).await }).await
}

/// Stored versions, newest first (hostfw firmware-config history).
#[utoipa::path(get, path = "/v1/firmware-config/history", tag = "catalog", params(HistoryQuery),
    responses((status = 200, description = "Versions, newest first", content((Vec<hostfw_store::FirmwareConfigVersion> = "application/json"), (String = "text/plain")))))]
pub async fn history(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> Response {
    let limit = q.limit.unwrap_or(20);
    if limit < 1 {
        return ApiError::bad_request("limit: must be 1 or more").into_response();
    }
    verb::run(&state, &p, &headers, |ctx| async move { firmware_config::history(&ctx, limit).await }).await
}
