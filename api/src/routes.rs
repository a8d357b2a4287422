//! The route table: every path of the API, its method and the access it asks of its caller, in
//! this one place. The router is built from it (each route mounted behind `auth::require` with
//! its own [`Access`]), the OpenAPI document takes each operation's security and `x-hostfw-role`
//! from it, and the role-matrix test walks it with every role.
//!
//! Owns which routes exist and who may call them. It must not implement any of them.

use axum::http::Method;
use axum::middleware;
use axum::routing::{delete, get, post, MethodRouter};
use axum::Router;
use hostfw_model::Role;

use crate::access::Access;
use crate::handlers::{
    abort, brakes, budget, catalog, explorer, machine_remove, machines, openapi_doc, reads, requests, site_ops, tenant,
    tokens, watch, whoami,
};
use crate::state::ApiState;

/// One route.
pub struct Route {
    pub method: Method,
    /// As axum and OpenAPI write it (`/v1/tokens/{id}`).
    pub path: &'static str,
    pub access: Access,
    mount: fn() -> MethodRouter<ApiState>,
}

const fn route(method: Method, path: &'static str, access: Access, mount: fn() -> MethodRouter<ApiState>) -> Route {
    Route { method, path, access, mount }
}

use Access::{Authenticated, Public, RoleOrTenantOfInstance, RoleOrTenantOfMachine};
use Role::{Admin, Operator, Viewer};

