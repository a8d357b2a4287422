//! Target `api_bodies`: the JSON request bodies of the hostfw API.
//!
//! Owns feeding one body to the API's own extractor (`api::error::ApiJson<T>`) for every request
//! type its handlers take, behind the API's body limit (`api::routes::MAX_BODY_BYTES` through
//! axum's `DefaultBodyLimit`, as `routes::router` layers it), and checking: no panic; a refused
//! body is answered with the API's JSON error whose text says where (`line`/`column`, or the
//! field); a body over the limit is refused with 413 without being decoded. It must not build the
//! full API (that needs a store and Temporal; `api/tests` covers the routes end to end).
//!
//! Input: byte 0 picks the request type (modulo their number; the value 255 sends the body
//! repeated past the limit instead), the rest is the body.

use std::cell::RefCell;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::post;
use axum::Router;
use hostfw_api::error::ApiJson;
use hostfw_api::handlers::{
    abort, brakes, budget, catalog, explorer, machine_remove, machines, requests, site_ops, tenant, tokens,
};
use hostfw_api::routes::MAX_BODY_BYTES;
use serde::de::DeserializeOwned;
use tower::ServiceExt;

use crate::input::assert_names;

/// A route that only extracts `T` (the handler's first step) and answers 200.
fn accept<T: DeserializeOwned + Send + 'static>(router: Router, name: &str) -> Router {
    router.route(&format!("/{name}"), post(|ApiJson(_): ApiJson<T>| async { StatusCode::OK }))
}

/// Every request type the API's handlers take, by name.
pub const REQUESTS: &[&str] = &[
    "abort",
    "freeze",
    "unfreeze",
    "pause",
    "budget_target",
    "catalog_change",
    "catalog_set",
    "catalog_diff",
    "catalog_rollback",
    "catalog_approve",
    "catalog_reject",
    "explore",
    "re_explore",
    "machine_remove",
    "machine_add",
    "machine_import",
    "rotate_key",
    "label",
    "auto_update",
    "auto_update_many",
    "maintenance",
    "all_drifted",
    "reprovision_set",
    "start_updates",
    "config_reload",
    "reboot",
    "create_token",
];

fn router() -> Router {
    let r = Router::new();
    let r = accept::<abort::AbortRequest>(r, "abort");
    let r = accept::<brakes::FreezeRequest>(r, "freeze");
    let r = accept::<brakes::UnfreezeRequest>(r, "unfreeze");
    let r = accept::<brakes::PauseRequest>(r, "pause");
    let r = accept::<budget::TargetRequest>(r, "budget_target");
    let r = accept::<catalog::ChangeRequest>(r, "catalog_change");
    let r = accept::<catalog::SetRequest>(r, "catalog_set");
    let r = accept::<catalog::DiffRequest>(r, "catalog_diff");
    let r = accept::<catalog::RollbackRequest>(r, "catalog_rollback");
    let r = accept::<catalog::ApproveRequest>(r, "catalog_approve");
    let r = accept::<catalog::RejectRequest>(r, "catalog_reject");
    let r = accept::<explorer::ExploreRequest>(r, "explore");
    let r = accept::<explorer::ReExploreRequest>(r, "re_explore");
    let r = accept::<machine_remove::RemoveRequest>(r, "machine_remove");
    let r = accept::<machines::AddMachineRequest>(r, "machine_add");
    let r = accept::<machines::ImportRequest>(r, "machine_import");
    let r = accept::<machines::RotateKeyRequest>(r, "rotate_key");
    let r = accept::<machines::LabelRequest>(r, "label");
    let r = accept::<machines::AutoUpdateRequest>(r, "auto_update");
    let r = accept::<machines::AutoUpdateManyRequest>(r, "auto_update_many");
    let r = accept::<machines::MaintenanceRequest>(r, "maintenance");
    let r = accept::<requests::AllDriftedRequest>(r, "all_drifted");
    let r = accept::<requests::ReprovisionSetRequest>(r, "reprovision_set");
    let r = accept::<requests::StartUpdatesRequest>(r, "start_updates");
    let r = accept::<site_ops::ReloadRequest>(r, "config_reload");
    let r = accept::<tenant::RebootRequest>(r, "reboot");
    let r = accept::<tokens::CreateToken>(r, "create_token");
    r.layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
}

thread_local! {
    static SERVICE: RefCell<Option<(tokio::runtime::Runtime, Router)>> = const { RefCell::new(None) };
}

/// Posts `body` to the route of `name`; the status and the answer's body.
fn post_body(name: &str, body: Vec<u8>) -> (StatusCode, Vec<u8>) {
    SERVICE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (runtime, router) = cell.get_or_insert_with(|| {
            let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a tokio runtime");
            (runtime, router())
        });
        let request = Request::post(format!("/{name}"))
            .header("content-type", "application/json")
            .body(Body::from(body))
            .expect("a request");
        runtime.block_on(async {
            let response = router.clone().oneshot(request).await.expect("the router answers");
            let status = response.status();
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("the answer's body");
            (status, bytes.to_vec())
        })
    })
}

pub fn run(data: &[u8]) {
    let (which, body) = crate::input::selector(data);
    if which == 255 {
        // Past the limit: the body repeated to one byte over `MAX_BODY_BYTES`.
        let seed = if body.is_empty() { &b" "[..] } else { body };
        let big: Vec<u8> = seed.iter().copied().cycle().take(MAX_BODY_BYTES + 1).collect();
        let (status, _) = post_body("machine_import", big);
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "api: a body over MAX_BODY_BYTES was not refused with 413");
        return;
    }
    let name = REQUESTS[usize::from(which) % REQUESTS.len()];
    let (status, answer) = post_body(name, body.to_vec());
    if status == StatusCode::OK {
        return;
    }
    let error: serde_json::Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("api {name}: a refusal ({status}) whose body is not the JSON error: {e}"));
    let message = error.get("error").and_then(|m| m.as_str()).unwrap_or_default();
    assert_names(&format!("api {name} ({status})"), message, &[]);
    // serde_json names the line and column of every syntax or type error; a missing field is
    // named by its name (serde says "missing field `x`").
    let located = message.contains("line ") || message.contains("missing field");
    assert!(located, "api {name} ({status}): a refusal that does not say where: {message}");
}
