//! The AC power cycle (power drain): `Chassis.Reset` with `PowerCycle`. The host loses power at
//! once, the BMC stays up (sessions survive), and after `reset_seconds` the host is On again;
//! that power-on activates versions staged for `ac_cycle` (and for `reset`). Counted as
//! `ac_cycles`. The Chassis resources themselves are `chassis`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::clock;
use crate::resets::{finish_power_transition, read_reset_type, start_power_transition};
use crate::state::Host;

/// `ResetType@Redfish.AllowableValues` of the Chassis.
pub const CHASSIS_RESET_TYPES: [&str; 1] = ["PowerCycle"];

/// `POST .../Chassis.Reset` `{"ResetType": "PowerCycle"}`.
pub async fn chassis_reset(State(host): State<Arc<Host>>, req: Request) -> Response {
    if let Err(e) = read_reset_type(req, &CHASSIS_RESET_TYPES, true).await {
        return e.into_response();
    }
    let delay = clock::secs(host.spec.reset_seconds);
    let pending = {
        let mut d = host.data();
        d.stats.ac_cycles += 1;
        d.ac_cycle_pending = true;
        start_power_transition(&mut d, "PowerCycle", delay.is_zero())
    };
    host.fleet.counters.ac_cycle();
    tracing::info!(host = %host.spec.id, "AC power cycle");
    if let Some((generation, target)) = pending {
        tokio::spawn(finish_power_transition(
            host.clone(),
            generation,
            target,
            delay,
        ));
    }
    StatusCode::NO_CONTENT.into_response()
}
