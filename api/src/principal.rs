//! The authenticated caller of one request: its token's id, name, role and (for a tenant) the
//! instances it may act for. The audit trail names it as `name (token id)`.
//!
//! Owns the caller's identity as handlers see it. It must not authenticate (that is `auth`).

use hostfw_model::Role;
use hostfw_store::ApiToken;
use serde::Serialize;
use utoipa::ToSchema;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Principal {
    /// The token's id.
    pub token_id: String,
    /// The token's name.
    pub name: String,
    /// The token's role: viewer, operator, admin or tenant.
    #[schema(value_type = String, example = "operator")]
    pub role: Role,
    /// A tenant's instances (empty for the other roles).
    pub instances: Vec<String>,
    /// How the audit trail names this caller.
    pub actor: String,
}

impl Principal {
    /// The principal a token stands for.
    pub fn of(token: &ApiToken) -> Principal {
        Principal {
            token_id: token.id.clone(),
            name: token.name.clone(),
            role: token.role,
            instances: token.instances.clone(),
            actor: token.principal(),
        }
    }

    /// Whether a tenant's token names `instance`.
    pub fn has_instance(&self, instance: &str) -> bool {
        self.instances.iter().any(|i| i == instance)
    }
}
