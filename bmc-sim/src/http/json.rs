//! How a successful Redfish JSON response looks (status, body, `OData-Version`, no caching), and
//! the JSON merge that lays accepted PATCH changes over a document ([`merge`]). Shapes of
//! individual resources live with their routes, not here.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// A JSON resource with the headers every Redfish response carries.
pub fn json_response(status: StatusCode, body: Value) -> Response {
    let mut resp = (status, axum::Json(body)).into_response();
    let h = resp.headers_mut();
    h.insert("OData-Version", HeaderValue::from_static("4.0"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// `200 OK` with a JSON resource.
pub fn ok(body: Value) -> Response {
    json_response(StatusCode::OK, body)
}

/// A `{"@odata.id": uri}` link.
pub fn link(uri: &str) -> Value {
    serde_json::json!({ "@odata.id": uri })
}

/// A resource collection.
pub fn collection(odata_type: &str, uri: &str, name: &str, members: Vec<String>) -> Value {
    serde_json::json!({
        "@odata.type": odata_type,
        "@odata.id": uri,
        "Name": name,
        "Members@odata.count": members.len(),
        "Members": members.iter().map(|m| link(m)).collect::<Vec<_>>(),
    })
}

/// JSON merge of `patch` into `target` (objects merge key by key; anything else replaces).
pub fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p.clone(),
    }
}
