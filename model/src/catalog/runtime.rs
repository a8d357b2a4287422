//! The runtime layer of the catalog (the Host Firmware Config API): one TOML document of
//! `[host_models.<key>]` tables, in exactly the schema of the site config's `host_models`, applied
//! after the static tables and the firmware-directory overlay (highest precedence).
//!
//! Owns parsing that document (unknown keys rejected; every error names the origin label and the
//! key) and assembling static tables + directory overlay + runtime layer with the overlay merge
//! rules of `merge`. It must not read the site database (the caller passes the stored document) nor
//! validate models itself (`validate` does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::catalog::doc::HostModelDoc;
use crate::catalog::merge::{Merger, Origin};
use crate::catalog::{overlay, validate, Catalog};
use crate::config::SiteConfig;
use crate::error::CatalogError;
use crate::host_model::same_name;
use crate::toml_doc;

/// The runtime document as written: only `[host_models.<key>]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuntimeDocument {
    #[serde(default)]
    host_models: BTreeMap<String, HostModelDoc>,
}

/// Parses a runtime catalog document into `(origin, "host_models.<key>", doc)` in key order.
/// Errors name `origin` and the full key; two tables for one vendor/model are refused (which one
/// would win is not obvious). An empty document is valid (no runtime layer).
pub fn parse_runtime_document(text: &str, origin: &Path) -> Result<Vec<(PathBuf, String, HostModelDoc)>, CatalogError> {
    let doc: RuntimeDocument = toml_doc::parse(text, "").map_err(|f| CatalogError::Invalid {
        file: origin.to_path_buf(),
        key: f.key,
        at: f.at,
        problem: f.problem,
    })?;
    let mut out: Vec<(PathBuf, String, HostModelDoc)> = Vec::new();
    for (key, model) in doc.host_models {
        let key = format!("host_models.{key}");
        if let (Some(vendor), Some(name)) = (&model.vendor, &model.model) {
            let earlier = out.iter().find(|(_, _, d)| {
                d.vendor.as_deref().is_some_and(|v| same_name(v, vendor))
                    && d.model.as_deref().is_some_and(|m| same_name(m, name))
            });
            if let Some((_, other, _)) = earlier {
                return Err(Origin::new(origin, key.as_str()).error(
                    "model",
                    format!(
                        "vendor `{vendor}` model `{name}` is already defined by `{other}` in this \
                         document; define each vendor/model once"
                    ),
                ));
            }
        }
        out.push((origin.to_path_buf(), key, model));
    }
    Ok(out)
}

impl Catalog {
    /// Like [`Catalog::load`], then applies `runtime` = `(document, origin label)` last, as an
    /// overlay (its defaults win). `None` gives exactly `Catalog::load`'s catalog.
    pub fn load_with_runtime(config: &SiteConfig, runtime: Option<(&str, &Path)>) -> Result<Catalog, CatalogError> {
        Catalog::load_leaving_out(config, runtime, &[])
    }

