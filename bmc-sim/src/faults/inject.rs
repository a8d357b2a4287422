//! Applying a BMC's fault set at run time: replacing it (and starting or ending an
//! `unreachable_for_secs` outage), the request middleware for `http_errors`,
//! `malformed_json_next`, `slow_response_secs`, `failing_actions` and `foreign_links` (never on
//! `/sim`), and consuming `fail_next_tasks`, `refuse_resets` and `refuse_patches`. What the faults ARE is `hostfw_fleet::Fault`;
//! closing the listener is `fleet::server`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::fleet::clock;
use crate::fleet::state::{Host, HostData};
use crate::http::error::RedfishError;
use crate::http::reject::reject;
use hostfw_fleet::{Fault, ForeignLinks, LinkSpelling};

/// Replace the host's fault set. A positive `unreachable_for_secs` takes the BMC off the
/// network after `outage_delay` (time for an HTTP answer to leave); zero ends an outage now.
pub(crate) fn replace_faults(host: &Arc<Host>, fault: Fault, outage_delay: Duration) {
    let outage = clock::secs(fault.unreachable_for_secs);
    let generation = {
        let mut d = host.data();
        d.faults = fault;
        d.fault_generation += 1;
        if outage.is_zero() {
            d.unreachable_until = None;
        }
        d.fault_generation
    };
    if outage.is_zero() {
        host.outage.notify_one();
        return;
    }
    if outage_delay.is_zero() {
        begin_outage(host, generation, outage);
    } else {
        let host = host.clone();
        tokio::spawn(async move {
            tokio::time::sleep(outage_delay).await;
            begin_outage(&host, generation, outage);
        });
    }
}

/// Take the BMC off the network for `outage`, unless the fault set was replaced since.
fn begin_outage(host: &Host, generation: u64, outage: Duration) {
    {
        let mut d = host.data();
        if d.fault_generation != generation {
            return;
        }
        d.unreachable_until = Some(tokio::time::Instant::now() + outage);
    }
    host.outage.notify_one();
}

/// An update task is starting: whether it must fail (consumes one `fail_next_tasks`).
pub(crate) fn take_task_failure(d: &mut HostData) -> bool {
    if d.faults.fail_next_tasks == 0 {
        return false;
    }
    d.faults.fail_next_tasks -= 1;
    true
}

/// A reset action is asked for: whether it must be refused (consumes one `refuse_resets`).
pub(crate) fn take_reset_refusal(d: &mut HostData) -> bool {
    if d.faults.refuse_resets == 0 {
        return false;
    }
    d.faults.refuse_resets -= 1;
    true
}

/// A PATCH is asked for: whether it must be refused (consumes one `refuse_patches`).
fn take_patch_refusal(d: &mut HostData) -> bool {
    if d.faults.refuse_patches == 0 {
        return false;
    }
    d.faults.refuse_patches -= 1;
    true
}

/// Consume one injected HTTP error, if any is left; returns its status.
fn take_http_error(d: &mut HostData) -> Option<u16> {
    let errors = d.faults.http_errors.as_mut()?;
    if errors.count == 0 {
        d.faults.http_errors = None;
        return None;
    }
    errors.count -= 1;
    let status = errors.status;
    if errors.count == 0 {
        d.faults.http_errors = None;
    }
    Some(status)
}

/// Middleware: injected HTTP errors and slow answers, for every path outside `/sim`.
pub async fn inject(State(host): State<Arc<Host>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path == "/sim" || path.starts_with("/sim/") {
        return next.run(req).await;
    }
    let is_get = req.method() == axum::http::Method::GET;
    let failing_action = req.method() == axum::http::Method::POST && {
        let d = host.data();
        d.faults.failing_actions.iter().any(|a| path.ends_with(&format!("/{a}")))
    };
    if failing_action {
        tracing::info!(host = %host.spec.id, %path, "injected failure of an action");
        return reject(req, RedfishError::injected(StatusCode::INTERNAL_SERVER_ERROR)).await;
    }
    if req.method() == axum::http::Method::PATCH && take_patch_refusal(&mut host.data()) {
        tracing::info!(host = %host.spec.id, %path, "PATCH refused (injected fault refuse_patches)");
        let e = RedfishError::bad_request("PropertyNotWritable", "Injected fault: the settings change was refused.");
        return reject(req, e).await;
    }
    let (injected, malformed, slow, foreign) = {
        let mut d = host.data();
        let malformed = is_get && d.faults.malformed_json_next > 0;
        if malformed {
            d.faults.malformed_json_next -= 1;
        }
        let foreign = d.faults.foreign_links.clone();
        (take_http_error(&mut d), malformed, clock::secs(d.faults.slow_response_secs), foreign)
    };
    if let Some(f) = foreign.as_ref().filter(|f| f.spelling == LinkSpelling::Redirect) {
        let to = f.spell(req.uri().path_and_query().map_or("/", |pq| pq.as_str()));
        tracing::info!(host = %host.spec.id, path = %req.uri().path(), %to, "injected foreign redirect");
        return (StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, to)]).into_response();
    }
    if malformed && injected.is_none() {
        tracing::info!(host = %host.spec.id, path = %req.uri().path(), "injected malformed JSON");
        let body = "{\"@odata.id\": \"/redfish/v1/\", \"Members\": [ <html>502 Bad Gateway";
        return ([(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response();
    }
    let resp = match injected {
        Some(status) => {
            tracing::info!(host = %host.spec.id, status, path = %req.uri().path(), "injected HTTP error");
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            reject(req, RedfishError::injected(status)).await
        }
        None => next.run(req).await,
    };
    let resp = match foreign {
        Some(f) => foreign_links(resp, &f).await,
        None => resp,
    };
    if !slow.is_zero() {
        tokio::time::sleep(slow).await;
    }
    resp
}

/// Largest reply body `foreign_links` rewrites (bigger ones pass as they are).
const MAX_REWRITE_BYTES: usize = 4 << 20;

/// The reply with every Redfish link (the `Location` header and each JSON string value that is
/// a `/redfish/` path, `@odata.context` aside) pointed at `f.origin`.
async fn foreign_links(resp: Response, f: &ForeignLinks) -> Response {
    let (mut parts, body) = resp.into_parts();
    if let Some(loc) = parts.headers.get(axum::http::header::LOCATION).and_then(|v| v.to_str().ok()) {
        if loc.starts_with("/redfish/") {
            if let Ok(v) = axum::http::HeaderValue::from_str(&f.spell(loc)) {
                parts.headers.insert(axum::http::header::LOCATION, v);
            }
        }
    }
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REWRITE_BYTES).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "reply too large to rewrite").into_response();
    };
    let Ok(mut doc) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    rewrite_links(&mut doc, f, None);
    let out = serde_json::to_vec(&doc).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(out))
}

fn rewrite_links(v: &mut serde_json::Value, f: &ForeignLinks, key: Option<&str>) {
    match v {
        serde_json::Value::String(s) if s.starts_with("/redfish/") && key != Some("@odata.context") => {
            *s = f.spell(s);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| rewrite_links(i, f, None)),
        serde_json::Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                rewrite_links(item, f, Some(k));
            }
        }
        _ => {}
    }
}
