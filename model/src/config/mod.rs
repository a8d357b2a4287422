//! `SiteConfig`: the site config file (TOML, NICo key names), loaded, path-resolved and checked.
//!
//! Owns reading that one file, resolving its relative paths against the file's directory, and
//! turning parse/check failures into `ConfigError`s naming the file and key. It must not read any
//! other file except, in `load`, the `[redfish] ca_bundle` it names (checked to hold PEM
//! certificates) and the `[site] database_password_file` (`database_password`; the catalog overlay is `catalog`'s job) nor validate `[host_models.*]` beyond
//! their shape (also `catalog`'s job).

mod api_section;
mod database_password;
mod notifications_section;
mod reload;
mod sections;
mod validate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use api_section::{is_loopback, ApiSection};
pub use notifications_section::{NotificationsSection, WebhookSection};
pub use reload::{reload_kind, ReloadKind, ReloadPlan};
pub use sections::{
    CredentialsSection, FirmwareGlobalSection, HostReprovisionSection, MachineUpdaterSection, RedfishSection,
    ScriptsSection, SiteExplorerSection, SiteSection, TemporalSection, WorkerSection,
};

use crate::catalog::HostModelDoc;
use crate::error::ConfigError;
use crate::toml_doc;

/// The whole site config. Every table but `[site]` is optional.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteConfig {
    /// The file this config was read from (set by the loader; used to name it in errors).
    #[serde(skip)]
    pub source: PathBuf,
    pub site: SiteSection,
    #[serde(default)]
    pub temporal: TemporalSection,
    #[serde(default)]
    pub worker: WorkerSection,
    #[serde(default)]
    pub api: ApiSection,
    #[serde(default)]
    pub credentials: CredentialsSection,
    #[serde(default)]
    pub redfish: RedfishSection,
    #[serde(default)]
    pub host_reprovision: HostReprovisionSection,
    #[serde(default)]
    pub firmware_global: FirmwareGlobalSection,
    #[serde(default)]
    pub machine_updater: MachineUpdaterSection,
    #[serde(default)]
    pub site_explorer: SiteExplorerSection,
    #[serde(default)]
    pub scripts: ScriptsSection,
    #[serde(default)]
    pub notifications: NotificationsSection,
    /// Static catalog entries as written (key is free-form); `Catalog::load` merges and validates.
    #[serde(default)]
    pub host_models: BTreeMap<String, HostModelDoc>,
}

impl SiteConfig {
    /// Reads and checks the config file at `path`. Relative paths inside are resolved against the
    /// file's directory (made absolute with the current directory first).
    pub fn load(path: &Path) -> Result<SiteConfig, ConfigError> {
        let file = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let text = std::fs::read_to_string(&file).map_err(|source| ConfigError::Read { file: file.clone(), source })?;
        let config = SiteConfig::from_toml_str(&text, &file)?;
        if let Some(bundle) = &config.redfish.ca_bundle {
            validate::ca_bundle_file("redfish.ca_bundle", bundle).map_err(|(key, problem)| ConfigError::Invalid {
                file: file.clone(),
                key: key.to_string(),
                at: None,
                problem,
            })?;
        }
        for w in &config.notifications.webhooks {
            if let Some(secret_file) = &w.secret_file {
                crate::config::notifications_section::check_secret_file(secret_file).map_err(|problem| {
                    ConfigError::Invalid {
                        file: file.clone(),
                        key: "notifications.webhooks.secret_file".to_string(),
                        at: None,
                        problem: format!("webhook `{}`: {problem}", w.name),
                    }
                })?;
            }
        }
        let mut config = config;
        if let Some(pw_file) = config.site.database_password_file.clone() {
            let invalid = |problem: String| ConfigError::Invalid {
                file: file.clone(),
                key: "site.database_password_file".to_string(),
                at: None,
                problem,
            };
            let text = std::fs::read_to_string(&pw_file)
                .map_err(|e| invalid(format!("cannot read {}: {e}", pw_file.display())))?;
            config.site.database_url = database_password::insert(&config.site.database_url, &text)
                .map_err(|e| invalid(format!("{}: {e}", pw_file.display())))?;
        }
        Ok(config)
    }

