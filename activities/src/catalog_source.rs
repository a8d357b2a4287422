//! `CatalogSource`: the effective catalog as of now, reloaded when its inputs change.
//!
//! The effective catalog is the site config's static `[host_models.*]` tables, then the firmware
//! directory overlay, then the latest runtime document stored by `hostfw firmware-config set`
//! (seed "Drift detection": the desired snapshot refreshes when the runtime configuration changes
//! or the firmware directory is modified). Every read checks a cheap fingerprint of those inputs
//! (the directory's file names, sizes and modification times, and the stored version number) and
//! reloads only when it changed. The first load warns when the firmware directory adds no host
//! model (missing, mistyped, or no `metadata.toml`: `OverlayScan`). A document that no longer loads keeps the last good catalog and
//! says so in the log. A failed read of the site database is [`CatalogUnavailable::Store`]: it is
//! transient and must never end a workflow (activities turn it into a retried failure through
//! `error::catalog`). It must not decide anything about drift or gates.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use hostfw_model::{Catalog, CatalogError, SiteConfig};
use hostfw_store::{FirmwareConfigVersion, Store, StoreError};

/// Why the effective catalog cannot be given now.
#[derive(Debug)]
pub enum CatalogUnavailable {
    /// The runtime layer could not be read from the site database: transient, try again.
    Store(StoreError),
    /// The catalog has never loaded since this process started: the message names the bad input
    /// (file, line, key). It stays so until an operator fixes the input.
    Invalid(String),
}

impl std::fmt::Display for CatalogUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CatalogUnavailable::Store(e) => write!(f, "reading firmware-config: {}", hostfw_model::error_chain(e)),
            CatalogUnavailable::Invalid(e) => write!(f, "the catalog does not load: {e}"),
        }
    }
}

impl std::error::Error for CatalogUnavailable {}

/// The last loaded catalog and the fingerprint of the inputs it was loaded from.
type Cached = Option<(u64, Arc<Catalog>)>;

/// The effective catalog, reloaded on change. Cheap to clone (shared cache).
#[derive(Clone)]
pub struct CatalogSource {
    site: Arc<SiteConfig>,
    store: Store,
    cache: Arc<Mutex<Cached>>,
}

impl CatalogSource {
    pub fn new(site: Arc<SiteConfig>, store: Store) -> Self {
        CatalogSource { site, store, cache: Arc::new(Mutex::new(None)) }
    }

    /// The catalog as of now. Errors when it has never loaded (bad static config, directory or
    /// runtime document); after one good load, a bad change keeps the last good catalog.
    pub async fn current(&self) -> Result<Arc<Catalog>, CatalogUnavailable> {
        let runtime = self.store.firmware_config_latest().await.map_err(CatalogUnavailable::Store)?;
        let version = runtime.as_ref().map_or(0, |r| r.version);
        let fingerprint = {
            let mut h = DefaultHasher::new();
            version.hash(&mut h);
            directory_fingerprint(&self.site.firmware_global.firmware_directory, &mut h);
            h.finish()
        };
        if let Some((seen, catalog)) = self.cache.lock().expect("catalog cache").as_ref() {
            if *seen == fingerprint {
                return Ok(catalog.clone());
            }
        }
        let loaded = load(&self.site, runtime.as_ref());
        let mut cache = self.cache.lock().expect("catalog cache");
        match loaded {
            Ok(catalog) => {
                let catalog = Arc::new(catalog);
                if cache.is_none() {
                    let scan = hostfw_model::OverlayScan::of(&self.site.firmware_global.firmware_directory);
                    if let Some(warning) = scan.warning() {
                        tracing::warn!("{warning}");
                    }
                } else {
                    tracing::info!(
                        models = catalog.models().len(),
                        runtime_version = version,
                        "catalog changed: reloaded"
                    );
                }
                *cache = Some((fingerprint, catalog.clone()));
                Ok(catalog)
            }
            Err(e) => match cache.as_mut() {
                Some((seen, last)) => {
                    tracing::warn!(error = %e, "the changed catalog does not load; keeping the last good one");
                    *seen = fingerprint;
                    Ok(last.clone())
                }
                None => Err(CatalogUnavailable::Invalid(hostfw_model::error_chain(&e))),
            },
        }
    }
}

/// How a stored firmware-config version is named in catalog errors (it has no file).
pub fn origin_label(version: i64) -> PathBuf {
    PathBuf::from(format!("firmware-config version {version}"))
}

/// The effective catalog with `runtime` (a stored firmware-config version) applied last.
pub fn load(site: &SiteConfig, runtime: Option<&FirmwareConfigVersion>) -> Result<Catalog, CatalogError> {
    match runtime {
        Some(v) => Catalog::load_with_runtime(site, Some((&v.document, &origin_label(v.version)))),
        None => Catalog::load_with_runtime(site, None),
    }
}

/// Like [`load`] without the firmware-directory files in `left_out` (see
/// `Catalog::load_leaving_out`).
pub fn load_leaving_out(
    site: &SiteConfig,
    runtime: Option<&FirmwareConfigVersion>,
    left_out: &[PathBuf],
) -> Result<Catalog, CatalogError> {
    match runtime {
        Some(v) => Catalog::load_leaving_out(site, Some((&v.document, &origin_label(v.version))), left_out),
        None => Catalog::load_leaving_out(site, None, left_out),
    }
}

/// Hash the names, sizes and modification times of the files under `dir` (two levels: the
/// overlay is `<dir>/<model>/metadata.toml` plus its artifacts). A missing directory hashes as empty.
fn directory_fingerprint(dir: &Path, h: &mut impl Hasher) {
    fn walk(dir: &Path, depth: u32, h: &mut impl Hasher) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Ok(meta) = entry.metadata() else { continue };
            entry.file_name().hash(h);
            if meta.is_dir() {
                if depth > 0 {
                    walk(&entry.path(), depth - 1, h);
                }
            } else {
                meta.len().hash(h);
                let modified = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
                modified.map(|d| d.as_nanos()).hash(h);
            }
        }
    }
    walk(dir, 1, h);
}
