//! Side effects behind the workflow contracts of `hostfw-workflows`: Redfish calls, the site
//! database, artifact resolution.
//!
//! Two folders follow the workflows they serve: [`host`] (one host's reprovisioning) and [`site`]
//! (the scheduler pass, repair, the Site Explorer crawl); beside them the pieces both use (BMC
//! clients, artifacts, the catalog source, heartbeats, the error classification). Each concept file
//! holds plain async functions over [`Deps`]; each folder's `registry` binds them to the contract
//! names for the Temporal worker. Activities resolve BMC credentials themselves from the
//! credential store (by machine id): no credential ever enters a workflow input or output.

pub mod artifacts;
pub mod bmc;
pub mod catalog_source;
pub mod error;
pub mod heartbeat;
pub mod host;
pub mod site;

pub use host::{
    activation, firmware, host_model, host_state, inventory, liveness, platform, reset_types, routes, running_task,
    script, script_lock, scout_package, upload_slot,
};
pub use site::{crawl, manager_pass, repair, site_link, site_view};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hostfw_model::{Secret, SiteConfig};
use hostfw_store::Store;

pub use catalog_source::CatalogSource;
pub use host::registry::HostActivitiesImpl;
pub use site::registry::SiteActivitiesImpl;

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
    pub settings: ActivitySettings,
    /// The site config (scheduler policy, host workflow settings, Site Explorer bounds).
    pub site: Arc<SiteConfig>,
    /// The site's Temporal namespace, for the activities that start or wake workflows
    /// (the scheduler pass, Site Explorer, restore). `None` outside a worker (the CLI's explore).
    pub temporal: Option<temporalio_client::Client>,
}
