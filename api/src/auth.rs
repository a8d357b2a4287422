//! Authentication and the route's access check, as a middleware every route of the table is
//! mounted with: the bearer token is checked against the site database, the caller's role
//! against the route's [`Access`], and a tenant against the instance the request is about. The
//! [`Principal`] is then handed to the handler (a request extension).
//!
//! Owns the `Authorization: Bearer` header, the 401 and 403 answers and the tenant scope check.
//! It must not decide which role a route needs (the route table does) nor log a token.

use axum::extract::{RawPathParams, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::RequestPartsExt;
use hostfw_store::TokenRefused;

use crate::access::{decide, Access, Decision};
use crate::error::ApiError;
use crate::principal::Principal;
use crate::state::ApiState;

/// The middleware: `State((state, access))` is the route's own requirement.
pub async fn require(State((state, access)): State<(ApiState, Access)>, request: Request, next: Next) -> Response {
    match check(&state, access, request).await {
        Ok(request) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

async fn check(state: &ApiState, access: Access, request: Request) -> Result<Request, ApiError> {
    if access == Access::Public {
        return Ok(request);
    }
    let (mut parts, body) = request.into_parts();
    let presented = bearer(parts.headers.get(AUTHORIZATION))?;
    let token = match state.store.token_authenticate(presented).await? {
        Ok(token) => token,
        Err(TokenRefused::Unknown) => {
            return Err(ApiError::unauthorized("the bearer token is not a valid hostfw token"))
        }
        Err(TokenRefused::Expired { id }) => return Err(ApiError::unauthorized(format!("token {id} has expired"))),
        Err(TokenRefused::Revoked { id }) => return Err(ApiError::unauthorized(format!("token {id} was revoked"))),
    };
    let principal = Principal::of(&token);
    match decide(access, &principal) {
        Decision::Allow => {}
        Decision::Deny => {
            return Err(ApiError::forbidden(format!(
                "{} has role {}; this request needs {}",
                principal.actor,
                principal.role,
                access.describe()
            )))
        }
        Decision::AllowIfInstanceInScope => {
            let params = parts.extract::<RawPathParams>().await.map_err(|e| ApiError::bad_request(e.to_string()))?;
            let id = params.iter().find(|(name, _)| *name == "id").map(|(_, v)| v.to_string()).unwrap_or_default();
            let instance = match access {
                Access::RoleOrTenantOfMachine(_) => state.store.machine_get(&id).await?.and_then(|m| m.instance_id),
                _ => Some(id.clone()),
            };
            if !instance.is_some_and(|i| principal.has_instance(&i)) {
                return Err(ApiError::forbidden(format!(
                    "{} is a tenant token; it may act only for its own instances ({}), and {id:?} is not one of them",
                    principal.actor,
                    principal.instances.join(", ")
                )));
            }
        }
    }
    parts.extensions.insert(principal);
    Ok(Request::from_parts(parts, body))
}

fn bearer(header: Option<&axum::http::HeaderValue>) -> Result<&str, ApiError> {
    let missing = || {
        ApiError::unauthorized(
            "missing bearer token: send `Authorization: Bearer hfw_...` (`hostfw token create`, or \
             `hostfw admin bootstrap` on the site for the first one)",
        )
    };
    let value = header.ok_or_else(missing)?.to_str().map_err(|_| missing())?;
    let token = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")).ok_or_else(missing)?;
    Ok(token.trim())
}
