//! Resets: `ComputerSystem.Reset` (power transitions over `reset_seconds`; when the host comes
//! up, versions staged for a reset activate and the boot override picks the image) and
//! `Manager.Reset` (sessions dropped, versions staged for a reset or a manager reset activate,
//! BMC unreachable for `manager_reset_seconds`). The socket side of a BMC going down is
//! `fleet::server`; the AC power cycle is `ac_cycle`; this file owns what a reset MEANS.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::fleet::clock;
use crate::fleet::state::{Host, HostData, PowerState};
use crate::http::error::RedfishError;
use crate::update::activation::ActivationEvent;
use crate::update::params::parse_object;

/// Time between answering Manager.Reset and going down, so the answer reaches the client.
const MANAGER_RESET_GRACE: Duration = Duration::from_millis(200);
/// Largest reset action body read.
const MAX_ACTION_BODY: usize = 64 << 10;

/// `POST .../ComputerSystem.Reset` `{"ResetType": ...}`.
pub async fn system_reset(State(host): State<Arc<Host>>, req: Request) -> Response {
    let reset_type = match read_reset_type(req, &host.system_reset_types(), true).await {
        Ok(t) => t.unwrap_or_default(),
        Err(e) => return e.into_response(),
    };
    if let Some(refused) = refused(&host) {
        return refused;
    }
    let delay = clock::secs(host.spec.reset_seconds);
    let pending = {
        let mut d = host.data();
        d.stats.system_resets += 1;
        start_power_transition(&mut d, &reset_type, delay.is_zero())
    };
    host.fleet.counters.system_reset();
    tracing::info!(host = %host.spec.id, %reset_type, "system reset");
    if let Some((generation, target)) = pending {
        tokio::spawn(finish_power_transition(host.clone(), generation, target, delay));
    }
    StatusCode::NO_CONTENT.into_response()
}

/// Move to the transition's first state; returns the pending `(generation, final state)`.
pub(crate) fn start_power_transition(d: &mut HostData, reset_type: &str, instant: bool) -> Option<(u64, PowerState)> {
    let off = matches!(d.power, PowerState::Off | PowerState::PoweringOff);
    let reset_type = match reset_type {
        "PushPowerButton" if off => "On",
        "PushPowerButton" => "GracefulShutdown",
        "ForceOn" => "On",
        other => other,
    };
    let (now, target) = match (reset_type, d.power) {
        ("Nmi", _) => return None,
        ("On", PowerState::On) | ("ForceOff" | "GracefulShutdown", PowerState::Off) => return None,
        ("On", _) => (PowerState::PoweringOn, PowerState::On),
        ("ForceOff" | "GracefulShutdown", _) => (PowerState::PoweringOff, PowerState::Off),
        // ForceRestart | GracefulRestart | PowerCycle: down now, up after the delay.
        _ => (PowerState::Off, PowerState::On),
    };
    d.power_generation += 1;
    if instant {
        land(d, target);
        return None;
    }
    d.power = now;
    Some((d.power_generation, target))
}

pub(crate) async fn finish_power_transition(host: Arc<Host>, generation: u64, target: PowerState, delay: Duration) {
    tokio::time::sleep(delay).await;
    let mut d = host.data();
    // A newer reset superseded this one.
    if d.power_generation == generation {
        land(&mut d, target);
    }
}

/// Reach a power state; coming up activates staged firmware and boots.
fn land(d: &mut HostData, target: PowerState) {
    d.power = target;
    if target == PowerState::On {
        d.host_powered_on();
    }
}

/// `POST .../Manager.Reset` (body optional; default GracefulRestart).
pub async fn manager_reset(State(host): State<Arc<Host>>, req: Request) -> Response {
    if let Err(e) = read_reset_type(req, &host.manager_reset_types(), false).await {
        return e.into_response();
    }
    if let Some(refused) = refused(&host) {
        return refused;
    }
    {
        let mut d = host.data();
        if d.manager_reset_pending || !d.bmc_up {
            return RedfishError::temporarily_unavailable(1).into_response();
        }
        d.manager_reset_pending = true;
        d.stats.manager_resets += 1;
    }
    host.fleet.counters.manager_reset();
    tracing::info!(host = %host.spec.id, "manager reset");
    let down_for = clock::secs(host.spec.manager_reset_seconds);
    let h = host.clone();
    tokio::spawn(async move {
        tokio::time::sleep(MANAGER_RESET_GRACE).await;
        // The server loop is gone only when the fleet is shutting down: nothing to do then.
        let _ = h.go_down.send(down_for);
    });
    StatusCode::NO_CONTENT.into_response()
}

/// The injected `refuse_resets` answer, when one is left.
fn refused(host: &Host) -> Option<Response> {
    if !crate::faults::inject::take_reset_refusal(&mut host.data()) {
        return None;
    }
    tracing::info!(host = %host.spec.id, "reset refused (injected fault refuse_resets)");
    let e = RedfishError::bad_request("ActionNotSupported", "Injected fault: the reset action was refused.");
    Some(e.into_response())
}

/// The BMC stops answering: every session dies with it.
pub(crate) fn bmc_going_down(d: &mut HostData) {
    d.bmc_up = false;
    d.manager_reset_pending = false;
    d.sessions.clear();
}

/// The BMC answers again, running whatever firmware was staged.
pub(crate) fn bmc_back_up(d: &mut HostData) {
    d.activate(ActivationEvent::ManagerReset);
    d.bmc_up = true;
}

/// Read `ResetType`; `required` = the body must name one.
pub(crate) async fn read_reset_type(
    req: Request,
    allowed: &[impl AsRef<str> + std::fmt::Debug],
    required: bool,
) -> Result<Option<String>, RedfishError> {
    let bytes = axum::body::to_bytes(req.into_body(), MAX_ACTION_BODY)
        .await
        .map_err(|_| RedfishError::bad_request("GeneralError", "Unreadable or oversized request body."))?;
    let body = parse_object(&bytes)?;
    match body.get("ResetType") {
        None if !required => Ok(None),
        None => Err(RedfishError::bad_request(
            "ActionParameterMissing",
            "The action Reset requires the parameter ResetType to be present.",
        )),
        Some(v) => match v.as_str() {
            Some(t) if allowed.iter().any(|a| a.as_ref() == t) => Ok(Some(t.to_string())),
            _ => Err(RedfishError::bad_request(
                "ActionParameterValueNotInList",
                format!(
                    "The value {v} for the parameter ResetType is not in the list of acceptable values {allowed:?}."
                ),
            )),
        },
    }
}
