//! `Catalog`: the effective host firmware catalog (static `[host_models.*]` tables of the site
//! config, then the directory overlay), merged, validated, and looked up by vendor/model.
//!
//! Owns assembling the catalog and the one lookup rule (`HostModel::is_for`: trimmed,
//! ASCII-case-insensitive). Nothing is half-loaded: any error means no catalog. It must not
//! compare against inventory (see `drift`, `selection`).

mod doc;
mod merge;
mod overlay;
mod overlay_scan;
mod runtime;
mod validate;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use doc::{ComponentDoc, HostModelDoc};
pub use overlay::METADATA_FILE;
pub use overlay_scan::OverlayScan;
pub use runtime::parse_runtime_document;

use crate::config::SiteConfig;
use crate::error::CatalogError;
use crate::host_model::HostModel;
use merge::{Merger, Origin};

/// The effective catalog: one validated `HostModel` per vendor/model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// Static tables in key order, then models first seen in the overlay, in application order.
    pub models: Vec<HostModel>,
}

impl Catalog {
    /// Builds the catalog from the config's `[host_models.*]` tables and its
    /// `firmware_global.firmware_directory` overlay (subdirectories in name order).
    pub fn load(config: &SiteConfig) -> Result<Catalog, CatalogError> {
        let overlay = overlay::read_overlay(&config.firmware_global.firmware_directory, &[])?;
        let statics = config
            .host_models
            .iter()
            .map(|(key, doc)| (config.source.clone(), format!("host_models.{key}"), doc.clone()));
        Catalog::from_docs(statics, overlay)
    }

    /// Builds the catalog from already-parsed documents: `statics` are `(file, key prefix, doc)`
    /// (e.g. `host_models.r760`), `overlay` are `(file, doc)` applied in the given order.
    pub fn from_docs(
        statics: impl IntoIterator<Item = (PathBuf, String, HostModelDoc)>,
        overlay: impl IntoIterator<Item = (PathBuf, HostModelDoc)>,
    ) -> Result<Catalog, CatalogError> {
        let mut merger = Merger::default();
        for (file, key, doc) in statics {
            merger.insert_static(doc, Origin::new(file, key))?;
        }
        for (file, doc) in overlay {
            merger.overlay(doc, Origin::new(file, ""))?;
        }
        let models = merger.into_drafts().into_iter().map(validate::validate).collect::<Result<Vec<_>, _>>()?;
        Ok(Catalog { models })
    }

    /// A catalog of models built elsewhere (e.g. received as JSON); not re-validated. If two
    /// models are for the same vendor/model, `find` returns the first.
    pub fn from_models(models: Vec<HostModel>) -> Catalog {
        Catalog { models }
    }

    /// The model for a reported vendor/model (trimmed, ASCII-case-insensitive), if any.
    pub fn find(&self, vendor: &str, model: &str) -> Option<&HostModel> {
        self.models.iter().find(|m| m.is_for(vendor, model))
    }

    pub fn models(&self) -> &[HostModel] {
        &self.models
    }
}
