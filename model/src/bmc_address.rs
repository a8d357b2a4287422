//! `BmcAddress`: where one BMC is, in one canonical form.
//!
//! Owns the single parser of BMC addresses and its rules. Accepted: `ip`, `ip:port`, `host:port`,
//! `[v6]` / `[v6]:port`, `http://…`, `https://…`, an optional path prefix (`/bmc/h1`, for several
//! BMCs behind one listener) and trailing slashes. A written scheme is case-insensitive; **no
//! scheme means `https`** (plain HTTP carries the Basic-auth password in clear, so it is used only
//! when written); no port means the scheme's port (443 or 80). Refused, with a `BmcAddressError`
//! naming the input and why: empty input or host, a scheme other than http/https, user-info
//! (`user:pw@`, shown redacted), a query or fragment, a port that is 0 or not a number.
//!
//! The canonical text — `Display`, serde, and what the site database stores and compares — is
//! `scheme://host:port[/prefix]`: lowercase scheme and host, explicit port, no trailing slash
//! (`https://10.0.4.17:443`, `http://127.0.0.1:8000`, `https://[fe80::1]:443`). Two inputs that
//! reach the same BMC parse to equal values. It must not do I/O (a host name is compared as
//! written, lowercased, never resolved) nor know how stored addresses are looked up (`bmc_lookup`).

use crate::names::text_schema;
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{BmcAddressError, BmcAddressProblem};

/// How a BMC is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scheme {
    /// Plain HTTP: only when written (`http://`).
    Http,
    /// HTTP over TLS: the default.
    Https,
}

impl Scheme {
    /// `"http"` or `"https"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The port used when the address does not name one: 80 or 443.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed, normalised BMC address. Build one with `str::parse` (or serde, which parses the same
/// way); `Display` gives the canonical text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BmcAddress {
    scheme: Scheme,
    /// Lowercase name, dotted IPv4, or IPv6 in its compressed form without brackets.
    host: String,
    port: u16,
    /// `""` or `/seg[/seg…]` without a trailing slash; case kept (paths are case-sensitive).
    path: String,
}

/// A parsed address and which parts the input wrote (the rest are defaults).
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub address: BmcAddress,
    pub scheme_written: bool,
    pub port_written: bool,
}

impl BmcAddress {
    /// The address of a listener: `scheme://ip:port`. Port 0 is refused.
    pub fn from_socket_addr(scheme: Scheme, addr: SocketAddr) -> Result<BmcAddress, BmcAddressError> {
        if addr.port() == 0 {
            return Err(BmcAddressError { input: addr.to_string(), problem: BmcAddressProblem::PortZero });
        }
        Ok(BmcAddress { scheme, host: addr.ip().to_string(), port: addr.port(), path: String::new() })
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host without brackets (`10.0.4.17`, `bmc-17.example`, `fe80::1`): the scripts' `BMC_IP`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Always explicit (the scheme's default when the input named none).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port`, with brackets around an IPv6 host (`[fe80::1]:443`).
    pub fn authority(&self) -> String {
        format!("{}:{}", self.url_host(), self.port)
    }

    /// The host as written in a URL: IPv6 in brackets.
    pub(crate) fn url_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }

    /// The URL origin, `scheme://host:port` (no path, no trailing slash).
    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority())
    }

    /// The path prefix under which the BMC's Redfish service lives: `""` or `/seg[/seg…]`.
    pub fn path_prefix(&self) -> &str {
        &self.path
    }

    /// The same host, port and path reached over `scheme`.
    pub fn with_scheme(&self, scheme: Scheme) -> BmcAddress {
        BmcAddress { scheme, ..self.clone() }
    }

    /// The same address on another (non-zero) port.
    pub(crate) fn with_port(&self, port: u16) -> BmcAddress {
        debug_assert_ne!(port, 0);
        BmcAddress { port, ..self.clone() }
    }

    /// Parses `input`, remembering which parts were written.
    pub(crate) fn parse_written(input: &str) -> Result<Parsed, BmcAddressError> {
        let text = input.trim();
        let fail = |problem: BmcAddressProblem| {
            let shown = if problem == BmcAddressProblem::UserInfo { redact_user_info(text) } else { text.to_string() };
            BmcAddressError { input: shown, problem }
        };
        if text.is_empty() {
            return Err(fail(BmcAddressProblem::Empty));
        }
        // '@' anywhere: refuse before anything else is echoed (the part before it may be a password).
        if text.contains('@') {
            return Err(fail(BmcAddressProblem::UserInfo));
        }
        if text.contains('?') {
            return Err(fail(BmcAddressProblem::Query));
        }
        if text.contains('#') {
            return Err(fail(BmcAddressProblem::Fragment));
        }
        let (scheme, rest) = match split_scheme(text) {
            Some((written, rest)) => match written.to_ascii_lowercase().as_str() {
                "http" => (Some(Scheme::Http), rest),
                "https" => (Some(Scheme::Https), rest),
                _ => return Err(fail(BmcAddressProblem::UnknownScheme { scheme: written.to_string() })),
            },
            None => (None, text),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let (host, port) = split_host_port(authority).map_err(fail)?;
        let port = match port {
            None => None,
            Some(p) => Some(parse_port(p).map_err(fail)?),
        };
        let scheme_written = scheme.is_some();
        let scheme = scheme.unwrap_or(Scheme::Https);
        let address = BmcAddress {
            scheme,
            host,
            port: port.unwrap_or(scheme.default_port()),
            path: normalise_path(path).map_err(fail)?,
        };
        Ok(Parsed { address, scheme_written, port_written: port.is_some() })
    }
}

