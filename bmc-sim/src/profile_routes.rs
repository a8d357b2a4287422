//! Serving a profile: every request to a BMC that serves a captured tree (`profile`). Captured
//! documents are answered as captured (bytes unchanged, `ETag` from their `@odata.etag`); the
//! resources the simulation changes are the captured document with the changing properties laid
//! over it: inventory members (`Version`), the inventory collection (staged images), the System
//! (`PowerState`, `Boot`), the Task and Session collections; the FirmwareInventory and the
//! Systems collection answer `$expand` with those member documents inline (`expand`; other
//! collections ignore it, and a host with `expand_query = false` has the root's `ExpandQuery`
//! taken out and gets 501). Actions and uploads are accepted
//! only at the URIs the tree advertises and go to the same handlers as the generic shape
//! (`resets`, `update_push`, `update_simple`, `sessions`, `task_routes`), with the tree's
//! allowable values. Later pages of a collection (`Members@odata.nextLink`) are served from the
//! folders the capture wrote them to (`<collection>?$skip=N`). The service root is read only
//! (405, with `Allow`, to anything but GET/HEAD); `$metadata` is the tree's captured CSDL
//! (`odata`). The simulator's own `/sim/` API (state, faults, the in-band host flash a Scout
//! script calls) is the generic shape's, outside the tree. Dispatch only: what an action MEANS
//! lives in those handlers.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use crate::profile::{normalize, percent_decode, Profile};
use crate::redfish_error::RedfishError;
use crate::redfish_json::{link, ok};
use crate::state::{Host, HostData};
use crate::task::TASKS_URI;
use crate::{
    control_api, host_flash, odata, profile_patch, resets, service_root, sessions, system_patch, task_routes,
    update_push, update_simple,
};

