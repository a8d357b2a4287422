//! Target `catalog_files`: the firmware catalog's files.
//!
//! Owns feeding one document to the catalog parsers production calls: an overlay
//! `<firmware_directory>/<subdir>/metadata.toml` read by `Catalog::load` (written to a scratch
//! folder, so the file walk and the merge run too), the runtime catalog document
//! (`parse_runtime_document`, then `Catalog::load_with_runtime`), and a Scout package's
//! `metadata.toml` (`activities::host::scout_package::parse_metadata`). Property: no panic; a
//! refusal names the file and the key (or its line). It must not build catalogs by hand.
//!
//! Input: byte 0 picks the parser (0: overlay metadata.toml, 1: runtime document, 2: Scout
//! metadata.toml), the rest is the file's text.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use hostfw_activities::host::scout_package::{parse_metadata, ScoutPackageError};
use hostfw_model::catalog::parse_runtime_document;
use hostfw_model::{Catalog, CatalogError, SiteConfig};

use crate::input::assert_names;

/// A scratch site: `site.toml` naming `firmware/` as its overlay, and one overlay subfolder.
struct Scratch {
    config: SiteConfig,
    metadata: PathBuf,
}

fn scratch() -> &'static Mutex<Scratch> {
    static SCRATCH: OnceLock<Mutex<Scratch>> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hostfw-fuzz-catalog-{}", std::process::id()));
        let sub = dir.join("firmware").join("model-a");
        std::fs::create_dir_all(&sub).expect("create the scratch overlay folder");
        let text = "[site]\nname = \"fuzz\"\ndatabase_url = \"sqlite://data/hostfw.db\"\ndata_dir = \"data\"\n\
            [temporal]\naddress = \"http://127.0.0.1:7233\"\nnamespace = \"default\"\ntask_queue = \"hostfw\"\n\
            [worker]\nmetrics_listen = \"127.0.0.1:9464\"\nartifact_listen = \"127.0.0.1:8089\"\n\
            artifact_base_url = \"http://127.0.0.1:8089/\"\n\
            [credentials]\ndefault_username = \"admin\"\ndefault_password = \"password\"\n\
            [firmware_global]\nfirmware_directory = \"firmware\"\n";
        let config = SiteConfig::from_toml_str(text, &dir.join("site.toml")).expect("the scratch site config");
        Mutex::new(Scratch { config, metadata: sub.join(hostfw_model::catalog::METADATA_FILE) })
    })
}

/// Asserts a catalog refusal names `file` and, when it is about an entry, the key or a line.
fn assert_catalog_error(parser: &str, e: &CatalogError, file: &Path) {
    let message = e.to_string();
    assert_names(parser, &message, &[&file.display().to_string()]);
    if let CatalogError::Invalid { key, at, .. } = e {
        assert!(!key.trim().is_empty() || at.is_some(), "{parser}: a refusal naming no key and no line: {message}");
    }
}

pub fn run(data: &[u8]) {
    let (which, rest) = crate::input::selector(data);
    // Production reads these files with `read_to_string`: invalid UTF-8 never reaches a parser.
    let Some(text) = crate::input::text(rest) else { return };
    match which % 3 {
        0 => overlay(text),
        1 => runtime(text),
        _ => scout_metadata(text),
    }
}

fn overlay(text: &str) {
    let scratch = scratch().lock().unwrap_or_else(|p| p.into_inner());
    std::fs::write(&scratch.metadata, text).expect("write the scratch metadata.toml");
    if let Err(e) = Catalog::load(&scratch.config) {
        assert_catalog_error("catalog overlay", &e, &scratch.metadata);
    }
}

fn runtime(text: &str) {
    let origin = Path::new("catalog/runtime.toml");
    match parse_runtime_document(text, origin) {
        Err(e) => assert_catalog_error("runtime catalog", &e, origin),
        Ok(_) => {
            let scratch = scratch().lock().unwrap_or_else(|p| p.into_inner());
            let _ = std::fs::remove_file(&scratch.metadata);
            if let Err(e) = Catalog::load_with_runtime(&scratch.config, Some((text, origin))) {
                assert_catalog_error("runtime catalog", &e, origin);
            }
        }
    }
}

fn scout_metadata(text: &str) {
    let origin = Path::new("scripts/vendor/model/bmc/metadata.toml");
    if let Err(e) = parse_metadata(text, origin) {
        let message = e.to_string();
        assert_names("scout metadata.toml", &message, &[&origin.display().to_string()]);
        match &e {
            ScoutPackageError::MetadataKey { key, .. } => {
                assert!(!key.trim().is_empty(), "scout metadata.toml: a key refusal naming no key: {message}");
            }
            ScoutPackageError::MetadataSyntax { problem, .. } => {
                assert!(
                    problem.starts_with("line "),
                    "scout metadata.toml: a syntax refusal naming no line: {message}"
                );
            }
            _ => {}
        }
    }
}
