//! The at-rest text of an encrypted value: `hostfw-enc:v1:<key-id>:<base64(nonce || ciphertext)>`.
//!
//! Owns sealing and opening one value with the site key: XChaCha20-Poly1305, a random 24-byte
//! nonce per value, and the row's key (the machine id) as associated data, so a ciphertext copied
//! to another row does not open. The key id in the text lets a wrong key be reported as such
//! rather than as a MAC failure. Text without the `hostfw-enc:` prefix is a legacy plaintext value.
//! It must not log, and its errors never contain the value.

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::site_key::SiteKey;

/// Prefix of every sealed value.
pub(crate) const SEALED_PREFIX: &str = "hostfw-enc:";
const V1: &str = "hostfw-enc:v1:";
const NONCE_LEN: usize = 24;

/// What a stored value turned out to be.
pub(crate) enum Opened {
    /// Decrypted with the site key.
    Sealed(String),
    /// Stored before encryption existed (or without a key).
    Plaintext(String),
}

/// Why a stored value cannot be opened. Never holds the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The value is encrypted but no site key is configured.
    #[error("it is encrypted with site key {stored_key} but no site key is configured (set [site] secret_key_file or HOSTFW_SITE_KEY_FILE)")]
    NoKey { stored_key: String },
    /// The value was encrypted with another key.
    #[error("it is encrypted with site key {stored_key}, the configured site key is {site_key}")]
    WrongKey { stored_key: String, site_key: String },
    /// Same key id, but authentication failed: the value was altered or belongs to another row.
    #[error("it does not decrypt with site key {site_key}: the stored value was altered or copied from another row")]
    Tampered { site_key: String },
    /// Not in the `hostfw-enc:v1` format.
    #[error("it is not a valid hostfw-enc:v1 value: {0}")]
    Malformed(&'static str),
}

/// Seals `plaintext` for the row `row_key`.
pub(crate) fn seal(key: &SiteKey, row_key: &str, plaintext: &str) -> String {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::getrandom(&mut nonce).expect("operating system random source");
    let cipher = XChaCha20Poly1305::new(key.bytes().into());
    let ct = cipher
        .encrypt(XNonce::from_slice(&nonce), Payload { msg: plaintext.as_bytes(), aad: row_key.as_bytes() })
        .expect("XChaCha20-Poly1305 encryption of an in-memory value cannot fail");
    let mut blob = nonce.to_vec();
    blob.extend_from_slice(&ct);
    format!("{V1}{}:{}", key.id(), base64::engine::general_purpose::STANDARD.encode(blob))
}

/// Opens a stored value of the row `row_key`.
pub(crate) fn open(key: Option<&SiteKey>, row_key: &str, stored: &str) -> Result<Opened, SealError> {
    if !stored.starts_with(SEALED_PREFIX) {
        return Ok(Opened::Plaintext(stored.to_string()));
    }
    let rest = stored.strip_prefix(V1).ok_or(SealError::Malformed("unknown version"))?;
    let (stored_key, b64) = rest.split_once(':').ok_or(SealError::Malformed("no key id"))?;
    let key = key.ok_or_else(|| SealError::NoKey { stored_key: stored_key.to_string() })?;
    if stored_key != key.id() {
        return Err(SealError::WrongKey { stored_key: stored_key.to_string(), site_key: key.id().to_string() });
    }
    let blob = base64::engine::general_purpose::STANDARD.decode(b64).map_err(|_| SealError::Malformed("bad base64"))?;
    if blob.len() < NONCE_LEN {
        return Err(SealError::Malformed("too short"));
    }
    let (nonce, ct) = blob.split_at(NONCE_LEN);
    let cipher = XChaCha20Poly1305::new(key.bytes().into());
    let plain = cipher
        .decrypt(XNonce::from_slice(nonce), Payload { msg: ct, aad: row_key.as_bytes() })
        .map_err(|_| SealError::Tampered { site_key: key.id().to_string() })?;
    String::from_utf8(plain).map(Opened::Sealed).map_err(|_| SealError::Malformed("not UTF-8"))
}
