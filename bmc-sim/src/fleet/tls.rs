//! HTTPS for a fleet started with `tls = true`: a throw-away CA generated at start ([`SimCa`])
//! and, per BMC, a server certificate for its bind IP (plus `localhost`) signed by that CA,
//! wrapped in a rustls acceptor. Owns key and certificate generation only; it must not touch
//! sockets (that is `fleet::server`) nor ever write the CA's private key anywhere.

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{crypto::ring, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::fleet::error::SimError;

/// The fleet's certificate authority: lives in memory for the life of the process.
pub(crate) struct SimCa {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl SimCa {
    /// A fresh CA (ECDSA P-256, valid for a long time: the process dies long before).
    pub fn generate() -> Result<Self, SimError> {
        let key = KeyPair::generate().map_err(tls_err)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
        // A unique name per CA, so a client trusting another fleet's CA sees an unknown
        // issuer (not a same-named issuer with a bad signature).
        let name = format!("hostfw bmc-sim test CA {}", uuid::Uuid::new_v4().simple());
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let cert = params.self_signed(&key).map_err(tls_err)?;
        Ok(SimCa { cert, key })
    }

    /// The CA certificate, PEM (what a client adds as a trusted root).
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A TLS acceptor presenting a certificate for `ip` and `localhost` (and `127.0.0.1` when
    /// `ip` is unspecified, i.e. the BMC listens on every address), chained to this CA.
    pub fn acceptor_for(&self, ip: IpAddr) -> Result<TlsAcceptor, SimError> {
        let mut names = vec![ip.to_string(), "localhost".to_string()];
        if ip.is_unspecified() {
            names.push("127.0.0.1".into());
        }
        let key = KeyPair::generate().map_err(tls_err)?;
        let mut params = CertificateParams::new(names).map_err(tls_err)?;
        params.distinguished_name.push(DnType::CommonName, format!("bmc-sim {ip}"));
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &self.cert, &self.key).map_err(tls_err)?;
        let chain = vec![cert.der().clone(), CertificateDer::from(self.cert.der().to_vec())];
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(tls_err)?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(tls_err)?;
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

fn tls_err(e: impl std::fmt::Display) -> SimError {
    SimError::Tls { message: e.to_string() }
}
