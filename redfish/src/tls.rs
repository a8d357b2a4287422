//! TLS trust of the Redfish client: which certificates a BMC may present, and recognising the
//! handshake failure "the BMC's certificate could not be verified" among transport errors.
//!
//! Certificates are verified by default against the built-in Mozilla roots (reqwest's
//! `rustls-tls` = webpki roots, compiled in, so it works offline) plus the PEM CA bundle of
//! `ClientOptions::ca_bundle`; `ClientOptions::accept_invalid_certs` turns verification off.
//! This file must not decide policy (the site config does) nor log anything.

use std::error::Error as StdError;

use reqwest::{Certificate, ClientBuilder};

use crate::client::ClientOptions;
use crate::error::RedfishError;

/// Applies the options' trust settings to a reqwest client builder.
pub(crate) fn configure(
    mut builder: ClientBuilder,
    options: &ClientOptions,
    bmc: &str,
) -> Result<ClientBuilder, RedfishError> {
    if let Some(pem) = &options.ca_bundle {
        for cert in parse_bundle(pem)
            .map_err(|cause| RedfishError::ClientBuild { bmc: bmc.to_string(), cause: format!("CA bundle: {cause}") })?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    Ok(builder.danger_accept_invalid_certs(options.accept_invalid_certs))
}

/// The certificates of a PEM bundle; an error for unreadable PEM or a bundle with none.
fn parse_bundle(pem: &[u8]) -> Result<Vec<Certificate>, String> {
    let certs = Certificate::from_pem_bundle(pem).map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into());
    }
    Ok(certs)
}

/// Why the BMC's certificate was rejected, when that is what `e` is about (unknown issuer,
/// wrong name, expired…); `None` for any other failure.
pub(crate) fn certificate_problem(e: &reqwest::Error) -> Option<String> {
    match find_rustls_error(e) {
        Some(err @ rustls::Error::InvalidCertificate(_)) => Some(err.to_string()),
        _ => None,
    }
}

/// The rustls error somewhere in `e`'s chain. The TLS stack nests it in `io::Error`s, whose
/// `source()` skips the error they wrap, so those are opened with `get_ref()`.
fn find_rustls_error<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a rustls::Error> {
    if let Some(r) = e.downcast_ref::<rustls::Error>() {
        return Some(r);
    }
    if let Some(inner) = e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
        if let Some(r) = find_rustls_error(inner) {
            return Some(r);
        }
    }
    e.source().and_then(find_rustls_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_without_certificates_are_refused() {
        assert!(parse_bundle(b"").is_err());
        assert!(parse_bundle(b"not a certificate").is_err());
        let e =
            parse_bundle(b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n").err().unwrap_or_default();
        assert!(!e.is_empty());
    }
}
