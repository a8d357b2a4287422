//! The simulator's own JSON control API under `/sim/` (unauthenticated, not Redfish, never
//! touched by injected faults): `GET /sim/state` shows versions, staged versions, power, boot,
//! lockdown, faults and counters for debugging; `GET /sim/faults` shows the fault set in force
//! and `PUT /sim/faults` (a JSON [`Fault`](hostfw_fleet::Fault)) replaces it.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};

use crate::faults::inject::replace_faults;
use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::json::ok;
use crate::update::params::parse_object;
use hostfw_fleet::Fault;

/// Time between answering a PUT that makes the BMC unreachable and going off the network.
const OUTAGE_GRACE: Duration = Duration::from_millis(200);
/// Largest fault body read.
const MAX_FAULT_BODY: usize = 64 << 10;

pub async fn state(State(host): State<Arc<Host>>) -> Response {
    let body = host.data().to_state_json(&host.spec.id);
    ok(body)
}

pub async fn get_faults(State(host): State<Arc<Host>>) -> Response {
    let faults = host.data().faults.clone();
    ok(serde_json::to_value(faults).unwrap_or_default())
}

pub async fn put_faults(State(host): State<Arc<Host>>, req: Request) -> Response {
    let Ok(bytes) = axum::body::to_bytes(req.into_body(), MAX_FAULT_BODY).await else {
        return RedfishError::bad_request("GeneralError", "Unreadable or oversized request body.").into_response();
    };
    // Via a JSON object: serde would also take an array as the struct's fields in order.
    let fault = parse_object(&bytes)
        .and_then(|m| serde_json::from_value::<Fault>(m.into()).map_err(RedfishError::malformed_json));
    let fault = match fault {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    let checked = {
        let d = host.data();
        fault.check(d.members.iter().map(|m| m.id.as_str()))
    };
    if let Err((key, message)) = checked {
        return RedfishError::bad_request("PropertyValueNotInList", format!("fault key `{key}`: {message}"))
            .into_response();
    }
    tracing::info!(host = %host.spec.id, ?fault, "faults replaced (PUT /sim/faults)");
    replace_faults(&host, fault.clone(), OUTAGE_GRACE);
    ok(serde_json::to_value(fault).unwrap_or_default())
}
