//! What a route asks of its caller: no token (the OpenAPI document), any valid token, a site role
//! or better, or a site role or better *or* a tenant whose token names the instance the request
//! is about.
//!
//! Owns deciding one caller against one route's requirement. It must not list routes (that is
//! `routes`) nor read tokens (that is `auth`).

use hostfw_model::Role;
use serde::Serialize;

use crate::principal::Principal;

/// A route's requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "role")]
pub enum Access {
    /// Served to anyone (the OpenAPI document).
    Public,
    /// Any valid token, whatever its role.
    Authenticated,
    /// A site role covering this one (`viewer` < `operator` < `admin`).
    Role(Role),
    /// This site role or better, or a tenant token naming the instance of the path's `{id}`.
    RoleOrTenantOfInstance(Role),
    /// This site role or better, or a tenant token naming the instance the path's `{id}`
    /// machine carries now.
    RoleOrTenantOfMachine(Role),
}

impl Access {
    /// The site role the route needs (the tenant's way in aside), if any.
    pub fn site_role(self) -> Option<Role> {
        match self {
            Access::Public | Access::Authenticated => None,
            Access::Role(r) | Access::RoleOrTenantOfInstance(r) | Access::RoleOrTenantOfMachine(r) => Some(r),
        }
    }

    /// Whether a tenant may call the route at all (for its own instances).
    pub fn admits_tenant(self) -> bool {
        matches!(self, Access::Authenticated | Access::RoleOrTenantOfInstance(_) | Access::RoleOrTenantOfMachine(_))
    }

    /// The role text the OpenAPI document shows for the route.
    pub fn describe(self) -> String {
        match self {
            Access::Public => "none".into(),
            Access::Authenticated => "any token".into(),
            Access::Role(r) => r.to_string(),
            Access::RoleOrTenantOfInstance(r) => format!("{r}, or tenant of the instance"),
            Access::RoleOrTenantOfMachine(r) => format!("{r}, or tenant of the machine's instance"),
        }
    }
}

/// The decision for a caller, before any tenant scope is looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// A tenant: allowed only when the request's instance is in its token.
    AllowIfInstanceInScope,
    Deny,
}

/// Decide `principal` against `access`.
pub fn decide(access: Access, principal: &Principal) -> Decision {
    match access {
        Access::Public | Access::Authenticated => Decision::Allow,
        Access::Role(r) if principal.role.covers(r) => Decision::Allow,
        Access::Role(_) => Decision::Deny,
        Access::RoleOrTenantOfInstance(r) | Access::RoleOrTenantOfMachine(r) => {
            if principal.role.covers(r) {
                Decision::Allow
            } else if principal.role == Role::Tenant {
                Decision::AllowIfInstanceInScope
            } else {
                Decision::Deny
            }
        }
    }
}
