//! The catalog the read commands (`plan`, `compliance`, `budget list`, `managed-host show`) run
//! on when a file of the firmware directory does not load: the effective catalog without that
//! file, with a warning naming the file, what is wrong with it and since when (its modification
//! time), so one broken `metadata.toml` does not blind the operator's view of the whole site.
//!
//! What "last good" can be here: the CLI is a fresh process on whatever machine the operator
//! uses, and no copy of the file's previous content exists anywhere (the worker keeps the catalog
//! it loaded before the change in memory only, until it restarts). So the commands run on
//! every layer that does load: the static `[host_models.*]` tables, the other `metadata.toml`
//! files and the stored firmware-config version. The models the broken file added or amended are
//! then planned from those layers alone, or have no catalog entry; the warning says so.
//!
//! Owns leaving broken firmware-directory files out and the warning. It must not change what a
//! command prints otherwise, and it never leaves out the site config or a stored firmware-config
//! version: those fail the command as before, naming the problem.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hostfw_activities::catalog_source;
use hostfw_model::Catalog;
use serde::Serialize;

use crate::context::Context;

/// A catalog file left out because it does not load.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogWarning {
    /// The file, as the catalog names it.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub file: PathBuf,
    /// What is wrong (the catalog's own error: file, line, key, problem).
    pub problem: String,
    /// When the file was last modified (unix ms): since then the catalog in effect cannot be
    /// built from the firmware directory.
    pub modified_at_ms: Option<i64>,
}

impl CatalogWarning {
    /// The warning as an operator reads it (on stderr).
    pub fn text(&self) -> String {
        let since =
            self.modified_at_ms.map(|ms| format!(" (modified {})", crate::output::time(ms))).unwrap_or_default();
        format!(
            "WARNING: the catalog file {}{since} does not load, so this answer leaves it out: {}. The models it \
             defines or amends come from the other layers only (or have no catalog entry) until it is fixed; \
             a running worker keeps the catalog it loaded before the change, a restarted one cannot load any",
            self.file.display(),
            self.problem
        )
    }
}

/// The effective catalog, or, when files of the firmware directory do not load, the catalog
/// without them and one warning per file left out. Errors of other layers are returned.
pub async fn effective_or_without_broken(ctx: &Context) -> anyhow::Result<(Catalog, Vec<CatalogWarning>)> {
    let latest = ctx.store.firmware_config_latest().await?;
    without_broken(&ctx.site, latest.as_ref())
}

/// [`effective_or_without_broken`] for a given site and runtime layer.
pub fn without_broken(
    site: &hostfw_model::SiteConfig,
    runtime: Option<&hostfw_store::FirmwareConfigVersion>,
) -> anyhow::Result<(Catalog, Vec<CatalogWarning>)> {
    let directory = &site.firmware_global.firmware_directory;
    let mut left_out: Vec<PathBuf> = Vec::new();
    let mut warnings = Vec::new();
    loop {
        let error = match catalog_source::load_leaving_out(site, runtime, &left_out) {
            Ok(catalog) => return Ok((catalog, warnings)),
            Err(e) => e,
        };
        let file = error.file().to_path_buf();
        if !is_directory_file(directory, &file) || left_out.contains(&file) {
            return Err(anyhow::Error::from(error)).context("the firmware catalog does not load");
        }
        warnings.push(CatalogWarning {
            problem: hostfw_model::error_chain(&error),
            modified_at_ms: modified_ms(&file),
            file: file.clone(),
        });
        left_out.push(file);
    }
}

/// A `metadata.toml` of the firmware directory (not the directory itself, the site config or a
/// stored document).
fn is_directory_file(directory: &Path, file: &Path) -> bool {
    file != directory
        && file.starts_with(directory)
        && file.file_name().is_some_and(|n| n == hostfw_model::catalog::METADATA_FILE)
}

fn modified_ms(file: &Path) -> Option<i64> {
    let modified = std::fs::metadata(file).ok()?.modified().ok()?;
    let ms = modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// Say each warning before the answer: first on stdout for people, on stderr with
/// `--format json` (whose document carries them in its `catalog_warnings` field).
pub fn warn(ctx: &Context, warnings: &[CatalogWarning]) {
    for w in warnings {
        match ctx.format {
            crate::cli::Format::Table => crate::outln!("{}\n", w.text()),
            crate::cli::Format::Json => eprintln!("{}", w.text()),
        }
    }
}
