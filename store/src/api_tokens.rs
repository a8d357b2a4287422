//! API tokens: the bearer tokens callers of the hostfw API present (`Authorization: Bearer
//! hfw_<id>_<secret>`), created, listed, revoked and checked here.
//!
//! Owns the token format, the random id and secret, keeping only the secret's SHA-256, the
//! constant-time check, expiry and revocation, and auditing each change in its own transaction. A
//! secret is returned once, by [`Store::token_create`]; nothing here logs it or stores it. It must
//! not decide what a role may do (the API's route table does).

use hostfw_model::Role;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;

use crate::audit::audit_append_in;
use crate::error::{Result, StoreError};
use crate::{now_ms, Store};

/// The prefix every token starts with (so a leaked one is easy to find in a log or a repository).
pub const TOKEN_PREFIX: &str = "hfw_";

/// A token as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiToken {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// A tenant token's instances (empty for the other roles).
    pub instances: Vec<String>,
    pub created_at_ms: i64,
    pub created_by: String,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
    pub revoked_by: Option<String>,
}

impl ApiToken {
    /// Who the audit trail names for a caller holding this token: `alice (token t3f9a21c0)`.
    pub fn principal(&self) -> String {
        format!("{} (token {})", self.name, self.id)
    }

    /// Whether the token authenticates at `now_ms`.
    pub fn active_at(&self, now_ms: i64) -> bool {
        self.revoked_at_ms.is_none() && self.expires_at_ms.is_none_or(|at| at > now_ms)
    }
}

/// What `token_create` needs.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub name: String,
    pub role: Role,
    pub instances: Vec<String>,
    pub expires_at_ms: Option<i64>,
}

/// Why a presented token authenticates nothing. The API answers 401 for each; the reason goes to
/// its log and, where the caller proved it holds the secret (expired, revoked), to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRefused {
    /// Not `hfw_<id>_<secret>`, or no token has that id, or the secret does not match.
    Unknown,
    Expired {
        id: String,
    },
    Revoked {
        id: String,
    },
}