/// `("http", "rest")` for `http://rest`; `None` when the text has no `scheme://`.
fn split_scheme(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once("://")?;
    let looks_like_scheme =
        scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) && !scheme.contains('/');
    looks_like_scheme.then_some((scheme, rest))
}

/// Host (canonical text) and the port text, if any.
fn split_host_port(authority: &str) -> Result<(String, Option<&str>), BmcAddressProblem> {
    if authority.is_empty() {
        return Err(BmcAddressProblem::EmptyHost);
    }
    if let Some(inner) = authority.strip_prefix('[') {
        let Some((v6, after)) = inner.split_once(']') else {
            return Err(invalid_host(authority, "the '[' of an IPv6 address is not closed"));
        };
        if v6.is_empty() {
            return Err(BmcAddressProblem::EmptyHost);
        }
        let ip: Ipv6Addr = v6.parse().map_err(|_| invalid_host(v6, "not a valid IPv6 address"))?;
        return match after {
            "" => Ok((ip.to_string(), None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((ip.to_string(), Some(port))),
                None => Err(invalid_host(authority, "expected ':port' after the ']'")),
            },
        };
    }
    if authority.matches(':').count() > 1 {
        return match authority.parse::<Ipv6Addr>() {
            Ok(ip) => Ok((ip.to_string(), None)),
            Err(_) => Err(invalid_host(authority, "an IPv6 address with a port is written in brackets: [addr]:port")),
        };
    }
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    Ok((normalise_host(host)?, port))
}

fn invalid_host(host: &str, reason: &str) -> BmcAddressProblem {
    BmcAddressProblem::InvalidHost { host: host.to_string(), reason: reason.to_string() }
}

/// A dotted IPv4 address or a DNS name, lowercased.
fn normalise_host(host: &str) -> Result<String, BmcAddressProblem> {
    if host.is_empty() {
        return Err(BmcAddressProblem::EmptyHost);
    }
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(ip.to_string());
    }
    if host.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(invalid_host(host, "not a valid IPv4 address"));
    }
    if !host.is_ascii() {
        return Err(invalid_host(host, "write an internationalised name in its ASCII (xn--) form"));
    }
    if host.len() > 253 {
        return Err(invalid_host(host, "a host name is at most 253 characters"));
    }
    for label in host.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(invalid_host(host, "every dot-separated label has 1 to 63 characters"));
        }
        if let Some(c) = label.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
            return Err(invalid_host(host, &format!("character {c:?} is not allowed in a host name")));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(invalid_host(host, "a label does not start or end with '-'"));
        }
    }
    Ok(host.to_ascii_lowercase())
}

fn parse_port(text: &str) -> Result<u16, BmcAddressProblem> {
    let not_a_number = || BmcAddressProblem::PortNotANumber { port: text.to_string() };
    if text.is_empty() || !text.chars().all(|c| c.is_ascii_digit()) {
        return Err(not_a_number());
    }
    match text.parse::<u16>() {
        Ok(0) => Err(BmcAddressProblem::PortZero),
        Ok(port) => Ok(port),
        Err(_) => Err(not_a_number()),
    }
}

/// `""` or the path without trailing slashes; characters outside a URL path are refused.
fn normalise_path(path: &str) -> Result<String, BmcAddressProblem> {
    let trimmed = path.trim_end_matches('/');
    let bad = |reason: String| BmcAddressProblem::InvalidPath { path: path.to_string(), reason };
    let bytes = trimmed.as_bytes();
    for (i, c) in trimmed.char_indices() {
        if c == '%' {
            let hex = bytes.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            if hex.is_none() {
                return Err(bad("'%' is not followed by two hex digits".into()));
            }
        } else if !(c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:/".contains(c)) {
            return Err(bad(format!("character {c:?} is not allowed in a URL path")));
        }
    }
    Ok(trimmed.to_string())
}

/// `scheme://***@rest` (or `***@rest`): the text with everything before the last '@' of the
/// authority hidden.
fn redact_user_info(text: &str) -> String {
    let (prefix, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), text),
    };
    match rest.rsplit_once('@') {
        Some((_, after)) => format!("{prefix}***@{after}"),
        None => text.to_string(),
    }
}

impl FromStr for BmcAddress {
    type Err = BmcAddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BmcAddress::parse_written(s).map(|p| p.address)
    }
}

impl fmt::Display for BmcAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.origin(), self.path)
    }
}

impl Serialize for BmcAddress {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

// A JSON string: the canonical text (`Display`).
text_schema!(BmcAddress, "A BMC address, canonical: `[https://]host[:port]`.");

impl<'de> Deserialize<'de> for BmcAddress {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
