//! The simulator's own JSON control API under `/sim/` (unauthenticated, not Redfish):
//! `GET /sim/state` shows versions, staged versions, power and counters for debugging.
//! Read-only for now; fault injection would live here.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use crate::redfish_json::ok;
use crate::state::Host;

pub async fn state(State(host): State<Arc<Host>>) -> Response {
    let body = host.data().to_state_json(&host.spec.id);
    ok(body)
}
