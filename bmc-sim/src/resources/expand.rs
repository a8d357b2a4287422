//! `$expand` (DSP0266 query parameters) as a simulated BMC offers it: what the ServiceRoot
//! advertises in `ProtocolFeaturesSupported`, how a `$expand` value is read, and laying the
//! member documents into a collection.
//!
//! What is advertised mirrors the captured tree of the host's vendor
//! (`../shared/redfish/vendor-mockups`): every captured BMC advertises `ExpandAll`, `Levels`,
//! `Links` and `NoLinks`, with `MaxLevels` 1 (Dell iDRAC), 2 (Supermicro), 5 (NVIDIA DGX) or 6
//! (NVIDIA GB200); a profile host advertises its tree's own block. A host with
//! `expand_query = false` advertises no `ExpandQuery` and answers `$expand` with 501
//! QueryNotSupported. Only collections expand (their members are the subordinate references;
//! the simulator expands the FirmwareInventory and the Systems collection): `.` and `*` expand the members, `~` (only
//! references under `Links`) leaves them as links. This file decides and shapes; the routes
//! (`resources::inventory`, `profile::routes`) call it, and it counts nothing itself.

use serde_json::{json, Value};

use crate::fleet::state::Host;
use crate::http::error::RedfishError;

/// What a `$expand` asks of a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expand {
    /// `.` or `*`: the members' documents inline.
    Members,
    /// `~`: references under `Links` only; the members stay links.
    LinksOnly,
}

/// The `ProtocolFeaturesSupported` block of the captured tree of `vendor`/`model`, for the
/// generic shape's ServiceRoot.
pub(crate) fn protocol_features(vendor: &str, model: &str) -> Value {
    let v = vendor.to_ascii_lowercase();
    let max_levels = if v.contains("supermicro") {
        2
    } else if v.contains("nvidia") && model.to_ascii_lowercase().contains("gb200") {
        6
    } else if v.contains("nvidia") {
        5
    } else {
        1
    };
    json!({
        "ExcerptQuery": false,
        "FilterQuery": true,
        "SelectQuery": true,
        "OnlyMemberQuery": true,
        "DeepOperations": {"DeepPATCH": false, "DeepPOST": false},
        "ExpandQuery": {"ExpandAll": true, "Levels": true, "Links": true, "MaxLevels": max_levels, "NoLinks": true},
    })
}

/// The `ExpandQuery` this host advertises: `None` with `expand_query = false`; a profile host
/// its tree's own; the generic shape its vendor's ([`protocol_features`]).
pub(crate) fn advertised(host: &Host) -> Option<Value> {
    if !host.spec.expand_query {
        return None;
    }
    match &host.profile {
        Some(p) => p.doc("/redfish/v1")?.pointer("/ProtocolFeaturesSupported/ExpandQuery").cloned(),
        None => protocol_features(&host.spec.vendor, &host.spec.model).get("ExpandQuery").cloned(),
    }
}

/// The `$expand` of a request's query, checked against what `host` advertises: `Ok(None)`
/// without one; 501 when the host advertises none; 400 for a value it cannot take (an unknown
/// form, a form it does not advertise, `$levels` not a number or beyond its `MaxLevels`).
pub(crate) fn requested(host: &Host, query: Option<&str>) -> Result<Option<Expand>, RedfishError> {
    let Some(value) = query.into_iter().flat_map(|q| q.split('&')).find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k.replace("%24", "$") == "$expand").then(|| hostfw_fleet::percent_decode(v))
    }) else {
        return Ok(None);
    };
    let Some(support) = advertised(host) else {
        return Err(RedfishError::query_not_supported("$expand"));
    };
    parse(&value, &support).map(Some).ok_or_else(|| RedfishError::query_value_invalid("$expand", &value))
}

/// `value` (`.`, `*`, `~`, each with an optional `($levels=N)`) against `support` (an
/// `ExpandQuery` object); `None` when it cannot be taken.
fn parse(value: &str, support: &Value) -> Option<Expand> {
    let flag = |k: &str| support.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (form, options) = match value.split_once('(') {
        Some((form, rest)) => (form, Some(rest.strip_suffix(')')?)),
        None => (value, None),
    };
    if let Some(options) = options {
        let levels: u64 = options.strip_prefix("$levels=")?.parse().ok()?;
        let max = support.get("MaxLevels").and_then(Value::as_u64).unwrap_or(0);
        if !flag("Levels") || levels == 0 || levels > max {
            return None;
        }
    }
    match form {
        "." if flag("NoLinks") => Some(Expand::Members),
        "*" if flag("ExpandAll") => Some(Expand::Members),
        "~" if flag("Links") => Some(Expand::LinksOnly),
        _ => None,
    }
}

/// Replace each `{"@odata.id"}` member of `collection` by the document `member` gives for it
/// (a member it has none for stays a link).
pub(crate) fn expand_members(collection: &mut Value, member: impl Fn(&str) -> Option<Value>) {
    let Some(members) = collection.get_mut("Members").and_then(Value::as_array_mut) else {
        return;
    };
    for m in members.iter_mut() {
        if let Some(doc) = m.get("@odata.id").and_then(Value::as_str).and_then(&member) {
            *m = doc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_and_levels_follow_what_is_advertised() {
        let dell = protocol_features("Dell Inc.", "PowerEdge R750")["ExpandQuery"].clone();
        assert_eq!(parse(".($levels=1)", &dell), Some(Expand::Members));
        assert_eq!(parse(".", &dell), Some(Expand::Members));
        assert_eq!(parse("*", &dell), Some(Expand::Members));
        assert_eq!(parse("~($levels=1)", &dell), Some(Expand::LinksOnly));
        assert_eq!(parse(".($levels=2)", &dell), None, "Dell's MaxLevels is 1");
        assert_eq!(parse(".($levels=0)", &dell), None);
        assert_eq!(parse(".($levels=x)", &dell), None);
        assert_eq!(parse("Members", &dell), None);
        let smc = protocol_features("Supermicro", "SYS-821GE-TNHR")["ExpandQuery"].clone();
        assert_eq!(parse(".($levels=2)", &smc), Some(Expand::Members));
        assert_eq!(protocol_features("NVIDIA", "GB200 NVL")["ExpandQuery"]["MaxLevels"], 6);
        assert_eq!(protocol_features("NVIDIA", "DGXH100")["ExpandQuery"]["MaxLevels"], 5);
        let only_links = json!({"Links": true});
        assert_eq!(parse(".", &only_links), None);
    }

    #[test]
    fn members_are_replaced_by_their_documents() {
        let mut c = json!({"Members": [{"@odata.id": "/a"}, {"@odata.id": "/b"}]});
        expand_members(&mut c, |uri| (uri == "/a").then(|| json!({"@odata.id": "/a", "Id": "a"})));
        assert_eq!(c["Members"], json!([{"@odata.id": "/a", "Id": "a"}, {"@odata.id": "/b"}]));
    }
}
