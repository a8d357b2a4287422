//! `hostfw admin bootstrap`: the site's first admin token, made on the site itself from the site
//! config and database (the one command besides the site's own files that needs no token). It is
//! refused once an admin token lives, so it cannot be used to mint more: those come from `hostfw
//! token create` through the API, audited under their creator.
//!
//! Owns that refusal and where the token goes (a new 0600 file, or stdout once). It must not be
//! reachable through the API.

use std::path::PathBuf;

use anyhow::bail;
use hostfw_model::Role;
use hostfw_store::NewToken;

use crate::context::Context;

/// The audit actor of the bootstrap.
pub const BOOTSTRAP_ACTOR: &str = "admin bootstrap (on the site)";

/// `hostfw admin bootstrap --name NAME [--out FILE]`.
pub async fn bootstrap(ctx: &Context, name: &str, out: Option<&PathBuf>) -> anyhow::Result<()> {
    let admins = ctx.store.token_active_admins().await?;
    if admins > 0 {
        bail!(
            "the site already has {admins} live admin token(s): create further tokens with `hostfw token create` \
             through the API (or revoke the admin tokens first); nothing was created"
        );
    }
    if let Some(file) = out {
        if file.exists() {
            bail!("{} exists; bootstrap never overwrites a file; nothing was created", file.display());
        }
    }
    let new = NewToken { name: name.to_string(), role: Role::Admin, instances: Vec::new(), expires_at_ms: None };
    let (token, secret) = ctx.store.token_create(&new, BOOTSTRAP_ACTOR).await?;
    let api = format!("{}://{}", if ctx.site.api.tls() { "https" } else { "http" }, ctx.site.api.listen);
    match out {
        Some(file) => {
            if let Err(e) = crate::api_client::write_token_file(file, &secret) {
                // The token was stored but could not be handed over: revoke it, leave nothing usable.
                let _ = ctx.store.token_revoke(&token.id, BOOTSTRAP_ACTOR).await;
                return Err(e.context("the admin token was revoked again"));
            }
            crate::outln!(
                "admin token {} ({name}) written to {}; use it: hostfw -a {api} --token-file {} whoami",
                token.id,
                file.display(),
                file.display()
            );
        }
        None => {
            crate::outln!("admin token {} ({name}); this is the only time it is shown:", token.id);
            crate::outln!("{secret}");
        }
    }
    Ok(())
}
