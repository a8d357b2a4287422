//! The one construction seam of the activities: [`ActivitySettings`] and [`Deps`], built from the
//! site config once. The worker and the `hostfw` CLI both build them here
//! ([`ActivitySettings::from_site`], [`Deps::open`]), so the two never disagree on a setting.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hostfw_model::{Secret, SiteConfig};
use hostfw_redfish::LinkCache;
use hostfw_store::Store;

use crate::artifact_url::ArtifactUrls;
use crate::catalog_source::{CatalogSource, CatalogUnavailable};
use crate::live_site::LiveSite;
use crate::site::site_view_cache::SiteViewCache;

/// Settings the activities need from the site config.
#[derive(Debug, Clone)]
pub struct ActivitySettings {
    /// Bound on one Redfish request.
    pub redfish_timeout: Duration,
    /// Bound on one Redfish update task.
    pub task_timeout: Duration,
    /// Pause between task polls when the BMC gives no `Retry-After`.
    pub task_poll_interval: Duration,
    /// Where relative artifact paths of the catalog are resolved, and what the worker serves.
    pub artifact_root: PathBuf,
    /// URL under which BMCs fetch files of `artifact_root` (SimpleUpdate `ImageURI`) and Scout
    /// fetches artifacts and scripts.
    pub artifact_base_url: String,
    /// `[worker] artifact_url_lifetime`: how long a minted artifact URL stays valid.
    pub artifact_url_lifetime: Duration,
    /// Packaged Scout scripts (`<dir>/<vendor>/<model>/<component>/upgrade.sh`).
    pub scout_scripts_dir: PathBuf,
    /// `firmware_global.max_uploads`: concurrent Redfish uploads site-wide.
    pub max_uploads: u32,
    /// Login used for a machine that has no entry in the credential store.
    pub default_credentials: Option<(String, Secret)>,
    /// `[redfish] ca_bundle` (resolved): PEM CA certificates trusted for `https://` BMCs on top
    /// of the built-in roots; read each time a client is opened.
    pub redfish_ca_bundle: Option<PathBuf>,
    /// `[redfish] insecure_skip_verify`: do not verify BMC certificates (logged once as a warning).
    pub redfish_insecure_skip_verify: bool,
    /// `[redfish] max_response_bytes`: the largest Redfish reply body a client reads.
    pub redfish_max_response_bytes: u64,
    /// `[redfish] inventory_concurrency`: FirmwareInventory members an inventory crawl reads at once.
    pub redfish_inventory_concurrency: u32,
    /// `[redfish] expand`: read the Systems collection and the FirmwareInventory with `$expand`
    /// where the BMC advertises it.
    pub redfish_expand: bool,
    /// `[redfish] reset_task_timeout`: bound on following the Task a reset answers with (the
    /// activation and platform steps use the value in their input instead).
    pub redfish_reset_task_timeout: Duration,
}

/// Everything an activity may touch.
#[derive(Clone)]
pub struct Deps {
    pub store: Store,
    /// The effective catalog, reloaded when the firmware directory or the runtime document changes.
    pub catalog: CatalogSource,
    /// The scheduler's view of `store`, kept across passes (the manager's pass and the metrics
    /// endpoint re-read only the machines and reports that changed).
    pub site_view: SiteViewCache,
    /// Each BMC's FirmwareInventory link, remembered between the crawls and inventory refreshes
    /// of this process (every Redfish client opened from these `Deps` shares it), so a repeat
    /// crawl skips the UpdateService read. Bounded: one entry per BMC.
    pub link_cache: LinkCache,
    /// When this process's scheduler passes last asked Temporal which requests have no workflow
    /// (`site::manager_pass`: at most once per `tunables::ORPHAN_CHECK_EVERY`).
    pub orphan_check: crate::site::OrphanCheck,
    pub settings: ActivitySettings,
    /// Mints the signed URLs of the artifact server (keyed by the store's site key).
    pub artifact_urls: ArtifactUrls,
    /// The site config (scheduler policy, host workflow settings, Site Explorer bounds), as a
    /// live reload last left it: read it with `site.current()` once per pass or activity.
    /// `settings` and `catalog` keep the config the worker started with (their keys need a
    /// restart: `hostfw_model::config::reload_kind`).
    pub site: LiveSite,
    /// The site's Temporal namespace, for the activities that start or wake workflows
    /// (the scheduler pass, Site Explorer, restore). `None` outside a worker (the CLI's explore).
    pub temporal: Option<temporalio_client::Client>,
    /// Raised when the worker begins to stop: activities that only wait end early
    /// ([`crate::stopping`]).
    pub stopping: crate::stopping::Stopping,
}

impl ActivitySettings {
    /// The activity settings of a site config.
    pub fn from_site(site: &SiteConfig) -> ActivitySettings {
        ActivitySettings {
            redfish_timeout: site.redfish.timeout,
            task_timeout: site.redfish.task_timeout,
            task_poll_interval: site.host_reprovision.task_poll_interval,
            artifact_root: site.firmware_global.firmware_directory.clone(),
            artifact_base_url: site.worker.artifact_base_url.clone(),
            artifact_url_lifetime: site.worker.artifact_url_lifetime,
            scout_scripts_dir: site.firmware_global.scout_scripts_directory.clone(),
            max_uploads: site.firmware_global.max_uploads,
            default_credentials: site
                .credentials
                .default_username
                .clone()
                .zip(site.credentials.default_password.clone()),
            redfish_ca_bundle: site.redfish.ca_bundle.clone(),
            redfish_insecure_skip_verify: site.redfish.insecure_skip_verify,
            redfish_max_response_bytes: site.redfish.max_response_bytes,
            redfish_inventory_concurrency: site.redfish.inventory_concurrency,
            redfish_expand: site.redfish.expand,
            redfish_reset_task_timeout: site.redfish.reset_task_timeout,
        }
    }
}

impl ActivitySettings {
    /// The signed-URL minter and checker for these settings, keyed by `site_key` (the worker's
    /// artifact server and its activities must be given the same key).
    pub fn artifact_urls(&self, site_key: Option<&hostfw_store::SiteKey>) -> ArtifactUrls {
        ArtifactUrls::new(site_key, &self.artifact_base_url, self.artifact_url_lifetime)
    }
}

impl Deps {
    /// Everything the activities touch, from the site config and its opened site database: the
    /// settings ([`ActivitySettings::from_site`]) and the effective catalog, loaded once here so a
    /// catalog that does not load is an error before any work is taken. `temporal` is the worker's
    /// client (the scheduler and Site Explorer activities start and wake workflows); `None` in the CLI.
    pub async fn open(
        site: &SiteConfig,
        store: Store,
        temporal: Option<temporalio_client::Client>,
    ) -> Result<Deps, CatalogUnavailable> {
        let settings = ActivitySettings::from_site(site);
        let artifact_urls = settings.artifact_urls(store.site_key());
        let site = Arc::new(site.clone());
        let catalog = CatalogSource::new(site.clone(), store.clone());
        catalog.current().await?;
        Ok(Deps {
            store,
            catalog,
            site_view: SiteViewCache::new(),
            link_cache: LinkCache::default(),
            orphan_check: crate::site::OrphanCheck::default(),
            settings,
            artifact_urls,
            site: LiveSite::new(site),
            temporal,
            stopping: crate::stopping::Stopping::default(),
        })
    }
}