    /// Like [`Catalog::load_with_runtime`] without the firmware-directory files in `left_out`
    /// (paths as `CatalogError::file` names them): what a reader runs on while those files do
    /// not load. The result is not the catalog in effect; callers must say which files they left
    /// out.
    pub fn load_leaving_out(
        config: &SiteConfig,
        runtime: Option<(&str, &Path)>,
        left_out: &[std::path::PathBuf],
    ) -> Result<Catalog, CatalogError> {
        let runtime = match runtime {
            Some((text, origin)) => parse_runtime_document(text, origin)?,
            None => Vec::new(),
        };
        let overlay = overlay::read_overlay(&config.firmware_global.firmware_directory, left_out)?;
        let mut merger = Merger::default();
        for (key, doc) in &config.host_models {
            merger.insert_static(doc.clone(), Origin::new(config.source.clone(), format!("host_models.{key}")))?;
        }
        for (file, doc) in overlay {
            merger.overlay(doc, Origin::new(file, ""))?;
        }
        for (file, key, doc) in runtime {
            merger.overlay(doc, Origin::new(file, key))?;
        }
        let models = merger.into_drafts().into_iter().map(validate::validate).collect::<Result<Vec<_>, _>>()?;
        Ok(Catalog { models })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::ComponentType;

    const SITE: &str = r#"
[site]
name = "t"
database_url = "sqlite://site.db"
[firmware_global]
firmware_directory = "no-such-firmware-dir"

[host_models.r760]
vendor = "Dell"
model = "PowerEdge R760"
ordering = ["bmc"]
[host_models.r760.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC\\."
[[host_models.r760.components.bmc.known_firmware]]
version = "7.10.30.00"
default = true
"#;

    fn site() -> SiteConfig {
        SiteConfig::from_toml_str(SITE, Path::new("/nonexistent-hostfw-site/site.toml")).unwrap()
    }

    fn origin() -> &'static Path {
        Path::new("firmware-config v3")
    }

    fn default_of(c: &Catalog, vendor: &str, model: &str, component: ComponentType) -> String {
        let m = c.find(vendor, model).expect("model in catalog");
        m.default_entry(component).expect("a default").version.clone()
    }

    #[test]
    fn without_runtime_it_is_the_static_catalog() {
        let config = site();
        assert_eq!(Catalog::load_with_runtime(&config, None).unwrap(), Catalog::load(&config).unwrap());
        let empty = Catalog::load_with_runtime(&config, Some(("", origin()))).unwrap();
        assert_eq!(empty, Catalog::load(&config).unwrap());
    }

    #[test]
    fn runtime_default_wins_and_new_models_are_added() {
        let doc = r#"
[host_models.r760-new-bmc]
vendor = "dell"
model = "PowerEdge R760"
[[host_models.r760-new-bmc.components.bmc.known_firmware]]
version = "7.20.00.00"
default = true

[host_models.sm]
vendor = "Supermicro"
model = "SYS-221H"
[host_models.sm.components.bmc]
current_version_reported_as = "^BMC$"
[[host_models.sm.components.bmc.known_firmware]]
version = "1.2"
default = true
"#;
        let c = Catalog::load_with_runtime(&site(), Some((doc, origin()))).unwrap();
        assert_eq!(default_of(&c, "Dell", "PowerEdge R760", ComponentType::Bmc), "7.20.00.00");
        assert_eq!(default_of(&c, "Supermicro", "SYS-221H", ComponentType::Bmc), "1.2");
        assert_eq!(c.models().len(), 2);
    }

    #[test]
    fn unknown_keys_are_rejected_with_origin_and_key() {
        let doc = "[host_models.x]\nvendor = \"A\"\nmodel = \"B\"\nbogus = 1\n";
        let err = parse_runtime_document(doc, origin()).unwrap_err().to_string();
        assert!(err.contains("firmware-config v3"), "{err}");
        assert!(err.contains("host_models.x"), "{err}");
        assert!(err.contains("bogus"), "{err}");
        let err = parse_runtime_document("[site]\nname = \"x\"\n", origin()).unwrap_err().to_string();
        assert!(err.contains("site"), "{err}");
    }

    #[test]
    fn invalid_models_name_the_runtime_key() {
        let doc = r#"
[host_models.bad]
vendor = "A"
model = "B"
[host_models.bad.components.bmc]
current_version_reported_as = "^BMC$"
[[host_models.bad.components.bmc.known_firmware]]
version = ""
"#;
        let err = Catalog::load_with_runtime(&site(), Some((doc, origin()))).unwrap_err().to_string();
        assert!(err.contains("firmware-config v3"), "{err}");
        assert!(err.contains("host_models.bad.components.bmc.known_firmware[0].version"), "{err}");
        let no_vendor = "[host_models.nov]\nmodel = \"B\"\n";
        let err = Catalog::load_with_runtime(&site(), Some((no_vendor, origin()))).unwrap_err().to_string();
        assert!(err.contains("host_models.nov.vendor"), "{err}");
    }

    #[test]
    fn one_vendor_model_twice_in_a_document_is_refused() {
        let doc = "[host_models.a]\nvendor = \"V\"\nmodel = \"M\"\n[host_models.b]\nvendor = \"v\"\nmodel = \"m\"\n";
        let err = parse_runtime_document(doc, origin()).unwrap_err().to_string();
        assert!(err.contains("host_models.b.model"), "{err}");
        assert!(err.contains("host_models.a"), "{err}");
    }
}