/// Every route of the API.
pub static ROUTES: &[Route] = &[
    route(Method::GET, "/v1/openapi.json", Public, || get(openapi_doc::openapi_json)),
    route(Method::GET, "/v1/whoami", Authenticated, || get(whoami::whoami)),
    // Identity (admin).
    route(Method::GET, "/v1/tokens", Access::Role(Admin), || get(tokens::list)),
    route(Method::POST, "/v1/tokens", Access::Role(Admin), || post(tokens::create)),
    route(Method::DELETE, "/v1/tokens/{id}", Access::Role(Admin), || delete(tokens::revoke)),
    // Reads (viewer; a tenant reads the hosts of its own instances).
    route(Method::GET, "/v1/plan", Access::Role(Viewer), || get(reads::plan)),
    route(Method::GET, "/v1/compliance", Access::Role(Viewer), || get(reads::compliance)),
    route(Method::GET, "/v1/firmware", Access::Role(Viewer), || get(reads::firmware)),
    route(Method::GET, "/v1/machines", Access::Role(Viewer), || get(reads::machines)),
    route(Method::GET, "/v1/machines/{id}", Access::Role(Viewer), || get(reads::machine)),
    route(Method::GET, "/v1/managed-hosts/{id}", RoleOrTenantOfMachine(Viewer), || get(reads::managed_host)),
    route(Method::GET, "/v1/reprovision-requests", Access::Role(Viewer), || get(reads::requests)),
    route(Method::GET, "/v1/budgets", Access::Role(Viewer), || get(reads::budgets)),
    route(Method::GET, "/v1/audit", Access::Role(Viewer), || get(reads::audit)),
    route(Method::GET, "/v1/freezes", Access::Role(Viewer), || get(brakes::list)),
    route(Method::GET, "/v1/site-explorer/report", Access::Role(Viewer), || get(explorer::report)),
    route(Method::GET, "/v1/firmware-config", Access::Role(Viewer), || get(catalog::show)),
    route(Method::GET, "/v1/firmware-config/pending", Access::Role(Viewer), || get(catalog::pending)),
    route(Method::GET, "/v1/firmware-config/history", Access::Role(Viewer), || get(catalog::history)),
    route(Method::GET, "/v1/doctor", Access::Role(Viewer), || get(site_ops::doctor)),
    route(Method::GET, "/v1/watch/tally", Access::Role(Viewer), || get(watch::tally)),
    route(Method::GET, "/v1/watch/report", Access::Role(Viewer), || get(watch::report)),
    route(Method::GET, "/v1/notifications", Access::Role(Viewer), || get(reads::notifications)),
    // Brakes (operator).
    route(Method::POST, "/v1/budgets/resume", Access::Role(Operator), || post(budget::resume)),
    route(Method::POST, "/v1/budgets/pause", Access::Role(Operator), || post(brakes::pause)),
    route(Method::POST, "/v1/freezes", Access::Role(Operator), || post(brakes::freeze)),
    route(Method::POST, "/v1/freezes/lift", Access::Role(Operator), || post(brakes::unfreeze)),
    // Hosts, requests and exploration (operator).
    route(Method::POST, "/v1/machines/{id}/labels", Access::Role(Operator), || post(machines::label)),
    route(Method::POST, "/v1/machines/{id}/auto-update", Access::Role(Operator), || post(machines::auto_update)),
    route(Method::POST, "/v1/machines/auto-update", Access::Role(Operator), || post(machines::auto_update_many)),
    route(Method::POST, "/v1/machines/{id}/maintenance", Access::Role(Operator), || post(machines::maintenance)),
    route(Method::POST, "/v1/reprovision-requests", Access::Role(Operator), || post(requests::set)),
    route(Method::POST, "/v1/reprovision-requests/all-drifted", Access::Role(Operator), || post(requests::all_drifted)),
    route(Method::DELETE, "/v1/reprovision-requests/{id}", Access::Role(Operator), || delete(requests::clear)),
    route(Method::POST, "/v1/reprovision-requests/{id}/manual-upgrade-complete", Access::Role(Operator), || {
        post(requests::manual_upgrade_complete)
    }),
    route(Method::POST, "/v1/managed-hosts/{id}/reset", Access::Role(Operator), || post(requests::reset)),
    route(Method::POST, "/v1/managed-hosts/start-updates", Access::Role(Operator), || post(requests::start_updates)),
    route(Method::POST, "/v1/site-explorer/explore", Access::Role(Operator), || post(explorer::explore)),
    route(Method::POST, "/v1/site-explorer/re-explore", Access::Role(Operator), || post(explorer::re_explore)),
    route(Method::POST, "/v1/doctor/fix", Access::Role(Operator), || post(site_ops::doctor_fix)),
    // Machines, catalog and config (admin).
    route(Method::POST, "/v1/machines", Access::Role(Admin), || post(machines::add)),
    route(Method::POST, "/v1/machines/import", Access::Role(Admin), || post(machines::import)),
    route(Method::POST, "/v1/machines/rotate-key", Access::Role(Admin), || post(machines::rotate_key)),
    route(Method::POST, "/v1/firmware-config", Access::Role(Admin), || post(catalog::set)),
    route(Method::POST, "/v1/firmware-config/diff", Access::Role(Admin), || post(catalog::diff)),
    route(Method::POST, "/v1/firmware-config/unset", Access::Role(Admin), || post(catalog::unset)),
    route(Method::POST, "/v1/firmware-config/rollback", Access::Role(Admin), || post(catalog::rollback)),
    route(Method::POST, "/v1/firmware-config/approve", Access::Role(Admin), || post(catalog::approve)),
    route(Method::POST, "/v1/firmware-config/reject", Access::Role(Admin), || post(catalog::reject)),
    route(Method::POST, "/v1/config/reload", Access::Role(Admin), || post(site_ops::config_reload)),
    route(Method::POST, "/v1/aborts", Access::Role(Operator), || post(abort::abort)),
    route(Method::POST, "/v1/machines/{id}/remove", Access::Role(Admin), || post(machine_remove::remove)),
    // The tenant's approval (its own instances), or an operator's on its behalf.
    route(Method::POST, "/v1/instances/{id}/reboot", RoleOrTenantOfInstance(Operator), || post(tenant::reboot)),
];

/// The largest request body the API reads (a catalog document, a fleet file); a larger one is
/// answered 413 with a JSON error.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The router of every route in [`ROUTES`], each behind its access check; anything else is a JSON 404.
pub fn router(state: ApiState) -> Router {
    let mut router = Router::new();
    for r in ROUTES {
        let check = middleware::from_fn_with_state((state.clone(), r.access), crate::auth::require);
        router = router.route(r.path, (r.mount)().route_layer(check));
    }
    router
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::map_response(schema_version))
        .with_state(state)
}

/// The header naming the version of the JSON vocabulary every answer is written in.
pub const SCHEMA_VERSION_HEADER: &str = "hostfw-schema-version";

/// Every answer, refusals included, says which version of docs/cli-json.md it speaks.
async fn schema_version(mut response: axum::response::Response) -> axum::response::Response {
    response
        .headers_mut()
        .insert(SCHEMA_VERSION_HEADER, axum::http::HeaderValue::from(hostfw_starter::json_contract::SCHEMA_VERSION));
    response
}

async fn not_found(method: Method, uri: axum::http::Uri) -> crate::error::ApiError {
    crate::error::ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        format!("no route {method} {}: the API's routes are listed in /v1/openapi.json", uri.path()),
    )
}
