//! Who may call what: HTTP Basic with the host's credentials or an `X-Auth-Token` session
//! token; the version document, the ServiceRoot, the OData documents, session login and `/sim/*`
//! are open.
//! Checks only; sessions are created and deleted in `sessions`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::odata::{METADATA_URI, ODATA_URI};
use crate::resources::uris;

/// Middleware: reject unauthenticated requests to protected resources with 401.
pub async fn require_auth(State(host): State<Arc<Host>>, req: Request, next: Next) -> Response {
    if is_public(req.method(), req.uri().path()) || is_authorized(&host, req.headers()) {
        next.run(req).await
    } else {
        RedfishError::unauthorized().into_response()
    }
}

fn is_public(method: &Method, path: &str) -> bool {
    matches!(path, "/redfish" | "/redfish/v1" | ODATA_URI | METADATA_URI)
        || (method == Method::POST && matches!(path, uris::SESSIONS | uris::SESSIONS_MEMBERS))
        || path == "/sim"
        || path.starts_with("/sim/")
}

/// A valid session token, or Basic credentials matching the host's.
pub fn is_authorized(host: &Host, headers: &HeaderMap) -> bool {
    if let Some(token) = headers.get("X-Auth-Token").and_then(|v| v.to_str().ok()) {
        if host.data().sessions.values().any(|s| s.token == token) {
            return true;
        }
    }
    match basic_credentials(headers) {
        Some((user, pass)) => user == host.spec.username && pass == host.spec.password.expose(),
        None => false,
    }
}

fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, pass) = text.split_once(':')?;
    Some((user.to_string(), pass.to_string()))
}
