//! https for the API: the site's certificate chain and key (`[api] tls_cert_file`,
//! `tls_key_file`, PEM) loaded into a rustls acceptor (ring; TLS 1.2 and 1.3).
//!
//! Owns reading those two files and naming the file and problem when one does not load. It must
//! not touch sockets (that is `server`).

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::server::ApiStartError;

/// The acceptor for the site's certificate.
pub fn acceptor(cert_file: &Path, key_file: &Path) -> Result<TlsAcceptor, ApiStartError> {
    let bad = |file: &Path, problem: String| ApiStartError::Tls { file: file.display().to_string(), problem };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .map_err(|e| bad(cert_file, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(cert_file, e.to_string()))?;
    if certs.is_empty() {
        return Err(bad(cert_file, "holds no PEM certificate".into()));
    }
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| bad(key_file, format!("no PEM private key: {e}")))?;
    let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(cert_file, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(key_file, format!("does not fit the certificate: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
