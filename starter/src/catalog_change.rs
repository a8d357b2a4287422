//! A change of the runtime catalog layer from the CLI (`firmware-config set`, `rollback`,
//! `unset`, and `diff`, which only shows), made safely: the preview (`catalog_preview`: every
//! default that moves, with DOWNGRADE and REMOVED rows, the artifacts checked, the hosts the next
//! pass would start) is printed, a downgrade without `--allow-downgrade` is refused, the change is
//! confirmed, and only then stored and audited (`catalog_commit`) and announced to the Machine
//! Update Manager; under the two-person rule (`require_second_admin`) it is stored as a pending
//! change instead, and `approve` (another actor) previews it again and stores it.
//!
//! Owns that sequence on the terminal. It must not compute the preview, decide the downgrade
//! rule or write the store itself (`catalog_preview`, `catalog_commit`).

use crate::catalog_change_table::{print_preview, print_rows};
use crate::catalog_preview::{self, CatalogChangePreview, CatalogChangeRequest};
use crate::cli::Format;
use crate::context::Context;
use crate::{catalog_approval, catalog_commit};
use crate::{confirm, output};

/// Preview, check, confirm and store a change of the runtime layer.
pub async fn apply(ctx: &Context, request: CatalogChangeRequest, yes: bool) -> anyhow::Result<()> {
    let mut preview = catalog_preview::preview(&ctx.store, &ctx.site, &request, &ctx.actor).await?;
    if !preview.changed {
        return unchanged(ctx, &preview).await;
    }
    if ctx.format == Format::Table {
        print_preview(&preview);
    }
    if request.dry_run {
        match ctx.format {
            Format::Json => crate::outln!("{}", crate::json_contract::to_json(&preview)?),
            Format::Table if preview.downgrade_refused() => {
                crate::outln!("dry run: nothing was stored (without --allow-downgrade this change is refused)")
            }
            Format::Table => crate::outln!("dry run: nothing was stored"),
        }
        return Ok(());
    }
    catalog_commit::check_downgrades(&preview)?;
    let second_admin = ctx.site.firmware_global.require_second_admin;
    let question = if second_admin {
        "propose this change for a second admin's approval (require_second_admin)?".to_string()
    } else if preview.removes_layer {
        format!("remove the runtime layer (stored as firmware config version {})?", preview.version)
    } else if preview.downgrades.is_empty() {
        format!("store this catalog as firmware config version {}?", preview.version)
    } else {
        format!(
            "store this catalog, which downgrades {} default(s), as firmware config version {}?",
            preview.downgrades.len(),
            preview.version
        )
    };
    confirm::confirm(&question, yes)?;
    if second_admin {
        let pending = catalog_commit::propose(&ctx.store, &request, &preview, &ctx.actor).await?;
        preview.pending_change = Some(pending.id);
        match ctx.format {
            Format::Json => crate::outln!("{}", crate::json_contract::to_json(&preview)?),
            Format::Table => crate::outln!(
                "stored as pending change {id}, not in effect: another admin approves it with \
                 `hostfw firmware-config approve --revision {id}` (or rejects it with `reject --revision {id}`)",
                id = pending.id
            ),
        }
        return Ok(());
    }
    let stored = catalog_commit::commit(&ctx.store, &request, &preview, &ctx.actor).await?;
    crate::wake::wake(ctx, "the runtime catalog changed").await;
    preview.version = stored.version;
    preview.stored = true;
    match ctx.format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(&preview)?),
        Format::Table if stored.removes_layer => crate::outln!(
            "firmware config version {} stored: the runtime layer is removed (static config and firmware directory only)",
            stored.version
        ),
        Format::Table => crate::outln!(
            "firmware config version {} stored ({} host model tables, sha256 {})",
            stored.version,
            preview.host_models,
            preview.sha256
        ),
    }
    Ok(())
}

/// `firmware-config approve --revision N`: preview pending change N against the catalog in
/// effect, confirm, store it as the next version (refused for its proposer).
pub async fn approve(ctx: &Context, id: i64, yes: bool) -> anyhow::Result<()> {
    let (pending, request, mut preview) =
        catalog_approval::approval_preview(&ctx.store, &ctx.site, id, &ctx.actor).await?;
    if ctx.format == Format::Table {
        crate::outln!(
            "pending change {id}: {} proposed {} by {}",
            pending.action,
            output::time(pending.at_ms),
            pending.actor
        );
        print_preview(&preview);
    }
    let question = format!("approve pending change {id} and store it as firmware config version {}?", preview.version);
    confirm::confirm(&question, yes)?;
    let stored = catalog_approval::approve(&ctx.store, &pending, &request, &preview, &ctx.actor).await?;
    crate::wake::wake(ctx, "the runtime catalog changed").await;
    preview.version = stored.version;
    preview.stored = true;
    match ctx.format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(&preview)?),
        Format::Table => crate::outln!(
            "pending change {id} approved: firmware config version {} stored (proposed by {}, approved by {})",
            stored.version,
            pending.actor,
            ctx.actor
        ),
    }
    Ok(())
}

/// `firmware-config diff`: the rows a document would change, without storing or asking.
pub async fn diff(ctx: &Context, request: CatalogChangeRequest) -> anyhow::Result<()> {
    let preview = catalog_preview::preview(&ctx.store, &ctx.site, &request, &ctx.actor).await?;
    match ctx.format {
        Format::Json => crate::outln!("{}", crate::json_contract::to_json(&preview)?),
        Format::Table if !preview.changed => {
            crate::outln!("no change: the document is identical to firmware config version {}", preview.version)
        }
        Format::Table => print_rows(&preview),
    }
    Ok(())
}

async fn unchanged(ctx: &Context, preview: &CatalogChangePreview) -> anyhow::Result<()> {
    if ctx.format == Format::Json {
        crate::outln!("{}", crate::json_contract::to_json(preview)?);
        return Ok(());
    }
    match ctx.store.firmware_config_get(preview.version).await? {
        Some(v) if preview.removes_layer => crate::outln!(
            "firmware config unchanged: the runtime layer is already removed (version {}, stored {} by {}); nothing stored",
            v.version,
            output::time(v.at_ms),
            v.actor
        ),
        Some(v) => crate::outln!(
            "firmware config unchanged: identical to version {} (stored {} by {}); nothing stored",
            v.version,
            output::time(v.at_ms),
            v.actor
        ),
        None => crate::outln!("firmware config unchanged: no runtime layer is stored; nothing stored"),
    }
    Ok(())
}
