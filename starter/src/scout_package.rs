//! `hostfw scout-package keygen` and `hostfw scout-package sign`: the operator's Scout package
//! signing key pair, and signing a package for what the operator states it is for (the firmware
//! version it installs, an optional expiry).
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

/// What the operator states on the command line a package is for.
pub struct SignRequest<'a> {
    /// `--version`: the firmware version the package installs.
    pub version: &'a str,
    /// `--not-after`: an RFC 3339 time or a date.
    pub not_after: Option<&'a str>,
    /// `--artifact` files.
    pub artifacts: &'a [PathBuf],
}

/// Signs the package at `path` with the private key in `key`, for what `request` states.
pub fn sign(key: &Path, request: &SignRequest<'_>, path: &Path, format: Format) -> anyhow::Result<()> {
    let not_after_ms = request.not_after.map(hostfw_model::parse_not_after).transpose()?;
    if let Some(ms) = not_after_ms.filter(|ms| *ms <= chrono::Utc::now().timestamp_millis()) {
        anyhow::bail!(
            "--not-after {} is already past: Scout would refuse the package at once; nothing was signed",
            hostfw_model::rfc3339_utc(ms)
        );
    }
    let key = scout_signing::load_signing_key(key)?;
    let sign_for = scout_signing::SignFor {
        version: request.version.to_string(),
        not_after_ms,
        artifacts: request.artifacts.to_vec(),
    };
    let written = scout_signing::sign(&key, path, &sign_for)?;
    let manifest = written.with_file_name(scout_signing::MANIFEST_FILE_NAME);
    // `expires_at`: the manifest's `not_after` in the JSON vocabulary (docs/cli-json.md).
    let json = serde_json::json!({
        "action": "scout-package sign",
        "signature": written,
        "manifest": manifest,
        "version": request.version,
        "expires_at_ms": not_after_ms,
    });
    let until = not_after_ms.map(|ms| format!(", until {}", hostfw_model::rfc3339_utc(ms))).unwrap_or_default();
    let text = format!("signed {} for firmware version {}{until}", written.display(), request.version);
    output::result(format, &json, text)
}
