//! The text form of a catalog change preview (`firmware-config set|rollback|unset|diff`): every
//! default that moves with its direction and host count, the downgrades and whether
//! `--allow-downgrade` covers them, the artifacts checked and the hosts the next pass would start.
//!
//! Owns that wording only. It must not compute anything (`catalog_preview`) nor print JSON (the
//! caller prints the preview document itself).

use crate::catalog_preview::{row_text, CatalogChangePreview};
use crate::output;

/// The defaults that move, as a table (or a line saying none does).
pub fn print_rows(p: &CatalogChangePreview) {
    if p.removes_layer {
        crate::outln!("the runtime layer is removed: the static config and the firmware directory apply alone");
    }
    if p.defaults_changed.is_empty() {
        crate::outln!("default versions: unchanged (the document changes other settings)");
        return;
    }
    crate::outln!("default versions that change:");
    let rows: Vec<Vec<String>> = p
        .defaults_changed
        .iter()
        .map(|c| {
            vec![
                c.vendor.clone(),
                c.model.clone(),
                c.component.clone(),
                c.from.clone().unwrap_or_else(|| "-".into()),
                c.to.clone().unwrap_or_else(|| "-".into()),
                c.kind.to_string(),
                c.hosts.to_string(),
            ]
        })
        .collect();
    crate::out!("{}", output::table(&["VENDOR", "MODEL", "COMPONENT", "FROM", "TO", "CHANGE", "HOSTS"], &rows));
    if !p.downgrades.is_empty() {
        let verdict = if p.allow_downgrade { "allowed by --allow-downgrade" } else { "needs --allow-downgrade" };
        crate::outln!("{} default(s) move to an older version ({verdict}):", p.downgrades.len());
        for row in &p.downgrades {
            crate::outln!("  {}", row_text(row));
        }
    }
}

/// The whole preview: the rows, the artifacts checked and the next pass under the new catalog.
pub fn print_preview(p: &CatalogChangePreview) {
    print_rows(p);
    if !p.artifacts_checked.is_empty() {
        crate::outln!("artifacts checked: {}", p.artifacts_checked.len());
        for a in &p.artifacts_checked {
            crate::outln!("  {} {} {}: {} sha256 {}", a.model, a.component, a.version, a.artifact, a.sha256);
        }
    }
    crate::outln!(
        "the next pass would start {} host(s) (ceiling {}, in flight {}){}{}",
        p.would_start.len(),
        p.ceiling,
        p.in_flight,
        if p.would_start.is_empty() { "" } else { ": " },
        p.would_start.join(", ")
    );
    if !p.would_wait.is_empty() {
        crate::outln!("{} more host(s) would wait:", p.would_wait.len());
        for (id, why) in &p.would_wait {
            crate::outln!("  {id}: {why}");
        }
    }
    if let Some(message) = &p.message {
        crate::outln!("message: {message}");
    }
}