    /// Parses and checks `text` as if read from `origin` (named in errors; relative paths are
    /// resolved against its parent directory, as given). Reads no file (so the `ca_bundle` file
    /// is only checked by `load`).
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<SiteConfig, ConfigError> {
        let invalid = |key: &str, problem: String| ConfigError::Invalid {
            file: origin.to_path_buf(),
            key: key.to_string(),
            at: None,
            problem,
        };
        let mut config: SiteConfig = toml_doc::parse(text, "").map_err(|f| ConfigError::Invalid {
            file: origin.to_path_buf(),
            key: f.key,
            at: f.at,
            problem: f.problem,
        })?;
        config.source = origin.to_path_buf();

        let base = config.config_dir();
        config.site.data_dir = base.join(&config.site.data_dir);
        config.firmware_global.firmware_directory = base.join(&config.firmware_global.firmware_directory);
        config.firmware_global.scout_scripts_directory = base.join(&config.firmware_global.scout_scripts_directory);
        config.redfish.ca_bundle = config.redfish.ca_bundle.map(|p| base.join(p));
        config.site.secret_key_file = config.site.secret_key_file.map(|p| base.join(p));
        config.api.tls_cert_file = config.api.tls_cert_file.map(|p| base.join(p));
        config.api.tls_key_file = config.api.tls_key_file.map(|p| base.join(p));
        config.api.client_ca_file = config.api.client_ca_file.map(|p| base.join(p));
        for w in &mut config.notifications.webhooks {
            w.secret_file = w.secret_file.take().map(|p| base.join(p));
        }
        config.site.database_url = resolve_database_url(&config.site.database_url, &base)
            .map_err(|problem| invalid("site.database_url", problem.to_string()))?;
        config.site.database_password_file = config.site.database_password_file.map(|p| base.join(p));
        if config.site.database_password_file.is_some() {
            database_password::check_url(&config.site.database_url)
                .map_err(|problem| invalid("site.database_password_file", problem.to_string()))?;
        }
        let trimmed = config.worker.artifact_base_url.trim_end_matches('/').to_string();
        config.worker.artifact_base_url = trimmed;

        validate::check(&config).map_err(|(key, problem)| invalid(key, problem))?;
        Ok(config)
    }

    /// The directory relative paths are resolved against (the config file's parent).
    pub fn config_dir(&self) -> PathBuf {
        self.source.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

/// `sqlite://rel/path.db` → `sqlite://<base>/rel/path.db` (query string kept); absolute SQLite
/// paths, `sqlite::memory:` and `postgres://`/`postgresql://` URLs are kept verbatim.
/// Why `site.database_url` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum DatabaseUrlError {
    #[error("unsupported database URL `{0}`; use sqlite://<path> or postgres://...")]
    Unsupported(String),
    #[error("database URL `{0}` has no file path")]
    NoPath(String),
    #[error("resolved database path {0} is not UTF-8")]
    NotUtf8(String),
}

fn resolve_database_url(url: &str, base: &Path) -> Result<String, DatabaseUrlError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(url.to_string());
    }
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .ok_or_else(|| DatabaseUrlError::Unsupported(url.to_string()))?;
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    if path.is_empty() {
        return Err(DatabaseUrlError::NoPath(url.to_string()));
    }
    if path == ":memory:" {
        return Ok(url.to_string());
    }
    let resolved = base.join(path);
    let resolved = resolved.to_str().ok_or_else(|| DatabaseUrlError::NotUtf8(resolved.display().to_string()))?;
    Ok(match query {
        Some(query) => format!("sqlite://{resolved}?{query}"),
        None => format!("sqlite://{resolved}"),
    })
}

#[cfg(test)]
mod tests {
    use super::resolve_database_url;
    use std::path::Path;

    #[test]
    fn database_urls() {
        let base = Path::new("/etc/hostfw");
        let ok = |u: &str| resolve_database_url(u, base).unwrap_or_else(|e| e.to_string());
        assert_eq!(ok("sqlite://data/hostfw.db"), "sqlite:///etc/hostfw/data/hostfw.db");
        assert_eq!(ok("sqlite:x.db?mode=rwc"), "sqlite:///etc/hostfw/x.db?mode=rwc");
        assert_eq!(ok("sqlite:///var/lib/h.db"), "sqlite:///var/lib/h.db");
        assert_eq!(ok("sqlite::memory:"), "sqlite::memory:");
        assert_eq!(ok("postgres://u@db/hostfw"), "postgres://u@db/hostfw");
        assert!(resolve_database_url("mysql://x", base).is_err());
        assert!(resolve_database_url("sqlite://", base).is_err());
        let rel = resolve_database_url("sqlite://data/h.db", Path::new("")).unwrap_or_default();
        assert_eq!(rel, "sqlite://data/h.db");
    }

    #[test]
    fn the_database_password_comes_from_its_file() {
        use crate::SiteConfig;
        let dir = tempfile::tempdir().unwrap();
        let site = |url: &str| {
            let text = format!("[site]\nname = \"s\"\ndatabase_url = \"{url}\"\ndatabase_password_file = \"pw\"\n");
            std::fs::write(dir.path().join("site.toml"), text).unwrap();
            SiteConfig::load(&dir.path().join("site.toml"))
        };
        let err = site("postgres://hostfw@db/hostfw").unwrap_err().to_string();
        assert!(err.contains("`site.database_password_file`: cannot read") && err.contains("pw"), "{err}");
        std::fs::write(dir.path().join("pw"), "s3cr3t/x\n").unwrap();
        let loaded = site("postgres://hostfw@db/hostfw").unwrap();
        assert_eq!(loaded.site.database_url, "postgres://hostfw:s3cr3t%2Fx@db/hostfw");
        assert_eq!(loaded.site.database_password_file, Some(dir.path().join("pw")));
        let err = site("sqlite://x.db").unwrap_err().to_string();
        assert!(err.contains("only a postgres://"), "{err}");
        let err = site("postgres://hostfw:inline@db/hostfw").unwrap_err().to_string();
        assert!(err.contains("already has a password"), "{err}");
    }
}
