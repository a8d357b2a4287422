//! `hostfw site-key generate` and `hostfw machine rotate-key`: creating the site key file and
//! re-encrypting the stored BMC passwords under a new one.
//!
//! Owns the operator side of the site key only; the key format and the encryption live in
//! `hostfw_store` (`SiteKey`, `credentials_rekey`). Prints key ids, never keys.

use std::path::Path;

use anyhow::Context as _;
use hostfw_store::SiteKey;

use crate::cli::Format;
use crate::context::Context;
use crate::output;

/// Writes a new random key to `out` (mode 0600; an existing file is refused).
pub fn generate(out: &Path, format: Format) -> anyhow::Result<()> {
    let key = SiteKey::generate()?;
    key.write_new_file(out)?;
    let json = serde_json::json!({ "action": "site-key generate", "key_id": key.id().to_string(), "file": out });
    let text = format!(
        "wrote site key {} to {} (mode 0600); set `secret_key_file = \"{}\"` in [site]",
        key.id(),
        out.display(),
        out.display()
    );
    output::result(format, &json, text)
}

/// Re-encrypts every credential with the key in `new_key_file`, in one audited transaction.
pub async fn rotate(ctx: &Context, new_key_file: &Path) -> anyhow::Result<()> {
    let new_key = SiteKey::from_file(new_key_file)?;
    rotate_to(ctx, new_key, new_key_file).await
}

/// `rotate` to a key already read (`new_key_file` names the file it came from; the API takes the
/// key's base64 text in its request body and never reads a path).
pub async fn rotate_to(ctx: &Context, new_key: SiteKey, new_key_file: &Path) -> anyhow::Result<()> {
    let from = ctx.store.site_key().map_or("none (plaintext)".to_string(), |k| k.id().to_string());
    let done = ctx
        .store
        .credentials_rekey(&new_key, &ctx.actor)
        .await
        .with_context(|| format!("re-encrypting the BMC passwords with {}", new_key_file.display()))?;
    let json = serde_json::json!({
        "action": "machine rotate-key", "rows": done.rows, "were_plaintext": done.were_plaintext,
        "from_key_id": from, "to_key_id": new_key.id().to_string(),
    });
    let text = format!(
        "re-encrypted {} BMC passwords ({} were plaintext) from site key {from} to {}; \
         now set `[site] secret_key_file` to {} (or HOSTFW_SITE_KEY_FILE) and restart the workers",
        done.rows,
        done.were_plaintext,
        new_key.id(),
        new_key_file.display()
    );
    output::result(ctx.format, &json, text)
}
