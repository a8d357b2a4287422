//! `BmcLookup`: how an address typed by an operator finds a stored (canonical) BMC address.
//!
//! Owns the lookup rule shared by machines and explored reports. The input is parsed exactly like
//! a `BmcAddress` (same forms, same errors), then matched against canonical stored text:
//! 1. exact candidates, in order: the canonical form of the input; and when the input wrote no
//!    scheme, the same BMC over `http` too (port as written, else 80) — one listener speaks one
//!    scheme, so `10.0.4.17:8000` names the BMC whichever scheme it was registered with;
//! 2. when the input is a bare host (no scheme, port or path), the one stored address on that
//!    host with any scheme and port, if there is exactly one (`re-explore 10.0.4.17` for a BMC
//!    registered as `https://10.0.4.17:8443`).
//!
//! Registration never uses this rule (a bare address there is https, full stop). It must not know
//! any table or SQL: the store runs the queries.

use std::fmt;
use std::str::FromStr;

use crate::bmc_address::{BmcAddress, Parsed, Scheme};
use crate::error::BmcAddressError;

/// A parsed lookup input. `Display` is the canonical form of the input.
#[derive(Debug, Clone)]
pub struct BmcLookup {
    parsed: Parsed,
}

impl BmcLookup {
    /// The canonical form of the input (bare = https, default port).
    pub fn address(&self) -> &BmcAddress {
        &self.parsed.address
    }

    /// Stored addresses that match exactly, most preferred first (step 1 of the module doc).
    pub fn exact_candidates(&self) -> Vec<BmcAddress> {
        let address = &self.parsed.address;
        let mut out = vec![address.clone()];
        if !self.parsed.scheme_written {
            let http = address.with_scheme(Scheme::Http);
            let port = if self.parsed.port_written { address.port() } else { Scheme::Http.default_port() };
            out.push(http.with_port(port));
        }
        out
    }

    /// Prefixes of stored text (`https://host:`, `http://host:`) that match step 2 of the module
    /// doc when exactly one stored address starts with one of them; empty unless the input is a
    /// bare host.
    pub fn host_prefixes(&self) -> Vec<String> {
        let p = &self.parsed;
        if p.scheme_written || p.port_written || !p.address.path_prefix().is_empty() {
            return Vec::new();
        }
        let host = p.address.url_host();
        [Scheme::Https, Scheme::Http].iter().map(|s| format!("{s}://{host}:")).collect()
    }
}

impl FromStr for BmcLookup {
    type Err = BmcAddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BmcAddress::parse_written(s).map(|parsed| BmcLookup { parsed })
    }
}

/// A lookup of exactly this address (no other scheme, no host-only match).
impl From<BmcAddress> for BmcLookup {
    fn from(address: BmcAddress) -> Self {
        BmcLookup { parsed: Parsed { address, scheme_written: true, port_written: true } }
    }
}

impl fmt::Display for BmcLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.parsed.address.fmt(f)
    }
}
