//! Side effects behind the workflow contracts of `hostfw-workflows`: Redfish calls, the site
//! database, artifact resolution.
//!
//! Two folders follow the workflows they serve: [`host`] (one host's reprovisioning) and [`site`]
//! (the scheduler pass, repair, the Site Explorer crawl); beside them the pieces both use (BMC
//! clients, artifacts, the catalog source, heartbeats, the error classification). Each concept file
//! holds plain async functions over [`Deps`]; each folder's `registry` binds them to the contract
//! names for the Temporal worker. Activities resolve BMC credentials themselves from the
//! credential store (by machine id): no credential ever enters a workflow input or output.

mod activity_log;
pub mod artifact_url;
pub mod artifacts;
pub mod bmc;
pub mod catalog_source;
pub mod deps;
pub mod error;
pub mod heartbeat;
pub mod host;
pub mod live_site;
pub mod release_retry;
pub mod site;
pub mod stopping;
pub mod tunables;

pub use host::{
    activation, activation_preflight, approval, firmware, freeze_hold, host_model, host_state, install_plan, inventory,
    liveness, platform, reset_types, routes, running_task, scout_package, script, script_lock, upload_slot,
};
pub use site::{compliance_read, crawl, manager_pass, notifier, repair, site_link, site_view, site_view_cache};

pub use catalog_source::CatalogSource;
pub use deps::{ActivitySettings, Deps};
pub use host::registry::HostActivitiesImpl;
pub use live_site::LiveSite;
pub use site::registry::SiteActivitiesImpl;