impl Store {
    /// Create a token, audited as `token_create` by `actor`. Returns the token and the one copy
    /// of its full text (`hfw_<id>_<secret>`) anyone will ever see.
    pub async fn token_create(&self, new: &NewToken, actor: &str) -> Result<(ApiToken, String)> {
        const OP: &str = "token_create";
        let invalid = |reason: String| StoreError::Invalid { op: OP, id: new.name.clone(), reason };
        check_name(&new.name).map_err(invalid)?;
        match (new.role, new.instances.is_empty()) {
            (Role::Tenant, true) => return Err(invalid("a tenant token names at least one instance".into())),
            (Role::Tenant, false) => {}
            (_, false) => return Err(invalid(format!("only a tenant token names instances, not a {} one", new.role))),
            (_, true) => {}
        }
        if let Some(bad) = new.instances.iter().find(|i| i.trim().is_empty() || i.trim() != i.as_str()) {
            return Err(invalid(format!("instance id {bad:?} is empty or has surrounding spaces")));
        }
        let now = now_ms();
        if new.expires_at_ms.is_some_and(|at| at <= now) {
            return Err(invalid("the expiry is not in the future".into()));
        }
        let id = format!("t{}", hex::encode(random::<5>()));
        let secret = hex::encode(random::<24>());
        let token = ApiToken {
            id: id.clone(),
            name: new.name.clone(),
            role: new.role,
            instances: new.instances.clone(),
            created_at_ms: now,
            created_by: actor.to_string(),
            expires_at_ms: new.expires_at_ms,
            revoked_at_ms: None,
            revoked_by: None,
        };
        let instances = serde_json::to_string(&new.instances).map_err(|e| invalid(e.to_string()))?;
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, &id))?;
        let taken: Option<String> = sqlx::query_scalar(
            "SELECT id FROM api_tokens WHERE name = $1 AND revoked_at_ms IS NULL \
             AND (expires_at_ms IS NULL OR expires_at_ms > $2)",
        )
        .bind(&new.name)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await
        .map_err(StoreError::db(OP, &id))?;
        if let Some(other) = taken {
            tx.rollback().await.map_err(StoreError::db(OP, &id))?;
            return Err(StoreError::Conflict {
                op: OP,
                id: new.name.clone(),
                detail: format!("token {other} already has this name; revoke it first or pick another name"),
            });
        }
        sqlx::query(
            "INSERT INTO api_tokens (id, name, role, instances, secret_sha256, created_at_ms, created_by, expires_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&id)
        .bind(&new.name)
        .bind(new.role.as_str())
        .bind(&instances)
        .bind(sha256_hex(&secret))
        .bind(now)
        .bind(actor)
        .bind(new.expires_at_ms)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, &id))?;
        let detail = format!("{} role {}{}", new.name, new.role, scope_text(&new.instances));
        audit_append_in(&mut tx, actor, "token_create", &id, &detail, now).await.map_err(StoreError::db(OP, &id))?;
        tx.commit().await.map_err(StoreError::db(OP, &id))?;
        Ok((token, format!("{TOKEN_PREFIX}{id}_{secret}")))
    }

    /// Every token, newest first (revoked and expired ones included).
    pub async fn token_list(&self) -> Result<Vec<ApiToken>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM api_tokens ORDER BY created_at_ms DESC, id"))
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db("token_list", ""))?;
        rows.iter().map(token_from_row).collect()
    }

    /// Revoke token `id`, audited as `token_revoke` by `actor`. Revoking a revoked token changes
    /// nothing and says so (`Conflict`).
    pub async fn token_revoke(&self, id: &str, actor: &str) -> Result<ApiToken> {
        const OP: &str = "token_revoke";
        let now = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, id))?;
        let updated = sqlx::query(
            "UPDATE api_tokens SET revoked_at_ms = $2, revoked_by = $3 WHERE id = $1 AND revoked_at_ms IS NULL",
        )
        .bind(id)
        .bind(now)
        .bind(actor)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, id))?;
        if updated.rows_affected() == 0 {
            tx.rollback().await.map_err(StoreError::db(OP, id))?;
            return match self.token_get(id).await? {
                None => Err(StoreError::not_found("token", id)),
                Some(_) => Err(StoreError::Conflict { op: OP, id: id.to_string(), detail: "already revoked".into() }),
            };
        }
        audit_append_in(&mut tx, actor, "token_revoke", id, "", now).await.map_err(StoreError::db(OP, id))?;
        tx.commit().await.map_err(StoreError::db(OP, id))?;
        self.token_get(id).await?.ok_or_else(|| StoreError::not_found("token", id))
    }

    /// Token `id`, if it exists.
    pub async fn token_get(&self, id: &str) -> Result<Option<ApiToken>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM api_tokens WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("token_get", id))?;
        row.as_ref().map(token_from_row).transpose()
    }

    /// The token a caller presented, if it authenticates now.
    pub async fn token_authenticate(&self, presented: &str) -> Result<std::result::Result<ApiToken, TokenRefused>> {
        let Some((id, secret)) = presented.strip_prefix(TOKEN_PREFIX).and_then(|rest| rest.split_once('_')) else {
            return Ok(Err(TokenRefused::Unknown));
        };
        let row = sqlx::query(&format!("SELECT {COLUMNS}, secret_sha256 FROM api_tokens WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("token_authenticate", id))?;
        let Some(row) = row else { return Ok(Err(TokenRefused::Unknown)) };
        let stored: String = row.try_get("secret_sha256").map_err(StoreError::db("token_authenticate", id))?;
        if !constant_time_eq(stored.as_bytes(), sha256_hex(secret).as_bytes()) {
            return Ok(Err(TokenRefused::Unknown));
        }
        let token = token_from_row(&row)?;
        if token.revoked_at_ms.is_some() {
            return Ok(Err(TokenRefused::Revoked { id: token.id }));
        }
        if !token.active_at(now_ms()) {
            return Ok(Err(TokenRefused::Expired { id: token.id }));
        }
        Ok(Ok(token))
    }

    /// How many admin tokens authenticate now (`hostfw admin bootstrap` creates the first).
    pub async fn token_active_admins(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM api_tokens WHERE role = 'admin' AND revoked_at_ms IS NULL \
             AND (expires_at_ms IS NULL OR expires_at_ms > $1)",
        )
        .bind(now_ms())
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("token_active_admins", ""))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

const COLUMNS: &str = "id, name, role, instances, created_at_ms, created_by, expires_at_ms, revoked_at_ms, revoked_by";

fn token_from_row(row: &sqlx::any::AnyRow) -> Result<ApiToken> {
    let id: String = row.try_get("id").map_err(StoreError::db("token_from_row", ""))?;
    let corrupt = |detail: String| StoreError::Corrupt { op: "token_from_row", id: id.clone(), detail };
    let get = |e| StoreError::db("token_from_row", id.clone())(e);
    let role: String = row.try_get("role").map_err(get)?;
    let instances: String = row.try_get("instances").map_err(get)?;
    Ok(ApiToken {
        name: row.try_get("name").map_err(get)?,
        role: role.parse().map_err(|e: hostfw_model::UnknownRole| corrupt(e.to_string()))?,
        instances: serde_json::from_str(&instances).map_err(|e| corrupt(format!("instances: {e}")))?,
        created_at_ms: row.try_get("created_at_ms").map_err(get)?,
        created_by: row.try_get("created_by").map_err(get)?,
        expires_at_ms: row.try_get("expires_at_ms").map_err(get)?,
        revoked_at_ms: row.try_get("revoked_at_ms").map_err(get)?,
        revoked_by: row.try_get("revoked_by").map_err(get)?,
        id,
    })
}

/// A token name: 1 to 64 characters of letters, digits, `.`, `-`, `_`, `@`.
fn check_name(name: &str) -> std::result::Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@'));
    if ok {
        Ok(())
    } else {
        Err(format!("token name {name:?} must be 1 to 64 letters, digits, '.', '-', '_' or '@'"))
    }
}

fn scope_text(instances: &[String]) -> String {
    if instances.is_empty() {
        String::new()
    } else {
        format!(" for instances {}", instances.join(", "))
    }
}

fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).expect("operating system random source");
    bytes
}

fn sha256_hex(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Equal without an early exit, so the time taken says nothing about where two hashes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
