//! Target `fleet_file`: the fleet file (`hostfw machine import`, bmc-sim's fleet).
//!
//! Owns feeding one text to `hostfw_fleet::FleetRoster::from_toml_str_in` (what `FleetRoster::load` and the
//! API's import run) and checking: no panic; a syntax refusal gives the line; a host refusal
//! names the host (`host[<i>]` or its id) and the key. It must not start simulators or register
//! machines.

use std::path::Path;

use hostfw_fleet::{FleetError, FleetRoster};

use crate::input::assert_names;

pub fn run(data: &[u8]) {
    let Some(text) = crate::input::text(data) else { return };
    let Err(e) = FleetRoster::from_toml_str_in(text, Path::new("/nonexistent/fleet")) else { return };
    let message = e.to_string();
    match &e {
        FleetError::Syntax { .. } => assert_names("fleet file", &message, &["fleet file", "line"]),
        FleetError::Host { location, key, .. } => {
            assert_names("fleet file", &message, &["fleet file"]);
            assert!(!location.trim().is_empty(), "fleet file: a host refusal naming no host: {message}");
            assert!(!key.trim().is_empty(), "fleet file: a host refusal naming no key: {message}");
        }
        FleetError::Read { .. } => unreachable!("no file is read"),
    }
}
