//! [`FleetRoster`]: the part of a fleet file that registers machines (`hostfw machine import`):
//! the fleet's `tls` (https unless the file writes `tls = false`), and per host its id, BMC
//! address, vendor, model, login and `labels`. The file is read and checked by the same parser
//! as the simulator's [`FleetSpec`](crate::FleetSpec) (every key known, every value checked, a
//! `profile` supplying vendor and model), so a file one accepts the other does too, save two
//! rules of their own: serving a host needs at least one inventory member, and registering one
//! needs a port a BMC can be reached at (not 0, which bmc-sim reads as "pick a free port").
//! This is a view for registration: it starts nothing and writes nothing.

use std::net::SocketAddr;
use std::path::Path;

use hostfw_model::Labels;

use crate::error::{host_err, host_location, FleetError};
use crate::fleet::check_hosts;
use crate::parse::{parse, read_file, RawFleet};

/// A fleet file's hosts, as registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetRoster {
    /// Every BMC serves HTTPS: `tls = true`, or no `tls` key at all (registration means https
    /// unless told otherwise, as `machine add` does). Plain http only where the file writes
    /// `tls = false` (bmc-sim's own default is http, so a file meant for it says so).
    pub tls: bool,
    pub hosts: Vec<RosterHost>,
}

/// One host of a fleet file, `[defaults]` merged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterHost {
    pub id: String,
    /// Where the simulated BMC listens.
    pub bmc_address: SocketAddr,
    pub vendor: String,
    pub model: String,
    pub username: String,
    pub password: String,
    /// The host's `labels = { rack = "r12" }` (failure domains), default labels merged under
    /// them; `None` when the file gives none (registering it again keeps the stored labels).
    pub labels: Option<Labels>,
}

impl FleetRoster {
    /// Read a fleet file; errors name the file, and the line or the host and key.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, FleetError> {
        let path = path.as_ref();
        let (text, base) = read_file(path)?;
        Self::from_toml_str_in(&text, base).map_err(|e| e.in_file(path))
    }

    /// Parse fleet TOML text whose `profile` folders are relative to `base`.
    pub fn from_toml_str_in(text: &str, base: &Path) -> Result<Self, FleetError> {
        let raw: RawFleet =
            toml::from_str(text).map_err(|e| FleetError::Syntax { file: None, message: e.to_string() })?;
        let parsed = parse(raw, base)?;
        let specs: Vec<_> = parsed.hosts.iter().map(|h| h.spec.clone()).collect();
        check_hosts(&specs, false)?;
        let mut hosts = Vec::with_capacity(parsed.hosts.len());
        for (i, h) in parsed.hosts.into_iter().enumerate() {
            let spec = h.spec;
            if spec.bmc_address.port() == 0 {
                let message = format!(
                    "host {} cannot be registered at {}: port 0 is bmc-sim's \"pick a free port\", not a port \
                     a BMC can be reached at",
                    spec.id, spec.bmc_address
                );
                return Err(host_err(&host_location(i, Some(&spec.id)), "bmc_address", &message));
            }
            hosts.push(RosterHost {
                labels: h.labels_written.then_some(spec.labels),
                id: spec.id,
                bmc_address: spec.bmc_address,
                vendor: spec.vendor,
                model: spec.model,
                username: spec.username,
                password: spec.password.expose().to_string(),
            });
        }
        Ok(FleetRoster { tls: parsed.tls.unwrap_or(true), hosts })
    }
}
