//! `POST /sim/host-flash`: an in-band flash tool running on the simulated host itself (what a
//! Scout upgrade script calls on a real host, e.g. a NIC vendor's updater). The body is a
//! simulator image; its version is applied or staged on the matching members exactly as a
//! Redfish update task would (the image's `activation=`, else the host's apply time), and counted
//! as an install. Unauthenticated like the rest of `/sim/`: it stands for local hardware access.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::fleet::state::{Host, Staged};
use crate::http::error::RedfishError;
use crate::http::json::ok;
use crate::update::activation::Activation;
use crate::update::image::parse_header;

pub async fn host_flash(State(host): State<Arc<Host>>, body: Bytes) -> Response {
    let first_line = body.split(|b| *b == b'\n').next().unwrap_or_default();
    let Some(header) = std::str::from_utf8(first_line).ok().and_then(parse_header) else {
        return RedfishError::bad_request("GeneralError", "image not recognised").into_response();
    };
    let activation = header.activation.unwrap_or_else(|| Activation::from_apply_time(host.spec.apply_time));
    let mut d = host.data();
    let change = !d.faults.version_never_changes;
    let mut flashed = Vec::new();
    for m in d.members.iter_mut().filter(|m| header.applies_to.is_match(&m.id)) {
        if change {
            if activation == Activation::Immediate {
                m.version = header.version.clone();
                m.staged = None;
            } else {
                m.staged = Some(Staged { version: header.version.clone(), on: activation });
            }
        }
        flashed.push(m.id.clone());
    }
    if flashed.is_empty() {
        return RedfishError::bad_request("GeneralError", "no inventory member matches the image").into_response();
    }
    if change {
        for id in &flashed {
            *d.stats.installs.entry(id.clone()).or_default() += 1;
        }
    }
    tracing::info!(host = %host.spec.id, version = %header.version, members = ?flashed, "in-band flash");
    ok(json!({ "flashed": flashed, "version": header.version, "activation": activation.as_str() }))
}
