//! `hostfw scout-package keygen` and `hostfw scout-package sign`: the operator's Scout package
//! signing key pair, and signing packages with it.
//!
//! Owns the command-line side only; key files, the manifest and signing are
//! `hostfw_activities::host::scout_signing`'s (format documented in docs/scout-signing.md).

use std::path::{Path, PathBuf};

use hostfw_activities::host::scout_signing;

use crate::cli::Format;
use crate::output;

/// Writes a new key pair into `out`.
pub fn keygen(out: &Path, format: Format) -> anyhow::Result<()> {
    let (private, public) = scout_signing::keygen(out)?;
    let json = serde_json::json!({ "action": "scout-package keygen", "private_key": private, "public_key": public });
    let text = format!(
        "wrote {} (private, mode 0600: keep it off the hosts) and {} (give it to every Scout: --trusted-key)",
        private.display(),
        public.display()
    );
    output::result(format, &json, text)
}

/// Signs the package (or every package) at `path` with the private key in `key`.
pub fn sign(key: &Path, artifacts: &[PathBuf], path: &Path, format: Format) -> anyhow::Result<()> {
    let key = scout_signing::load_signing_key(key)?;
    let written = scout_signing::sign(&key, path, artifacts)?;
    let json = serde_json::json!({ "action": "scout-package sign", "signatures": written });
    let mut text: String = written.iter().map(|sig| format!("signed {}\n", sig.display())).collect();
    text.push_str(&format!("{} packages signed", written.len()));
    output::result(format, &json, text)
}
