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
use crate::handlers::{budget, openapi_doc, reads, tenant, tokens, whoami};
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
    // Brakes (operator).
    route(Method::POST, "/v1/budgets/resume", Access::Role(Operator), || post(budget::resume)),
    // The tenant's approval (its own instances), or an operator's on its behalf.
    route(Method::POST, "/v1/instances/{id}/reboot", RoleOrTenantOfInstance(Operator), || post(tenant::reboot)),
];

/// The router of every route in [`ROUTES`], each behind its access check; anything else is a JSON 404.
pub fn router(state: ApiState) -> Router {
    let mut router = Router::new();
    for r in ROUTES {
        let check = middleware::from_fn_with_state((state.clone(), r.access), crate::auth::require);
        router = router.route(r.path, (r.mount)().route_layer(check));
    }
    router.fallback(not_found).with_state(state)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> crate::error::ApiError {
    crate::error::ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        format!("no route {method} {}: the API's routes are listed in /v1/openapi.json", uri.path()),
    )
}
