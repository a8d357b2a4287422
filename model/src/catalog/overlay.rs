//! Reading the catalog's directory overlay: `<firmware_directory>/<subdir>/metadata.toml`.
//!
//! Subdirectories are applied in byte order of their names (deterministic, unlike NICo's
//! oldest-mtime order); dot-directories, plain files and subdirectories without a `metadata.toml`
//! are skipped; a missing `firmware_directory` means no overlay. Owns this file-system walk and
//! parsing each document; it must not merge or validate (see `merge`, `validate`).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::catalog::doc::HostModelDoc;
use crate::error::CatalogError;
use crate::toml_doc;

/// The name of the one document in each overlay subdirectory.
pub const METADATA_FILE: &str = "metadata.toml";

/// Every overlay document, in application order, with the file it came from; the files in
/// `left_out` are not read (a caller that runs on the catalog without a broken file).
pub(crate) fn read_overlay(dir: &Path, left_out: &[PathBuf]) -> Result<Vec<(PathBuf, HostModelDoc)>, CatalogError> {
    let read_err = |file: &Path| {
        let file = file.to_path_buf();
        move |source| CatalogError::Read { file, source }
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(read_err(dir)(e)),
        Ok(meta) if !meta.is_dir() => {
            return Err(read_err(dir)(std::io::Error::other("firmware_global.firmware_directory is not a directory")))
        }
        Ok(_) => {}
    }
    let mut subdirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_err(dir))? {
        let entry = entry.map_err(read_err(dir))?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') || !path.is_dir() {
            continue;
        }
        subdirs.push((entry.file_name(), path));
    }
    subdirs.sort();

    let mut docs = Vec::new();
    for (_, subdir) in subdirs {
        let file = subdir.join(METADATA_FILE);
        if left_out.contains(&file) {
            continue;
        }
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(read_err(&file)(e)),
        };
        let doc = toml_doc::parse(&text, "").map_err(|f| CatalogError::Invalid {
            file: file.clone(),
            key: f.key,
            at: f.at,
            problem: f.problem,
        })?;
        docs.push((file, doc));
    }
    Ok(docs)
}
