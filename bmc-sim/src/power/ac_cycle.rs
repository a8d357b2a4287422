//! The AC power cycle (power drain): `Chassis.Reset` with `PowerCycle`. The host loses power at
//! once, the BMC stays up (sessions survive), and after `reset_seconds` the host is On again;
//! that power-on activates versions staged for `ac_cycle` (and for `reset`). Counted as
//! `ac_cycles`. The Chassis resources themselves are `chassis`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::fleet::clock;
use crate::fleet::state::Host;
use crate::power::reset_types::CHASSIS_RESET_TYPES;
use crate::power::resets::{finish_power_transition, read_reset_type, start_power_transition};

/// `POST .../Chassis.Reset` `{"ResetType": "PowerCycle"}`.
pub async fn chassis_reset(State(host): State<Arc<Host>>, req: Request) -> Response {
    if let Err(e) = read_reset_type(req, &CHASSIS_RESET_TYPES, true).await {
        return e.into_response();
    }
    cycle(host)
}

/// A profile's AC-cycle action (`Shape::ac_cycle_actions`), its `ResetType` checked against the
/// tree's list. A host that is off stays off (the cycle activates what it staged at the next
/// power-on), as a tray whose host was powered off first does.
pub async fn profile_chassis_action(host: Arc<Host>, allowed: Vec<String>, req: Request) -> Response {
    if let Err(e) = read_reset_type(req, &allowed, !allowed.is_empty()).await {
        return e.into_response();
    }
    if host.data().power == crate::fleet::state::PowerState::Off {
        {
            let mut d = host.data();
            d.stats.ac_cycles += 1;
            d.ac_cycle_pending = true;
        }
        host.fleet.counters.ac_cycle();
        tracing::info!(host = %host.spec.id, "AC power cycle of a powered-off host");
        return StatusCode::NO_CONTENT.into_response();
    }
    cycle(host)
}

/// The host loses power now and is on again after `reset_seconds`.
fn cycle(host: Arc<Host>) -> Response {
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
        tokio::spawn(finish_power_transition(host.clone(), generation, target, delay));
    }
    StatusCode::NO_CONTENT.into_response()
}
