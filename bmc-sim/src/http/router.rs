//! The route table of one simulated BMC and its request-wide rules (trailing-slash tolerance,
//! injected faults, auth, body limit, Redfish 404/405 bodies). Wiring only: every handler lives
//! in its own module.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::faults::control_api;
use crate::faults::inject;
use crate::fleet::state::Host;
use crate::http::auth;
use crate::http::error::RedfishError;
use crate::http::odata;
use crate::http::protocol;
use crate::http::sessions;
use crate::power::ac_cycle;
use crate::power::resets;
use crate::resources::chassis;
use crate::resources::inventory as inv;
use crate::resources::service_root;
use crate::resources::system_patch;
use crate::resources::uris;
use crate::tasks::routes as tasks;
use crate::update::image::MAX_IMAGE_BYTES;
use crate::update::push;
use crate::update::service;
use crate::update::simple;

/// Room for multipart framing around the largest image.
const BODY_LIMIT_SLACK: usize = 1 << 20;

/// The per-BMC router.
pub fn router(host: Arc<Host>) -> Router {
    let routes = Router::new()
        .route("/redfish", get(service_root::versions))
        .route("/redfish/v1", get(service_root::service_root))
        .route(odata::ODATA_URI, get(odata::service_document))
        .route(odata::METADATA_URI, get(odata::metadata))
        .route(uris::SYSTEMS, get(inv::systems))
        .route(uris::SYSTEM, get(inv::system).patch(system_patch::patch_system))
        .route(uris::SYSTEM_RESET, post(resets::system_reset))
        .route(uris::MANAGERS, get(inv::managers))
        .route(uris::MANAGER, get(inv::manager))
        .route(uris::MANAGER_RESET, post(resets::manager_reset))
        .route(uris::CHASSIS_COLLECTION, get(chassis::chassis_collection))
        .route(uris::CHASSIS, get(chassis::chassis))
        .route(uris::CHASSIS_RESET, post(ac_cycle::chassis_reset))
        .route(uris::UPDATE_SERVICE, get(service::update_service))
        .route(uris::FIRMWARE_INVENTORY, get(inv::firmware_inventory))
        .route("/redfish/v1/UpdateService/FirmwareInventory/{id}", get(inv::firmware_member))
        .route(uris::MULTIPART_PUSH, post(push::multipart_push))
        .route(uris::HTTP_PUSH, post(push::http_push))
        .route(uris::SIMPLE_UPDATE, post(simple::simple_update))
        .route(tasks::TASK_SERVICE_URI, get(tasks::task_service))
        .route("/redfish/v1/TaskService/Tasks", get(tasks::task_collection))
        .route("/redfish/v1/TaskService/Tasks/{id}", get(tasks::task))
        .route("/redfish/v1/TaskService/Tasks/{id}/Monitor", get(tasks::bmcweb_monitor))
        .route("/redfish/v1/TaskService/TaskMonitors/{id}", get(tasks::spec_monitor))
        .route(uris::SESSION_SERVICE, get(sessions::session_service))
        .route(uris::SESSIONS, get(sessions::list_sessions).post(sessions::login))
        // DSP0266: a POST to a collection's Members property is a POST to the collection.
        .route(uris::SESSIONS_MEMBERS, post(sessions::login))
        .route("/redfish/v1/SessionService/Sessions/{id}", get(sessions::get_session).delete(sessions::delete_session))
        .route("/sim/state", get(control_api::state))
        .route("/sim/host-flash", post(crate::update::host_flash::host_flash))
        .route("/sim/faults", get(control_api::get_faults).put(control_api::put_faults))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    with_layers(routes, host)
}

/// The request-wide rules every BMC shares, generic or profile: body limit, protocol rules,
/// auth, refusal while down, injected faults, the busy count.
pub fn with_layers(routes: Router<Arc<Host>>, host: Arc<Host>) -> Router {
    routes
        .layer(DefaultBodyLimit::max(MAX_IMAGE_BYTES as usize + BODY_LIMIT_SLACK))
        .layer(middleware::from_fn(protocol::rules))
        .layer(middleware::from_fn_with_state(host.clone(), auth::require_auth))
        .layer(middleware::from_fn_with_state(host.clone(), refuse_while_down))
        .layer(middleware::from_fn_with_state(host.clone(), inject::inject))
        .layer(middleware::from_fn_with_state(host.clone(), count_busy))
        .with_state(host)
}

/// `/redfish/v1/` and `/redfish/v1` are the same resource (applied before routing).
pub fn normalize_path<B>(mut req: axum::http::Request<B>) -> axum::http::Request<B> {
    let path = req.uri().path();
    if path.len() > 1 && path.ends_with('/') {
        let trimmed = path.trim_end_matches('/');
        let trimmed = if trimmed.is_empty() { "/" } else { trimmed };
        let pq = match req.uri().query() {
            Some(q) => format!("{trimmed}?{q}"),
            None => trimmed.to_string(),
        };
        let mut parts = req.uri().clone().into_parts();
        if let Ok(pq) = pq.parse() {
            parts.path_and_query = Some(pq);
            if let Ok(uri) = Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    req
}

/// Counts this BMC busy while it serves any request, and the request and its in-flight
/// high-water mark in its stats (outermost layer, so faults and refusals count too). The guard also runs when the client drops the request mid-way.
async fn count_busy(State(host): State<Arc<Host>>, req: Request, next: Next) -> Response {
    struct InProgress<'a>(&'a Host);
    impl Drop for InProgress<'_> {
        fn drop(&mut self) {
            if self.0.requests_in_progress.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.0.fleet.counters.bmc_idle();
            }
        }
    }
    host.fleet.counters.request();
    let before = host.requests_in_progress.fetch_add(1, Ordering::SeqCst);
    if before == 0 {
        host.fleet.counters.bmc_busy();
    }
    {
        let mut d = host.data();
        d.stats.requests += 1;
        d.stats.max_requests_in_flight = d.stats.max_requests_in_flight.max(before + 1);
    }
    let _guard = InProgress(&host);
    next.run(req).await
}

/// A request that slipped in just as a Manager.Reset took the BMC down gets 503.
async fn refuse_while_down(State(host): State<Arc<Host>>, req: Request, next: Next) -> Response {
    let up = host.data().bmc_up;
    if up {
        next.run(req).await
    } else {
        RedfishError::temporarily_unavailable(host.spec.manager_reset_seconds.ceil() as u64).into_response()
    }
}

async fn not_found(uri: Uri) -> Response {
    RedfishError::not_found(uri.path()).into_response()
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    RedfishError::method_not_allowed(method.as_str(), uri.path()).into_response()
}
