//! Target `site_config`: the site config file (`site.toml`), with its static catalog tables.
//!
//! Owns feeding one text to `SiteConfig::from_toml_str` (what `SiteConfig::load` runs after
//! reading the file) and, when it is accepted, building the catalog from its `[host_models.*]`
//! tables (`Catalog::load`; its overlay folder does not exist here) and comparing it with itself
//! through the reload plan. Property: no panic; a refusal names the file and a key (`(document)`
//! for a syntax error, with its line). It must not read a real site's files.

use std::path::Path;

use hostfw_model::config::ReloadPlan;
use hostfw_model::{Catalog, CatalogError, ConfigError, SiteConfig};

use crate::input::assert_names;

/// Where the text claims to come from (named in every error; relative paths resolve under it).
const ORIGIN: &str = "/nonexistent/hostfw-fuzz/site.toml";

pub fn run(data: &[u8]) {
    let Some(text) = crate::input::text(data) else { return };
    let origin = Path::new(ORIGIN);
    let config = match SiteConfig::from_toml_str(text, origin) {
        Ok(config) => config,
        Err(e) => {
            let message = e.to_string();
            assert_names("site config", &message, &[ORIGIN]);
            if let ConfigError::Invalid { key, .. } = &e {
                assert!(!key.trim().is_empty(), "site config: a refusal naming no key: {message}");
            }
            return;
        }
    };
    let _ = ReloadPlan::between(&config, &config);
    if let Err(e) = Catalog::load(&config) {
        let message = e.to_string();
        assert_names("site config catalog", &message, &[]);
        if let CatalogError::Invalid { key, at, file, .. } = &e {
            assert_eq!(file, origin, "site config catalog: a static table's refusal names another file: {message}");
            assert!(!key.trim().is_empty() || at.is_some(), "site config catalog: no key, no line: {message}");
        }
    }
}
