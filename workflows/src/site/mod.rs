//! The two site workflows, one each per site: the `MachineUpdateManager` (the scheduler that
//! releases hosts under the site's limits and windows) and the `SiteExplorer` (the periodic
//! Redfish inventory crawl), with the contracts of their activities.
//!
//! Workflow code only, like `crate::host`: it decides, activities act.

pub mod contracts;
pub mod machine_update_manager;
pub mod site_explorer;
