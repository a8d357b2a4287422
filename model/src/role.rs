//! Who may do what through the hostfw API: the four roles a token carries.
//!
//! Owns the role names (as stored and as typed on the command line) and their order: `viewer` <
//! `operator` < `admin`, each holding every right of the ones before it. `tenant` stands apart: it
//! is scoped to the instances named in its token and holds no site-wide right. It must not know
//! about routes or tokens (the API declares each route's role; the store keeps tokens).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A token's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Every read of the site.
    Viewer,
    /// Reads, plus windows, requests, brakes, resets, maintenance, auto-update and exploration.
    Operator,
    /// Everything: the catalog, machines, tokens, keys and configuration besides.
    Admin,
    /// Approves updates of its own instances and reads their status; nothing else.
    Tenant,
}

impl Role {
    /// Every role, in order.
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Operator, Role::Admin, Role::Tenant];

    /// The role's name as stored and typed.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
            Role::Tenant => "tenant",
        }
    }

    /// Whether this role holds every right of `needed` (a site role: viewer, operator or admin).
    /// A tenant holds none of them.
    pub fn covers(self, needed: Role) -> bool {
        match (self.rank(), needed.rank()) {
            (Some(have), Some(need)) => have >= need,
            _ => self == needed,
        }
    }

    fn rank(self) -> Option<u8> {
        match self {
            Role::Viewer => Some(1),
            Role::Operator => Some(2),
            Role::Admin => Some(3),
            Role::Tenant => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A role name that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role `{0}`: expected viewer, operator, admin or tenant")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Role, UnknownRole> {
        Role::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| UnknownRole(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::Role::{self, *};

    #[test]
    fn site_roles_are_ordered_and_the_tenant_stands_apart() {
        assert!(Admin.covers(Operator) && Admin.covers(Viewer) && Operator.covers(Viewer));
        assert!(!Viewer.covers(Operator) && !Operator.covers(Admin));
        assert!(Tenant.covers(Tenant));
        assert!([Viewer, Operator, Admin].iter().all(|r| !Tenant.covers(*r) && !r.covers(Tenant)));
        for r in Role::ALL {
            assert_eq!(r.as_str().parse::<Role>(), Ok(r));
        }
        assert!("root".parse::<Role>().is_err());
    }
}
