//! https for the API: the site's certificate chain and key (`[api] tls_cert_file`,
//! `tls_key_file`, PEM) loaded into a rustls acceptor (ring; TLS 1.2 and 1.3), and with
//! `[api] client_ca_file` the verification of client certificates (mTLS; optional for the client,
//! so bearer tokens still work) and the subject common name of a verified one ([`ClientCert`]).
//!
//! Owns reading those files and naming the file and problem when one does not load. It must not
//! touch sockets (that is `server`) nor map a certificate to a principal (that is `auth`).

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::server::ApiStartError;

/// A client certificate the handshake verified against `[api] client_ca_file`: handed to every
/// request of its connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    /// The leaf certificate's subject common name, when it has one.
    pub common_name: Option<String>,
}

impl ClientCert {
    /// The verified leaf certificate (DER) of a connection.
    pub fn of(leaf: &CertificateDer<'_>) -> ClientCert {
        let common_name = x509_parser::parse_x509_certificate(leaf.as_ref()).ok().and_then(|(_, cert)| {
            cert.subject().iter_common_name().next().and_then(|cn| cn.as_str().ok()).map(str::to_string)
        });
        ClientCert { common_name }
    }
}

/// The acceptor for the site's certificate, verifying client certificates against `client_ca`
/// when given (a client may present none).
pub fn acceptor(cert_file: &Path, key_file: &Path, client_ca: Option<&Path>) -> Result<TlsAcceptor, ApiStartError> {
    let bad = |file: &Path, problem: String| ApiStartError::Tls { file: file.display().to_string(), problem };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .map_err(|e| bad(cert_file, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(cert_file, e.to_string()))?;
    if certs.is_empty() {
        return Err(bad(cert_file, "holds no PEM certificate".into()));
    }
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| bad(key_file, format!("no PEM private key: {e}")))?;
    let provider = Arc::new(ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(cert_file, e.to_string()))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca_file) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(ca_file).map_err(|e| bad(ca_file, e.to_string()))? {
                let cert = cert.map_err(|e| bad(ca_file, e.to_string()))?;
                roots.add(cert).map_err(|e| bad(ca_file, format!("not a usable CA certificate: {e}")))?;
            }
            if roots.is_empty() {
                return Err(bad(ca_file, "holds no PEM certificate".into()));
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| bad(ca_file, e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder
        .with_single_cert(certs, key)
        .map_err(|e| bad(key_file, format!("does not fit the certificate: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
