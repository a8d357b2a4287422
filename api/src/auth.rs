//! Authentication and the route's access check, as a middleware every route of the table is
//! mounted with: the bearer token is checked against the site database, the caller's role
//! against the route's [`Access`], and a tenant against the instance the request is about. The
//! [`Principal`] is then handed to the handler (a request extension).
//!
//! A request without a bearer token may instead come on a connection whose client certificate the
//! TLS handshake verified (`[api] client_ca_file`): its subject common name names a token in
//! `[api] client_principals`, and that token, if live, is the principal. A bearer token, when
//! sent, wins.
//!
//! Owns the `Authorization: Bearer` header, the certificate-to-token mapping, the 401 and 403
//! answers and the tenant scope check. It must not decide which role a route needs (the route
//! table does) nor log a token.

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
use crate::tls::ClientCert;

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
    let cert = parts.extensions.get::<ClientCert>().cloned();
    let token = match (parts.headers.get(AUTHORIZATION), cert) {
        (None, Some(cert)) => certificate_token(state, &cert).await?,
        (header, _) => {
            let presented = bearer(header)?;
            match state.store.token_authenticate(presented).await? {
                Ok(token) => token,
                Err(TokenRefused::Unknown) => {
                    return Err(ApiError::unauthorized("the bearer token is not a valid hostfw token"))
                }
                Err(refused) => return Err(refused_answer(refused)),
            }
        }
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

fn refused_answer(refused: TokenRefused) -> ApiError {
    match refused {
        TokenRefused::Unknown => ApiError::unauthorized("not a valid hostfw token"),
        TokenRefused::Expired { id } => ApiError::unauthorized(format!("token {id} has expired")),
        TokenRefused::Revoked { id } => ApiError::unauthorized(format!("token {id} was revoked")),
    }
}

/// The token a verified client certificate stands for (`[api] client_principals`), if live.
async fn certificate_token(state: &ApiState, cert: &ClientCert) -> Result<hostfw_store::ApiToken, ApiError> {
    let Some(name) = cert.common_name.as_deref() else {
        return Err(ApiError::unauthorized(
            "the client certificate has no subject common name, so it maps to no token; send a bearer token",
        ));
    };
    let Some(id) = state.site.api.client_principals.get(name) else {
        return Err(ApiError::unauthorized(format!(
            "the client certificate CN={name} is not in api.client_principals; send a bearer token"
        )));
    };
    let token = state.store.token_get(id).await?.ok_or_else(|| {
        ApiError::unauthorized(format!("the client certificate CN={name} maps to token {id}, which does not exist"))
    })?;
    if token.revoked_at_ms.is_some() {
        return Err(refused_answer(TokenRefused::Revoked { id: token.id }));
    }
    if !token.active_at(hostfw_store::now_ms()) {
        return Err(refused_answer(TokenRefused::Expired { id: token.id }));
    }
    Ok(token)
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
