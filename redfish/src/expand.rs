//! `$expand`: whether a BMC can answer a collection with its members inline, and the query that
//! asks it to.
//!
//! Owns reading `ProtocolFeaturesSupported.ExpandQuery` of the ServiceRoot (DMTF ServiceRoot
//! schema) and choosing the `$expand` form of DSP0266's query parameters for reading the members
//! of a collection, which are *subordinate* references (not under `Links`):
//! - `.` (advertised as `NoLinks`) expands subordinate references only: the narrowest form that
//!   returns the members, preferred;
//! - `*` (`ExpandAll`) expands every reference: the members too, used when `.` is not advertised;
//! - `~` (`Links`) expands only the references under `Links`, never `Members`: not used.
//!
//! `($levels=1)` is added when `Levels` is advertised with `MaxLevels >= 1` (one level is also
//! the default without it). Pure functions: no request is made here, and whether a member came
//! back expanded is for the caller to see (a service may ignore the query, as a static mockup
//! server does).

use serde_json::Value;
use url::Url;

use crate::models::ServiceRoot;

/// The `ExpandQuery` object of a ServiceRoot's `ProtocolFeaturesSupported`, as advertised.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ExpandSupport {
    /// `ExpandAll`: the `*` form.
    pub expand_all: bool,
    /// `NoLinks`: the `.` form.
    pub no_links: bool,
    /// `Levels`: the `$levels` option.
    pub levels: bool,
    /// `MaxLevels`: the largest `$levels` (0 when absent).
    pub max_levels: u64,
}

impl ExpandSupport {
    /// What `root` advertises; all false when it says nothing (or something that is not an
    /// object of booleans).
    pub fn of(root: &ServiceRoot) -> ExpandSupport {
        let Some(q) = root.extra.get("ProtocolFeaturesSupported").and_then(|p| p.get("ExpandQuery")) else {
            return ExpandSupport::default();
        };
        let flag = |k: &str| q.get(k).and_then(Value::as_bool).unwrap_or(false);
        ExpandSupport {
            expand_all: flag("ExpandAll"),
            no_links: flag("NoLinks"),
            levels: flag("Levels"),
            max_levels: q.get("MaxLevels").and_then(Value::as_u64).unwrap_or(0),
        }
    }

    /// The query that reads a collection with its members expanded one level, if the service
    /// advertises a form that expands members (see the module docs).
    pub fn members_query(self) -> Option<String> {
        let form = if self.no_links {
            "."
        } else if self.expand_all {
            "*"
        } else {
            return None;
        };
        let levels = if self.levels && self.max_levels >= 1 { "($levels=1)" } else { "" };
        Some(format!("$expand={form}{levels}"))
    }
}

/// `url` with `query` as its query (replacing any it had).
pub(crate) fn with_query(url: &Url, query: &str) -> Url {
    let mut u = url.clone();
    u.set_query(Some(query));
    u
}

/// Whether a collection member, as the page listed it, is the member's whole document rather
/// than a bare link: it carries a property of its own, not only `@odata.*` annotations.
pub(crate) fn is_expanded(member_properties: &serde_json::Map<String, Value>) -> bool {
    member_properties.keys().any(|k| !k.starts_with("@odata."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(json: &str) -> ServiceRoot {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn captured_roots_choose_the_period_form_with_one_level() {
        // Dell R750 (MaxLevels 1), Supermicro (2), DGX (5), GB200 (6): all advertise NoLinks.
        for max in [1, 2, 5, 6] {
            let r = root(&format!(
                r#"{{"ProtocolFeaturesSupported":{{"ExpandQuery":{{"ExpandAll":true,"Levels":true,"Links":true,"MaxLevels":{max},"NoLinks":true}}}}}}"#
            ));
            assert_eq!(ExpandSupport::of(&r).members_query().as_deref(), Some("$expand=.($levels=1)"));
        }
    }

    #[test]
    fn forms_follow_what_is_advertised() {
        let q = |j: &str| {
            ExpandSupport::of(&root(&format!(r#"{{"ProtocolFeaturesSupported":{{"ExpandQuery":{j}}}}}"#)))
                .members_query()
        };
        assert_eq!(q(r#"{"ExpandAll":true}"#).as_deref(), Some("$expand=*"));
        assert_eq!(q(r#"{"ExpandAll":true,"Levels":true,"MaxLevels":3}"#).as_deref(), Some("$expand=*($levels=1)"));
        assert_eq!(q(r#"{"NoLinks":true,"Levels":true}"#).as_deref(), Some("$expand=."), "Levels without MaxLevels");
        assert_eq!(q(r#"{"NoLinks":true,"Levels":true,"MaxLevels":0}"#).as_deref(), Some("$expand=."));
        // `~` expands only what is under Links: never the members.
        assert_eq!(q(r#"{"Links":true,"Levels":true,"MaxLevels":2}"#), None);
        assert_eq!(q(r#"{"ExpandAll":false,"NoLinks":false}"#), None);
        assert_eq!(q(r#"{"ExpandAll":"yes"}"#), None, "not a boolean: not advertised");
        assert_eq!(ExpandSupport::of(&root("{}")).members_query(), None);
        assert_eq!(ExpandSupport::of(&root(r#"{"ProtocolFeaturesSupported":{}}"#)).members_query(), None);
    }

    #[test]
    fn the_query_is_sent_as_written() {
        let u = Url::parse("http://bmc/redfish/v1/UpdateService/FirmwareInventory").unwrap();
        let e = with_query(&u, "$expand=.($levels=1)");
        assert_eq!(e.as_str(), "http://bmc/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)");
    }

    #[test]
    fn a_bare_link_is_not_expanded() {
        let m = |j: &str| serde_json::from_str::<serde_json::Map<String, Value>>(j).unwrap();
        assert!(!is_expanded(&m(r#"{}"#)));
        assert!(!is_expanded(&m(r#"{"@odata.etag":"x"}"#)));
        assert!(is_expanded(&m(r##"{"@odata.type":"#SoftwareInventory","Id":"BMC","Version":"1"}"##)));
    }
}
