//! `GET /v1/whoami`: the caller as the API sees it (token, role, tenant scope, audit name).
//!
//! Owns that one answer; it must not change anything.

use axum::{Extension, Json};

use crate::principal::Principal;

/// The authenticated caller.
#[utoipa::path(get, path = "/v1/whoami", tag = "identity",
    responses((status = 200, description = "The caller", body = Principal)))]
pub async fn whoami(Extension(principal): Extension<Principal>) -> Json<Principal> {
    Json(principal)
}
