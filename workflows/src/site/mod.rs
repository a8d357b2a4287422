//! The site workflows, one each per site: the `MachineUpdateManager` (the scheduler that
//! releases hosts under the site's limits and windows), the `SiteExplorer` (the periodic
//! Redfish inventory crawl) and the `SiteNotifier` (webhook deliveries), with the contracts of
//! their activities.
//!
//! Workflow code only, like `crate::host`: it decides, activities act.

pub mod contracts;
pub mod machine_update_manager;
pub mod manager_details;
pub mod site_explorer;
pub mod site_notifier;
