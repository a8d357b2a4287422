//! Request-wide Redfish protocol rules (DSP0266) that every BMC shares, generic or profile, as
//! one middleware: requests with an `OData-Version` other than 4.0 get 412; query parameters
//! this simulator does not know get 501 when they start with `$`, and `only` or `excerpt` with
//! a value gets 400 (the known ones are accepted and ignored: the whole resource is served); JSON answers get
//! `Link: <schema>; rel=describedby` from their `@odata.type`, and GET/HEAD of the service root
//! gets `Allow`. Headers and refusals only: no handler behaviour changes here.

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::http::error::RedfishError;

/// Query parameters the Redfish specification defines (served, but not applied).
const KNOWN_QUERY: [&str; 8] =
    ["$expand", "$select", "$filter", "$top", "$skip", "only", "excerpt", "includeoriginofcondition"];
/// Largest JSON answer read to find its `@odata.type` (larger ones, and answers of unknown size,
/// go out without `Link`).
const MAX_DOC_FOR_LINK: usize = 8 << 20;

pub async fn rules(mut req: Request, next: Next) -> Response {
    if let Some(v) = req.headers().get("OData-Version") {
        if v.as_bytes() != b"4.0" {
            return RedfishError::odata_version_unsupported(&String::from_utf8_lossy(v.as_bytes())).into_response();
        }
    }
    if let Err(e) = check_query(req.uri().query().unwrap_or_default()) {
        return e.into_response();
    }
    let root = matches!(req.uri().path(), "/redfish/v1" | "/redfish/v1/");
    let get = matches!(*req.method(), Method::GET | Method::HEAD);
    // HEAD is answered as a GET whose body is dropped here, after its headers are complete.
    let head = *req.method() == Method::HEAD;
    if head {
        *req.method_mut() = Method::GET;
    }
    let mut resp = next.run(req).await;
    if root && get && resp.status().is_success() && !resp.headers().contains_key(header::ALLOW) {
        resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    }
    let resp = with_link(resp).await;
    if head {
        let (mut parts, body) = resp.into_parts();
        if let Some(n) = body.size_hint().exact() {
            parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(n));
        }
        return Response::from_parts(parts, Body::empty());
    }
    resp
}

fn check_query(query: &str) -> Result<(), RedfishError> {
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = key.replace("%24", "$");
        let key = key.as_str();
        if matches!(key, "only" | "excerpt") && !value.is_empty() {
            return Err(RedfishError::query_value_invalid(key, value));
        }
        if key.starts_with('$') && !KNOWN_QUERY.contains(&key) {
            return Err(RedfishError::query_not_supported(key));
        }
    }
    Ok(())
}

/// Add `Link: <https://redfish.dmtf.org/schemas/v1/<Type>.json>; rel=describedby` to a JSON
/// answer that names its `@odata.type` (versioned types: `<Namespace>.vX_Y_Z.json`).
async fn with_link(resp: Response) -> Response {
    let json = resp.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !json || resp.status() != StatusCode::OK || resp.headers().contains_key(header::LINK) {
        return resp;
    }
    let known_size = resp.body().size_hint().upper();
    if known_size.is_none_or(|n| n > MAX_DOC_FOR_LINK as u64) {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_DOC_FOR_LINK).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let schema = serde_json::from_slice::<Typed>(&bytes).ok().and_then(|t| t.odata_type).and_then(|t| schema_of(&t));
    if let Some(v) = schema.and_then(|s| HeaderValue::from_str(&s).ok()) {
        parts.headers.insert(header::LINK, v);
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// The one property of a JSON answer this file reads.
#[derive(Deserialize)]
struct Typed {
    #[serde(rename = "@odata.type")]
    odata_type: Option<String>,
}

/// `#Task.v1_7_0.Task` → the `Link` value for `Task.v1_7_0.json`; `#TaskCollection.TaskCollection`
/// → `TaskCollection.json`.
fn schema_of(odata_type: &str) -> Option<String> {
    let mut parts = odata_type.trim_start_matches('#').split('.');
    let namespace = parts.next().filter(|n| !n.is_empty())?;
    let rest: Vec<&str> = parts.collect();
    let file = match rest.as_slice() {
        [version, _] if version.starts_with('v') => format!("{namespace}.{version}"),
        _ => namespace.to_string(),
    };
    Some(format!("<https://redfish.dmtf.org/schemas/v1/{file}.json>; rel=describedby"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_link_follows_the_odata_type() {
        assert_eq!(
            schema_of("#Task.v1_7_0.Task").unwrap(),
            "<https://redfish.dmtf.org/schemas/v1/Task.v1_7_0.json>; rel=describedby"
        );
        assert_eq!(
            schema_of("#TaskCollection.TaskCollection").unwrap(),
            "<https://redfish.dmtf.org/schemas/v1/TaskCollection.json>; rel=describedby"
        );
        assert_eq!(schema_of("#"), None);
    }

    #[test]
    fn unknown_dollar_parameters_and_only_with_a_value_are_refused() {
        assert!(check_query("").is_ok());
        assert!(check_query("$expand=.($levels=1)&$skip=2&only").is_ok());
        let e = check_query("$rpvunknown").unwrap_err();
        assert_eq!(e.status, StatusCode::NOT_IMPLEMENTED);
        for bad in ["only=foo", "excerpt=foo"] {
            assert_eq!(check_query(bad).unwrap_err().status, StatusCode::BAD_REQUEST);
        }
    }
}
