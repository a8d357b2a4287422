//! The meaning of update parameters shared by every upload route: `Targets` (and the host key
//! `targets_required`, checked on every route) and `@Redfish.OperationApplyTime`. Validation
//! only; creates no task.

use serde_json::{Map, Value};

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use hostfw_fleet::ApplyTime;

/// Parsed common parameters.
pub struct UpdateParams {
    /// Member ids to restrict to; `None` = every member the image applies to.
    pub only_members: Option<Vec<String>>,
    pub apply_time: ApplyTime,
}

/// Read `Targets` and `@Redfish.OperationApplyTime` from a JSON object (other keys, e.g.
/// `ForceUpdate` or `Oem`, are accepted and ignored).
pub fn parse_params(host: &Host, obj: &Map<String, Value>) -> Result<UpdateParams, RedfishError> {
    Ok(UpdateParams {
        only_members: parse_targets(host, obj.get("Targets"))?,
        apply_time: parse_apply_time(host, obj.get("@Redfish.OperationApplyTime"))?,
    })
}

/// A BMC with `targets_required` (Supermicro) refuses an update whose `Targets` names no
/// inventory member (absent, empty, or only the Manager or System): on every upload route, and
/// always on `HttpPushUri`, which carries no parameters. Checked before the update slot is taken.
pub fn check_targets_required(host: &Host, only_members: Option<&[String]>) -> Result<(), RedfishError> {
    if host.spec.targets_required && only_members.is_none() {
        return Err(RedfishError::bad_request(
            "ActionParameterMissing",
            "The update requires Targets naming the firmware inventory members to update.",
        ));
    }
    Ok(())
}

/// Parse a JSON body that must be an object.
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, RedfishError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(RedfishError::malformed_json("expected a JSON object")),
        Err(e) => Err(RedfishError::malformed_json(e)),
    }
}

/// `Targets`: inventory member URIs restrict the update; the Manager or System URI means
/// "whatever the image applies to". Anything else is rejected.
fn parse_targets(host: &Host, v: Option<&Value>) -> Result<Option<Vec<String>>, RedfishError> {
    let Some(v) = v else { return Ok(None) };
    let Some(list) = v.as_array() else {
        return Err(RedfishError::bad_request("PropertyValueTypeError", "Targets must be an array of URIs."));
    };
    let mut ids = Vec::new();
    let mut unrestricted = list.is_empty();
    let members: Vec<(String, String)> = host.data().members.iter().map(|m| (m.id.clone(), m.uri.clone())).collect();
    for t in list {
        let Some(uri) = t.as_str() else {
            return Err(RedfishError::bad_request("PropertyValueTypeError", "Targets must be an array of URIs."));
        };
        let uri = uri.trim_end_matches('/');
        if [host.manager_uri(), host.system_uri()].contains(&uri) {
            unrestricted = true;
        } else if let Some((id, _)) = members.iter().find(|(_, u)| u == uri) {
            ids.push(id.clone());
        } else {
            return Err(RedfishError::bad_request(
                "PropertyValueNotInList",
                format!("The value '{uri}' for the property Targets is not in the list of acceptable values."),
            ));
        }
    }
    Ok(if unrestricted { None } else { Some(ids) })
}

fn parse_apply_time(host: &Host, v: Option<&Value>) -> Result<ApplyTime, RedfishError> {
    match v {
        None | Some(Value::Null) => Ok(host.spec.apply_time),
        Some(v) => v.as_str().and_then(ApplyTime::parse).ok_or_else(|| {
            RedfishError::bad_request(
                "PropertyValueNotInList",
                format!(
                    "The value {v} for the property @Redfish.OperationApplyTime is not in the list of \
                     acceptable values (Immediate, OnReset)."
                ),
            )
        }),
    }
}
