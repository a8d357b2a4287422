//! Serving a profile: every request to a BMC that serves a captured tree (`profile`). Captured
//! documents are answered as captured (bytes unchanged, `ETag` from their `@odata.etag`); the
//! resources the simulation changes are the captured document with the changing properties laid
//! over it: inventory members (`Version`), the inventory collection (staged images), the System
//! (`PowerState`, `Boot`), the Task and Session collections; the FirmwareInventory and the
//! Systems collection answer `$expand` with those member documents inline (`expand`; other
//! collections ignore it, and a host with `expand_query = false` has the root's `ExpandQuery`
//! taken out and gets 501). Actions and uploads are accepted
//! only at the URIs the tree advertises and go to the same handlers as the generic shape
//! (`resets`, `update::push`, `update::simple`, `sessions`, `tasks::routes`), with the tree's
//! allowable values. Later pages of a collection (`Members@odata.nextLink`) are served from the
//! folders the capture wrote them to (`<collection>?$skip=N`). The service root is read only
//! (405, with `Allow`, to anything but GET/HEAD); `$metadata` is the tree's captured CSDL
//! (`odata`). The simulator's own `/sim/` API (state, faults, the in-band host flash a Scout
//! script calls) is the generic shape's, outside the tree. Dispatch only: what an action MEANS
//! lives in those handlers.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::Value;

use crate::faults::control_api;
use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::json::ok;
use crate::http::odata;
use crate::http::sessions;
use crate::power::resets;
use crate::profile::documents::{child_of, current, current_in, etag_of, overlay, with_fresh_etag, with_patches};
use crate::profile::patch;
use crate::resources::service_root;
use crate::resources::system_patch;
use crate::tasks::routes as task_routes;
use crate::tasks::task::TASKS_URI;
use crate::update::host_flash;
use crate::update::push;
use crate::update::simple;
use hostfw_fleet::{normalize, percent_decode, Profile};

/// The router of a BMC serving `profile`: the simulator's `/sim/` API, and one dispatcher for
/// the tree, behind the shared request layers.
pub fn router(host: Arc<Host>, _profile: Arc<Profile>) -> Router {
    let routes = Router::new()
        .route("/sim/state", get(control_api::state))
        .route("/sim/host-flash", post(host_flash::host_flash))
        .route("/sim/faults", get(control_api::get_faults).put(control_api::put_faults))
        .fallback(dispatch);
    crate::http::router::with_layers(routes, host)
}

