//! PATCH of a captured resource on a profile BMC (anything but the simulated System, whose boot
//! override is `resources::system_patch`): vendor attributes such as Dell's `Lockdown.1.SystemLockdown`,
//! Supermicro's `SysLockdownEnabled`, or BIOS attributes. Generic: a PATCH may change only
//! properties the captured document has, with a value of the same JSON type; the accepted changes
//! are kept as an overlay ([`HostData::patched`]) laid over the capture on every GET.
//!
//! A PATCH of a *settings object* (the `@Redfish.Settings.SettingsObject` of its parent, e.g.
//! `Systems/DGX/Bios/SD`) is pending: it shows on the settings object at once and reaches the
//! parent resource when the host next powers on, as BIOS settings do. When the resource serves an
//! ETag, an `If-Match` that names another one is refused with 412. `Id`, `Name`, annotations and
//! a predefined Role's `AssignedPrivileges` are read only. Arrays follow DSP0266: `null` removes
//! an element, `{}` keeps it, a shorter array truncates.
//!
//! Owns validation and the overlay data; never resets the host.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::json::merge;
use crate::update::params::parse_object;
use hostfw_fleet::Profile;

/// Largest PATCH body read.
const MAX_PATCH_BODY: usize = 256 << 10;

/// `PATCH <path>` of a captured resource. `current_etag` is the ETag a GET would serve now.
pub async fn patch(
    host: Arc<Host>,
    profile: Arc<Profile>,
    path: String,
    current_etag: Option<String>,
    req: Request,
) -> Response {
    let Some(captured) = profile.doc(&path) else {
        return RedfishError::not_found(&path).into_response();
    };
    let if_match = req.headers().get(header::IF_MATCH).and_then(|v| v.to_str().ok()).map(str::to_string);
    if let (Some(want), Some(have)) = (&if_match, &current_etag) {
        if want != "*" && want != have {
            return RedfishError::precondition_failed(&path).into_response();
        }
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_PATCH_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return RedfishError::bad_request("GeneralError", "Unreadable or oversized request body.").into_response()
        }
    };
    let changes = match parse_object(&body) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    // A settings object may be sparse: its parent's properties are patchable through it too.
    let parent = settings_parent(&profile, &path);
    let mut shape = captured.clone();
    if let Some((_, parent_doc)) = &parent {
        merge(&mut shape, parent_doc);
    }
    if let Err(e) = check(&shape, &Value::Object(changes.clone()), "") {
        return e.into_response();
    }
    {
        let mut d = host.data();
        d.stats.setting_patches += 1;
        let mut now = shape;
        if let Some(o) = d.patched.get(&path) {
            merge(&mut now, o);
        }
        let changes = with_arrays_resolved(&now, Value::Object(changes));
        let overlay = d.patched.entry(path.clone()).or_insert_with(|| Value::Object(Map::new()));
        merge(overlay, &changes);
        if let Some((parent_path, _)) = parent {
            let pending =
                d.pending_settings.entry(parent_path).or_insert_with(|| (path.clone(), Value::Object(Map::new())));
            merge(&mut pending.1, &changes);
        }
    }
    tracing::info!(host = %host.spec.id, %path, "resource patched");
    StatusCode::NO_CONTENT.into_response()
}

/// `(parent path, parent document)` when `path` is its parent's settings object.
fn settings_parent(profile: &Profile, path: &str) -> Option<(String, Value)> {
    let (parent, _) = path.rsplit_once('/')?;
    let doc = profile.doc(parent)?;
    let target = doc.pointer("/@Redfish.Settings/SettingsObject/@odata.id")?.as_str()?;
    (hostfw_fleet::normalize(target) == path).then(|| (parent.to_string(), doc))
}

/// Every changed property exists in `doc` with a value of the same JSON type (null matches any).
fn check(doc: &Value, changes: &Value, at: &str) -> Result<(), RedfishError> {
    let Some(changes) = changes.as_object() else {
        return Ok(());
    };
    for (key, value) in changes {
        let name = if at.is_empty() { key.clone() } else { format!("{at}/{key}") };
        let Some(have) = doc.get(key) else {
            return Err(RedfishError::bad_request(
                "PropertyUnknown",
                format!("The property {name} is not in the list of valid properties for the resource."),
            ));
        };
        // A predefined Role's privileges are fixed (DSP0266 "Roles").
        let predefined = doc.get("IsPredefined") == Some(&Value::Bool(true));
        if key.starts_with('@') || key == "Id" || key == "Name" || (predefined && key == "AssignedPrivileges") {
            return Err(RedfishError::bad_request(
                "PropertyNotWritable",
                format!("The property {name} is a read only property and cannot be assigned a value."),
            ));
        }
        match (have, value) {
            (Value::Object(_), Value::Object(_)) => check(have, value, &name)?,
            (Value::Null, _) => {}
            (a, b) if std::mem::discriminant(a) == std::mem::discriminant(b) => {}
            (Value::Number(_), Value::Number(_)) => {}
            _ => {
                let message = format!(
                    "The value {value} for the property {name} is of a different type than the property \
                     can accept."
                );
                return Err(RedfishError::bad_request("PropertyValueTypeError", message));
            }
        }
    }
    Ok(())
}

/// The arrays of a PATCH made whole against the document as it is `now` (DSP0266 "PATCH on array
/// properties"): element by element, `null` removes the element, `{}` keeps it, an object merges
/// into it, a value replaces it; elements past the end of the request's array are removed.
fn with_arrays_resolved(now: &Value, change: Value) -> Value {
    match change {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let at = now.get(&k).unwrap_or(&Value::Null);
                    let v = with_arrays_resolved(at, v);
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => {
            let current = now.as_array().cloned().unwrap_or_default();
            let element = |(i, item): (usize, Value)| match item {
                Value::Null => None,
                Value::Object(o) if o.is_empty() => current.get(i).cloned(),
                other => {
                    let mut base = current.get(i).cloned().unwrap_or(Value::Null);
                    let other = with_arrays_resolved(&base, other);
                    merge(&mut base, &other);
                    Some(base)
                }
            };
            Value::Array(items.into_iter().enumerate().filter_map(element).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arrays_keep_remove_and_truncate_as_dsp0266_says() {
        let now = json!({"NTP": {"NTPServers": ["a", "b", "c"], "Enabled": true}});
        let resolve = |change: Value| with_arrays_resolved(&now, change);
        assert_eq!(resolve(json!({"NTP": {"NTPServers": [{}, "d"]}})), json!({"NTP": {"NTPServers": ["a", "d"]}}));
        assert_eq!(resolve(json!({"NTP": {"NTPServers": [null, "b"]}})), json!({"NTP": {"NTPServers": ["b"]}}));
        assert_eq!(resolve(json!({"NTP": {"Enabled": false}})), json!({"NTP": {"Enabled": false}}));
        let objects = json!({"L": [{"x": 1, "y": 2}]});
        assert_eq!(with_arrays_resolved(&objects, json!({"L": [{"y": 3}]})), json!({"L": [{"x": 1, "y": 3}]}));
    }
}
