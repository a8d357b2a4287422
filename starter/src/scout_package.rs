//! `hostfw scout-package keygen` and `hostfw scout-package sign`: the operator's Scout package
//! signing key pair, and signing packages with it.
//!
//! Owns the command-line side only; key files, the manifest and signing are
//! `hostfw_activities::host::scout_signing`'s (format documented in docs/scout-signing.md).

use std::path::{Path, PathBuf};

use hostfw_activities::host::scout_signing;

use crate::output;

/// Writes a new key pair into `out`.
pub fn keygen(out: &Path) -> anyhow::Result<()> {
    let (private, public) = scout_signing::keygen(out)?;
    output::emit(&format!(
        "wrote {} (private, mode 0600: keep it off the hosts) and {} (give it to every Scout: --trusted-key)\n",
        private.display(),
        public.display()
    ));
    Ok(())
}

/// Signs the package (or every package) at `path` with the private key in `key`.
pub fn sign(key: &Path, artifacts: &[PathBuf], path: &Path) -> anyhow::Result<()> {
    let key = scout_signing::load_signing_key(key)?;
    let written = scout_signing::sign(&key, path, artifacts)?;
    for sig in &written {
        output::emit(&format!("signed {}\n", sig.display()));
    }
    output::emit(&format!("{} packages signed\n", written.len()));
    Ok(())
}