/// The router of a BMC serving `profile`: the simulator's `/sim/` API, and one dispatcher for
/// the tree, behind the shared request layers.
pub fn router(host: Arc<Host>, _profile: Arc<Profile>) -> Router {
    let routes = Router::new()
        .route("/sim/state", get(control_api::state))
        .route("/sim/host-flash", post(host_flash::host_flash))
        .route("/sim/faults", get(control_api::get_faults).put(control_api::put_faults))
        .fallback(dispatch);
    crate::router::with_layers(routes, host)
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
            return update_push::multipart_push(st, req).await;
        }
        if is(&shape.http_push) {
            return update_push::http_push(st, req).await;
        }
        if is(&shape.simple_update) {
            return update_simple::simple_update(st, req).await;
        }
        let members = shape.sessions.as_ref().map(|s| format!("{s}/Members"));
        if is(&shape.sessions) || is(&members) {
            return sessions::login(st, req).await;
        }
        if let Some(a) = shape.ac_cycle_actions.iter().find(|a| a.target == path) {
            return crate::ac_cycle::profile_chassis_action(host.clone(), a.reset_types.clone(), req).await;
        }
    }
    if method == Method::PATCH && path == shape.system {
        return system_patch::patch_system(st, req).await;
    }
    if method == Method::PATCH && profile.has(&path) && path != "/redfish/v1" {
        let etag = current(&host, &profile, &path).and_then(|d| etag_of(&d));
        return profile_patch::patch(host.clone(), profile.clone(), path, etag, req).await;
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
        match crate::expand::requested(&host, req.uri().query()) {
            Err(e) => return e.into_response(),
            Ok(Some(crate::expand::Expand::Members)) => {
                let mut d = host.data();
                if let Some(mut doc) = current_in(&host, &profile, &d, &path) {
                    crate::expand::expand_members(&mut doc, |uri| current_in(&host, &profile, &d, &normalize(uri)));
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

/// The changing resources: `Some(doc)` laid over the capture, `Some(None)` gone (a hidden
/// member), `None` = not a changing resource (serve the capture).
fn overlay(host: &Host, profile: &Profile, d: &HostData, path: &str) -> Option<Option<Value>> {
    let shape = &profile.shape;
    if path == "/redfish/v1" && !host.spec.expand_query {
        // A BMC without `$expand`: the captured root less its ExpandQuery.
        let mut doc = profile.doc(path)?;
        if let Some(features) = doc.get_mut("ProtocolFeaturesSupported").and_then(Value::as_object_mut) {
            features.remove("ExpandQuery");
        }
        return Some(Some(doc));
    }
    if path == shape.system {
        let mut doc = profile.doc(path)?;
        doc["PowerState"] = json!(d.power.as_str());
        if let Some(boot) = doc.get_mut("Boot").and_then(Value::as_object_mut) {
            boot.insert("BootSourceOverrideTarget".into(), json!(d.boot.target));
            boot.insert("BootSourceOverrideEnabled".into(), json!(d.boot.enabled));
        }
        return Some(Some(doc));
    }
    if shape.firmware_inventory.as_deref() == Some(path) {
        let mut doc = profile.doc(path)?;
        let mut members: Vec<Value> = d.visible_members().map(|m| link(&m.uri)).collect();
        members.extend(d.visible_members().filter(|m| m.staged.is_some()).map(|m| link(&staged_uri(&m.uri))));
        doc["Members@odata.count"] = json!(members.len());
        doc["Members"] = Value::Array(members);
        return Some(Some(doc));
    }
    if let Some(m) = d.members.iter().find(|m| m.uri == path) {
        if !d.visible_members().any(|v| v.uri == path) {
            return Some(None);
        }
        let mut doc = profile.doc(path)?;
        let captured = doc.get("Version").and_then(Value::as_str).map(str::to_string);
        // A placeholder (null) version stays as captured until something is installed.
        if captured.is_some() || !m.version.is_empty() {
            doc["Version"] = json!(m.version);
        }
        return Some(Some(doc));
    }
    if let Some(m) = d.members.iter().find(|m| staged_uri(&m.uri) == path) {
        let staged = m.staged.as_ref()?;
        return Some(Some(json!({
            "@odata.type": "#SoftwareInventory.v1_12_0.SoftwareInventory",
            "@odata.id": path,
            "Id": format!("{}-Staged", m.id),
            "Name": format!("{} (staged)", m.name),
            "Version": staged.version,
            "Updateable": false,
            "Active": false,
            "Staged": true,
            "Status": {"State": "StandbyOffline", "Health": "OK"},
            "Links": { "StagedTargets": [link(&m.uri)] },
        })));
    }
    if shape.tasks.as_deref() == Some(path) {
        let mut doc = profile.doc(path)?;
        let mut members = doc.get("Members").and_then(Value::as_array).cloned().unwrap_or_default();
        members.extend(d.tasks.keys().map(|id| link(&format!("{TASKS_URI}/{id}"))));
        doc["Members@odata.count"] = json!(members.len());
        doc["Members"] = Value::Array(members);
        return Some(Some(doc));
    }
    None
}

/// Lay the accepted PATCHes of `path` over its document.
fn with_patches(profile: &Profile, d: &HostData, path: &str, doc: Option<Option<Value>>) -> Option<Option<Value>> {
    let Some(changes) = d.patched.get(path) else {
        return doc;
    };
    let mut base = match doc {
        Some(Some(doc)) => doc,
        Some(None) => return Some(None),
        None => profile.doc(path)?,
    };
    profile_patch::merge(&mut base, changes);
    Some(Some(base))
}

/// The document a GET of `path` would answer now, if any.
fn current(host: &Host, profile: &Profile, path: &str) -> Option<Value> {
    current_in(host, profile, &host.data(), path)
}

/// [`current`] with the state already locked.
fn current_in(host: &Host, profile: &Profile, d: &HostData, path: &str) -> Option<Value> {
    match with_patches(profile, d, path, overlay(host, profile, d, path)) {
        Some(doc) => doc.map(|doc| with_fresh_etag(profile, path, doc)),
        None => profile.doc(path),
    }
}

/// A changed document's ETag is one of its content; an unchanged one keeps the captured ETag.
fn with_fresh_etag(profile: &Profile, path: &str, mut doc: Value) -> Value {
    if Some(&doc) == profile.doc(path).as_ref() || doc.get("@odata.etag").is_none() {
        return doc;
    }
    if let Some(o) = doc.as_object_mut() {
        o.remove("@odata.etag");
    }
    let mut h = DefaultHasher::new();
    doc.to_string().hash(&mut h);
    doc["@odata.etag"] = json!(format!("\"{:016x}\"", h.finish()));
    doc
}

fn etag_of(doc: &Value) -> Option<String> {
    doc.get("@odata.etag").and_then(Value::as_str).map(str::to_string)
}

/// Where the entry of an image staged for the member at `uri` is served.
fn staged_uri(uri: &str) -> String {
    format!("{uri}-Staged")
}

/// The last segment of `path` when it is a direct child of `parent`.
fn child_of(path: &str, parent: Option<&str>) -> Option<String> {
    let rest = path.strip_prefix(parent?)?.strip_prefix('/')?;
    (!rest.is_empty() && !rest.contains('/')).then(|| rest.to_string())
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

/// The System document of a profile host as it is now (for answers to PATCH).
pub(crate) fn system_doc(host: &Host, d: &HostData) -> Option<Value> {
    let profile = host.profile.as_ref()?;
    let path = &profile.shape.system;
    with_patches(profile, d, path, overlay(host, profile, d, path))
        .flatten()
        .map(|doc| with_fresh_etag(profile, path, doc))
}
