//! The site key: 32 random bytes that encrypt BMC passwords at rest and from which other
//! site-wide secrets (the artifact URL signing key) are derived.
//!
//! Owns reading the key (a file holding the key in base64, or the `HOSTFW_SITE_KEY` environment
//! variable), generating a new key file (mode 0600, never overwriting), the key id (a short
//! fingerprint that is safe to print) and labelled derivations. The key bytes never appear in
//! `Debug`, `Display`, logs or errors: only the key id and the file name do.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// Environment variable naming the key file (overrides `[site] secret_key_file`).
pub const SITE_KEY_FILE_ENV: &str = "HOSTFW_SITE_KEY_FILE";
/// Environment variable holding the key itself, base64 (overrides both of the above).
pub const SITE_KEY_ENV: &str = "HOSTFW_SITE_KEY";

/// Length of the key in bytes.
pub const SITE_KEY_LEN: usize = 32;

/// The site key. Clone it freely; it prints as its key id only.
#[derive(Clone, PartialEq, Eq)]
pub struct SiteKey {
    bytes: [u8; SITE_KEY_LEN],
    id: String,
}

/// Why a site key could not be read or written. Never contains key material.
#[derive(Debug, thiserror::Error)]
pub enum SiteKeyError {
    /// The key file could not be read.
    #[error("cannot read site key file {file}")]
    Read { file: PathBuf, source: std::io::Error },
    /// The key file (or variable) is not base64 of exactly 32 bytes.
    #[error("site key {origin} is not a valid key: {problem} (expected base64 of exactly 32 bytes; create one with `hostfw site-key generate --out FILE`)")]
    Malformed { origin: String, problem: String },
    /// `generate` refuses to replace an existing file.
    #[error("refusing to overwrite existing site key file {file}")]
    Exists { file: PathBuf },
    /// The new key file could not be written.
    #[error("cannot write site key file {file}")]
    Write { file: PathBuf, source: std::io::Error },
    /// The operating system's random source failed.
    #[error("cannot draw random bytes for a new site key: {0}")]
    Random(String),
}

impl SiteKey {
    /// A key from its raw bytes.
    pub fn from_bytes(bytes: [u8; SITE_KEY_LEN]) -> SiteKey {
        let mut h = Sha256::new();
        h.update(b"hostfw site key id v1\0");
        h.update(bytes);
        let id = hex::encode(&h.finalize()[..4]);
        SiteKey { bytes, id }
    }

    /// A fresh random key.
    pub fn generate() -> Result<SiteKey, SiteKeyError> {
        let mut bytes = [0u8; SITE_KEY_LEN];
        getrandom::getrandom(&mut bytes).map_err(|e| SiteKeyError::Random(e.to_string()))?;
        Ok(SiteKey::from_bytes(bytes))
    }

    /// Parses base64 text (surrounding whitespace ignored); `origin` names it in errors.
    pub fn from_base64(text: &str, origin: &str) -> Result<SiteKey, SiteKeyError> {
        let malformed = |problem: String| SiteKeyError::Malformed { origin: origin.to_string(), problem };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| malformed(format!("not base64 ({e})")))?;
        let bytes: [u8; SITE_KEY_LEN] =
            raw.as_slice().try_into().map_err(|_| malformed(format!("decodes to {} bytes", raw.len())))?;
        Ok(SiteKey::from_bytes(bytes))
    }

    /// Reads the key file at `path`. A file readable by group or others is used but logged as a WARN.
    pub fn from_file(path: &Path) -> Result<SiteKey, SiteKeyError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| SiteKeyError::Read { file: path.to_path_buf(), source })?;
        warn_if_shared(path);
        SiteKey::from_base64(&text, &format!("file {}", path.display()))
    }

    /// The key the process should use: `HOSTFW_SITE_KEY` (base64), else the file named by
    /// `HOSTFW_SITE_KEY_FILE`, else `configured` (the site config's `[site] secret_key_file`,
    /// already resolved), else none.
    pub fn from_env_or(configured: Option<&Path>) -> Result<Option<SiteKey>, SiteKeyError> {
        if let Ok(text) = std::env::var(SITE_KEY_ENV) {
            return SiteKey::from_base64(&text, &format!("in ${SITE_KEY_ENV}")).map(Some);
        }
        if let Some(file) = std::env::var_os(SITE_KEY_FILE_ENV).filter(|f| !f.is_empty()) {
            return SiteKey::from_file(Path::new(&file)).map(Some);
        }
        configured.map(SiteKey::from_file).transpose()
    }

    /// Writes this key to a new file at `path` (mode 0600, base64 and a newline); an existing
    /// file is never replaced.
    pub fn write_new_file(&self, path: &Path) -> Result<(), SiteKeyError> {
        let write_err = |source| SiteKeyError::Write { file: path.to_path_buf(), source };
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut file = opts.open(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                SiteKeyError::Exists { file: path.to_path_buf() }
            } else {
                write_err(source)
            }
        })?;
        let text = base64::engine::general_purpose::STANDARD.encode(self.bytes);
        file.write_all(format!("{text}\n").as_bytes()).map_err(write_err)?;
        file.sync_all().map_err(write_err)
    }

    /// The key id: 8 hex digits of a hash of the key, safe to print and store.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A 32-byte subkey for one purpose, `label` separating the domains (HMAC-SHA256 keyed by
    /// the site key over the label).
    pub fn derive(&self, label: &str) -> [u8; 32] {
        use hmac::{Hmac, Mac};
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(label.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The raw bytes, for the cipher.
    pub(crate) fn bytes(&self) -> &[u8; SITE_KEY_LEN] {
        &self.bytes
    }
}

impl fmt::Debug for SiteKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SiteKey({})", self.id)
    }
}

impl fmt::Display for SiteKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "site key {}", self.id)
    }
}

/// Logs a WARN when the key file is readable by group or others.
fn warn_if_shared(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                tracing::warn!(file = %path.display(), mode = format!("{mode:o}"),
                    "site key file is readable by group or others; chmod 600 it");
            }
        }
    }
}
