//! `/v1/tokens`: create, list and revoke API tokens (admin). A new token's full text is in the
//! creation answer only; the site database keeps its hash.
//!
//! Owns the token documents and the expiry argument (`90d`, `12h`, `30m`). It must not
//! authenticate (that is `auth`) nor store anything itself (the store does, audited).

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use hostfw_model::{rfc3339_utc, Role};
use hostfw_store::{ApiToken, NewToken};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// A token as listed (never its secret).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct TokenDoc {
    pub id: String,
    pub name: String,
    /// viewer, operator, admin or tenant.
    pub role: String,
    /// A tenant token's instances.
    pub instances: Vec<String>,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// Who created it (the audit name).
    pub created_by: String,
    pub expires_at: Option<String>,
    pub revoked_at: Option<String>,
    pub revoked_by: Option<String>,
}

impl From<&ApiToken> for TokenDoc {
    fn from(t: &ApiToken) -> TokenDoc {
        TokenDoc {
            id: t.id.clone(),
            name: t.name.clone(),
            role: t.role.to_string(),
            instances: t.instances.clone(),
            created_at: rfc3339_utc(t.created_at_ms),
            created_by: t.created_by.clone(),
            expires_at: t.expires_at_ms.map(rfc3339_utc),
            revoked_at: t.revoked_at_ms.map(rfc3339_utc),
            revoked_by: t.revoked_by.clone(),
        }
    }
}

/// What `POST /v1/tokens` takes.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateToken {
    /// 1 to 64 letters, digits, `.`, `-`, `_` or `@`; unique among live tokens.
    pub name: String,
    /// viewer, operator, admin or tenant.
    pub role: String,
    /// A tenant token's instances (required for a tenant, refused for the others).
    #[serde(default)]
    pub instances: Vec<String>,
    /// Lifetime: `90d`, `12h`, `30m`, `45s`. None: the token lives until revoked.
    #[serde(default)]
    pub expires: Option<String>,
}

/// What `POST /v1/tokens` answers: the token, and its full text (shown this once).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct CreatedToken {
    pub token: TokenDoc,
    /// `hfw_<id>_<secret>`: give it to its holder now; it cannot be shown again.
    pub secret: String,
}

/// Every token, newest first.
#[utoipa::path(get, path = "/v1/tokens", tag = "identity",
    responses((status = 200, description = "Every token", body = Vec<TokenDoc>)))]
pub async fn list(State(state): State<ApiState>) -> Result<Json<Vec<TokenDoc>>, ApiError> {
    Ok(Json(state.store.token_list().await?.iter().map(TokenDoc::from).collect()))
}

/// Create a token.
#[utoipa::path(post, path = "/v1/tokens", tag = "identity", request_body = CreateToken,
    responses((status = 201, description = "Created", body = CreatedToken),
              (status = 400, description = "Bad input; nothing was stored", body = ErrorBody),
              (status = 409, description = "The name is taken", body = ErrorBody)))]
pub async fn create(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    ApiJson(body): ApiJson<CreateToken>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    let role: Role = body.role.parse().map_err(|e: hostfw_model::UnknownRole| ApiError::bad_request(e.to_string()))?;
    let expires_at_ms = match body.expires.as_deref() {
        None => None,
        Some(text) => {
            let lifetime = parse_lifetime(text).map_err(ApiError::bad_request)?;
            let ms = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX);
            Some(hostfw_store::now_ms().saturating_add(ms))
        }
    };
    let new = NewToken { name: body.name, role, instances: body.instances, expires_at_ms };
    let (token, secret) = state.store.token_create(&new, &principal.actor).await?;
    Ok((StatusCode::CREATED, Json(CreatedToken { token: TokenDoc::from(&token), secret })))
}

/// Revoke a token: it authenticates nothing from now on.
#[utoipa::path(delete, path = "/v1/tokens/{id}", tag = "identity",
    params(("id" = String, Path, description = "Token id")),
    responses((status = 200, description = "Revoked", body = TokenDoc),
              (status = 404, description = "No such token", body = ErrorBody),
              (status = 409, description = "Already revoked", body = ErrorBody)))]
pub async fn revoke(
    State(state): State<ApiState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<TokenDoc>, ApiError> {
    Ok(Json(TokenDoc::from(&state.store.token_revoke(&id, &principal.actor).await?)))
}

/// `90d` (days) or any config duration (`12h`, `30m`, `45s`); more than zero, at most 10 years.
pub fn parse_lifetime(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let lifetime = match trimmed.strip_suffix('d') {
        Some(days) => days
            .parse::<u64>()
            .map(|d| Duration::from_secs(d.saturating_mul(86_400)))
            .map_err(|_| format!("expires {text:?}: expected a whole number of days like \"90d\""))?,
        None => hostfw_model::parse_duration(trimmed).map_err(|e| format!("expires: {e}"))?,
    };
    if lifetime.is_zero() || lifetime > Duration::from_secs(10 * 365 * 86_400) {
        return Err(format!("expires {text:?}: must be more than zero and at most 3650d"));
    }
    Ok(lifetime)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lifetimes() {
        assert_eq!(super::parse_lifetime("90d").unwrap().as_secs(), 90 * 86_400);
        assert_eq!(super::parse_lifetime("12h").unwrap().as_secs(), 12 * 3600);
        for bad in ["", "0d", "d", "-1d", "5y", "4000d", "12"] {
            assert!(super::parse_lifetime(bad).is_err(), "{bad}");
        }
    }
}