async fn dispatch(State(host): State<Arc<Host>>, req: Request) -> Response {
    let Some(profile) = host.profile.clone() else {
        return RedfishError::not_found(req.uri().path()).into_response();
    };
    let shape = &profile.shape;
    let path = normalize(req.uri().path());
    let method = req.method().clone();
    let st = State(host.clone());
    let is = |uri: &Option<String>| uri.as_deref() == Some(path.as_str());
    if method == Method::POST {
        if is(&shape.system_reset_target) {
            return resets::system_reset(st, req).await;
        }
        if is(&shape.manager_reset_target) {
            return resets::manager_reset(st, req).await;
        }
        if is(&shape.multipart_push) {
            return push::multipart_push(st, req).await;
        }
        if is(&shape.http_push) {
            return push::http_push(st, req).await;
        }
        if is(&shape.simple_update) {
            return simple::simple_update(st, req).await;
        }
        let members = shape.sessions.as_ref().map(|s| format!("{s}/Members"));
        if is(&shape.sessions) || is(&members) {
            return sessions::login(st, req).await;
        }
        if let Some(a) = shape.ac_cycle_actions.iter().find(|a| a.target == path) {
            return crate::power::ac_cycle::profile_chassis_action(host.clone(), a.reset_types.clone(), req).await;
        }
    }
    if method == Method::PATCH && path == shape.system {
        return system_patch::patch_system(st, req).await;
    }
    if method == Method::PATCH && profile.has(&path) && path != "/redfish/v1" {
        let etag = current(&host, &profile, &path).and_then(|d| etag_of(&d));
        return patch::patch(host.clone(), profile.clone(), path, etag, req).await;
    }
    if let Some(id) = child_of(&path, shape.sessions.as_deref()) {
        match method {
            Method::GET => return sessions::get_session(st, Path(id), req.uri().clone()).await,
            Method::DELETE => return sessions::delete_session(st, Path(id), req.uri().clone()).await,
            _ => {}
        }
    }
    if method != Method::GET && method != Method::HEAD {
        return if profile.has(&path) {
            let allow = if path == "/redfish/v1" { "GET, HEAD" } else { "GET, HEAD, PATCH" };
            let mut resp = RedfishError::method_not_allowed(method.as_str(), &path).into_response();
            resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
            resp
        } else {
            RedfishError::not_found(&path).into_response()
        };
    }
    if path == "/redfish" {
        return service_root::versions().await;
    }
    if path == odata::METADATA_URI {
        return odata::metadata(st).await;
    }
    if is(&shape.firmware_inventory) || is(&shape.systems) {
        match crate::resources::expand::requested(&host, req.uri().query()) {
            Err(e) => return e.into_response(),
            Ok(Some(crate::resources::expand::Expand::Members)) => {
                let mut d = host.data();
                if let Some(mut doc) = current_in(&host, &profile, &d, &path) {
                    crate::resources::expand::expand_members(&mut doc, |uri| {
                        current_in(&host, &profile, &d, &normalize(uri))
                    });
                    d.stats.expanded_reads += 1;
                    return ok(doc);
                }
            }
            Ok(_) => {}
        }
    }
    // A later page of a collection, captured as the folder `<collection>?$skip=N`.
    if let Some(query) = req.uri().query() {
        let page = format!("{path}?{}", percent_decode(query));
        if let Some(bytes) = profile.raw(&page) {
            return captured(bytes);
        }
    }
    if is(&shape.sessions) {
        return sessions::list_sessions(st).await;
    }
    if let Some(rest) = path.strip_prefix("/redfish/v1/TaskService/TaskMonitors/") {
        return task_routes::spec_monitor(st, Path(rest.to_string()), req.uri().clone()).await;
    }
    if let Some(id) =
        path.strip_prefix(TASKS_URI).and_then(|r| r.strip_prefix('/')).and_then(|r| r.strip_suffix("/Monitor"))
    {
        return task_routes::bmcweb_monitor(st, Path(id.to_string()), req.uri().clone()).await;
    }
    if let Some(id) = child_of(&path, Some(TASKS_URI)).and_then(|id| id.parse::<u64>().ok()) {
        if id > shape.last_captured_task {
            return task_routes::task(st, Path(id.to_string()), req.uri().clone()).await;
        }
    }
    let overlaid = {
        let d = host.data();
        with_patches(&profile, &d, &path, overlay(&host, &profile, &d, &path))
    };
    match overlaid {
        // Unchanged from the capture (nothing happened yet): the captured bytes and ETag.
        Some(Some(doc)) if Some(&doc) == profile.doc(&path).as_ref() => match profile.raw(&path) {
            Some(bytes) => captured(bytes),
            None => ok_with_etag(doc),
        },
        Some(Some(doc)) => ok_with_etag(with_fresh_etag(&profile, &path, doc)),
        Some(None) => RedfishError::not_found(&path).into_response(),
        None => match profile.raw(&path) {
            Some(bytes) => captured(bytes),
            None => RedfishError::not_found(&path).into_response(),
        },
    }
}

/// A captured document, bytes unchanged.
fn captured(bytes: Vec<u8>) -> Response {
    let etag = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.get("@odata.etag").and_then(Value::as_str).map(str::to_string));
    let mut resp = (StatusCode::OK, Body::from(bytes)).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert("OData-Version", HeaderValue::from_static("4.0"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(v) = etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        h.insert(header::ETAG, v);
    }
    resp
}

/// A changed document, with its ETag (already fresh: [`with_fresh_etag`]) as a header too.
fn ok_with_etag(doc: Value) -> Response {
    let etag = etag_of(&doc);
    let mut resp = ok(doc);
    if let Some(v) = etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        resp.headers_mut().insert(header::ETAG, v);
    }
    resp
}
