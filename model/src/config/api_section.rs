//! `[api]`: the hostfw API's listener (served by `hostfw-worker` by default, or by the stateless
//! `hostfw-api` process) and its transport security.
//!
//! Owns the table's fields, defaults and the one rule about them that needs no file: a listener
//! that is not on a loopback address must serve https (a certificate and key) unless
//! `allow_plain_http` says otherwise. It must not read the certificate files (the server does, and
//! names the file when one does not load).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[api]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApiSection {
    /// Serve the API from `hostfw-worker` (the one-machine site). Turn off on workers when the API
    /// runs as its own `hostfw-api` processes.
    pub enabled: bool,
    /// `host:port` the API listens on.
    pub listen: String,
    /// PEM certificate chain the API serves https with (resolved against the config file's directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of `tls_cert_file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_key_file: Option<PathBuf>,
    /// Serve plain http on a non-loopback `listen` (behind a TLS-terminating proxy, say). Tokens
    /// then cross the network in the clear between the proxy and hostfw.
    pub allow_plain_http: bool,
    /// PEM CA certificate(s) that sign client certificates (mTLS). With it the API asks each
    /// client for a certificate, verifies one presented against these CAs, and refuses the
    /// handshake of one that does not verify; a client without a certificate still presents a
    /// bearer token. Needs https.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ca_file: Option<PathBuf>,
    /// Client certificates as principals: a verified certificate's subject common name → the id
    /// of the token it stands for (`hostfw token list`). The token's role, instances, expiry and
    /// revocation apply, and the audit names it; a certificate whose name is not here is refused.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub client_principals: BTreeMap<String, String>,
}

impl Default for ApiSection {
    fn default() -> Self {
        ApiSection {
            enabled: true,
            listen: "127.0.0.1:9443".to_string(),
            tls_cert_file: None,
            tls_key_file: None,
            allow_plain_http: false,
            client_ca_file: None,
            client_principals: BTreeMap::new(),
        }
    }
}

impl ApiSection {
    /// Whether the API serves https (both files are set).
    pub fn tls(&self) -> bool {
        self.tls_cert_file.is_some() && self.tls_key_file.is_some()
    }

    /// The transport rule: both TLS files or neither, and plain http only on loopback or when
    /// allowed. `Err` names the key and the problem.
    pub(super) fn check(&self) -> Result<(), (&'static str, String)> {
        match (&self.tls_cert_file, &self.tls_key_file) {
            (Some(_), None) => {
                return Err(("api.tls_key_file", "missing: set both tls_cert_file and tls_key_file, or neither".into()))
            }
            (None, Some(_)) => {
                return Err((
                    "api.tls_cert_file",
                    "missing: set both tls_cert_file and tls_key_file, or neither".into(),
                ))
            }
            _ => {}
        }
        if self.client_ca_file.is_some() && !self.tls() {
            return Err((
                "api.client_ca_file",
                "client certificates need https: set api.tls_cert_file and api.tls_key_file too".into(),
            ));
        }
        if !self.client_principals.is_empty() && self.client_ca_file.is_none() {
            return Err((
                "api.client_principals",
                "names certificates, but no api.client_ca_file says which CA signs them".into(),
            ));
        }
        if let Some((name, _)) = self.client_principals.iter().find(|(n, t)| n.trim().is_empty() || t.trim().is_empty())
        {
            return Err((
                "api.client_principals",
                format!("{name:?}: a certificate name and a token id, neither empty"),
            ));
        }
        if self.tls() || self.allow_plain_http || !self.enabled {
            return Ok(());
        }
        if !is_loopback(&self.listen) {
            return Err((
                "api.listen",
                format!(
                    "`{}` is not a loopback address and the API has no certificate: set api.tls_cert_file and \
                     api.tls_key_file (https), or allow_plain_http = true behind a TLS-terminating proxy",
                    self.listen
                ),
            ));
        }
        Ok(())
    }
}

/// `127.0.0.1:9443`, `[::1]:9443` and `localhost:9443` are loopback; anything else (`0.0.0.0`
/// included) is not.
pub fn is_loopback(listen: &str) -> bool {
    if let Ok(addr) = listen.parse::<SocketAddr>() {
        return addr.ip().is_loopback();
    }
    match listen.rsplit_once(':') {
        Some((host, _)) => host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_refused_off_loopback_unless_allowed() {
        let api = |listen: &str| ApiSection { listen: listen.to_string(), ..ApiSection::default() };
        assert!(api("127.0.0.1:9443").check().is_ok());
        assert!(api("[::1]:9443").check().is_ok());
        assert!(api("localhost:9443").check().is_ok());
        assert_eq!(api("0.0.0.0:9443").check().unwrap_err().0, "api.listen");
        assert_eq!(api("10.0.0.5:9443").check().unwrap_err().0, "api.listen");
        let allowed = ApiSection { allow_plain_http: true, ..api("0.0.0.0:9443") };
        assert!(allowed.check().is_ok());
        let tls = ApiSection {
            tls_cert_file: Some("c.pem".into()),
            tls_key_file: Some("k.pem".into()),
            ..api("0.0.0.0:9443")
        };
        assert!(tls.check().is_ok());
        let half = ApiSection { tls_key_file: None, ..tls.clone() };
        assert_eq!(half.check().unwrap_err().0, "api.tls_key_file");

        // mTLS: a client CA needs https; named certificates need the CA.
        let mtls = ApiSection {
            client_ca_file: Some("ca.pem".into()),
            client_principals: [("provisioning".to_string(), "t1".to_string())].into(),
            ..tls.clone()
        };
        assert!(mtls.check().is_ok());
        let plain = ApiSection { tls_cert_file: None, tls_key_file: None, allow_plain_http: true, ..mtls.clone() };
        assert_eq!(plain.check().unwrap_err().0, "api.client_ca_file");
        let no_ca = ApiSection { client_ca_file: None, ..mtls.clone() };
        assert_eq!(no_ca.check().unwrap_err().0, "api.client_principals");
        let empty = ApiSection { client_principals: [("x".to_string(), " ".to_string())].into(), ..mtls };
        assert_eq!(empty.check().unwrap_err().0, "api.client_principals");
    }
}
