//! The whole fleet as the simulator serves it: [`FleetSpec`] (the fleet-wide `tls` and the
//! hosts, `[defaults]` merged in), loading it from a file or text, writing it back as TOML, and
//! the fleet-wide rules (hosts present, unique ids, one listener per fixed address). Reading the
//! TOML form is `parse`; one host's keys and checks, `spec`. Starts nothing.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{host_err, host_location, FleetError};
use crate::parse::{parse, read_file, RawFleet};
use crate::spec::HostSpec;

/// A whole simulated fleet. Its TOML form accepts an optional `[defaults]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawFleet")]
pub struct FleetSpec {
    /// Serve every BMC over HTTPS (certificates from a CA generated at start). Default false.
    /// Kept first: TOML wants plain keys before the `[[host]]` tables. Always written out, also
    /// when false: `hostfw machine import` reads a file without the key as https.
    #[serde(default)]
    pub tls: bool,
    /// The hosts, defaults already merged in.
    #[serde(rename = "host")]
    pub hosts: Vec<HostSpec>,
}

impl FleetSpec {
    /// A plain-HTTP fleet of already-complete hosts (call [`FleetSpec::validate`] or let
    /// `start` do it). Set [`FleetSpec::tls`] for HTTPS.
    pub fn new(hosts: Vec<HostSpec>) -> Self {
        FleetSpec { tls: false, hosts }
    }

    /// Read and validate a fleet file; errors name the file, the host and the key.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, FleetError> {
        let path = path.as_ref();
        let (text, base) = read_file(path)?;
        Self::from_toml_str_in(&text, base).map_err(|e| e.in_file(path))
    }

    /// Parse and validate fleet TOML text (`profile` folders relative to the working directory).
    pub fn from_toml_str(s: &str) -> Result<Self, FleetError> {
        Self::from_toml_str_in(s, Path::new("."))
    }

    /// Parse and validate fleet TOML text whose `profile` folders are relative to `base`.
    pub fn from_toml_str_in(s: &str, base: &Path) -> Result<Self, FleetError> {
        let raw: RawFleet = toml::from_str(s).map_err(|e| FleetError::Syntax { file: None, message: e.to_string() })?;
        Self::try_from_raw(raw, base)
    }

    pub(crate) fn try_from_raw(raw: RawFleet, base: &Path) -> Result<Self, FleetError> {
        let parsed = parse(raw, base)?;
        let spec =
            FleetSpec { tls: parsed.tls.unwrap_or(false), hosts: parsed.hosts.into_iter().map(|h| h.spec).collect() };
        spec.validate()?;
        Ok(spec)
    }

    /// The fleet as TOML (every key explicit, no `[defaults]`).
    pub fn to_toml_string(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        toml::to_string(self).unwrap_or_default()
    }

    /// Check every host and the fleet-wide rules (unique ids and fixed addresses).
    pub fn validate(&self) -> Result<(), FleetError> {
        check_hosts(&self.hosts, true)
    }
}

/// The fleet-wide rules and each host's values; `simulated`: also what serving a host needs.
pub(crate) fn check_hosts(hosts: &[HostSpec], simulated: bool) -> Result<(), FleetError> {
    if hosts.is_empty() {
        return Err(host_err("fleet", "host", "no [[host]] entries"));
    }
    let mut ids = BTreeSet::new();
    let mut addrs = BTreeSet::new();
    for (i, h) in hosts.iter().enumerate() {
        let loc = host_location(i, Some(&h.id));
        h.check(simulated).map_err(|(key, msg)| host_err(&loc, &key, &msg))?;
        if !ids.insert(h.id.as_str()) {
            return Err(host_err(&loc, "id", "duplicate host id"));
        }
        if h.bmc_address.port() != 0 && !addrs.insert(h.bmc_address) {
            return Err(host_err(&loc, "bmc_address", &format!("{} is already used by another host", h.bmc_address)));
        }
    }
    Ok(())
}

impl TryFrom<RawFleet> for FleetSpec {
    type Error = FleetError;
    fn try_from(raw: RawFleet) -> Result<Self, FleetError> {
        Self::try_from_raw(raw, Path::new("."))
    }
}
