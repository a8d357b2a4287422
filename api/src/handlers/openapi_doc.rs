//! `GET /v1/openapi.json`: the OpenAPI 3.1 document, generated from the handlers and the route
//! table (served without a token, so clients and validators can read it).
//!
//! Owns serving the document; `openapi` builds it.

use axum::Json;

/// The OpenAPI document.
pub async fn openapi_json() -> Json<&'static serde_json::Value> {
    Json(crate::openapi::document())
}
