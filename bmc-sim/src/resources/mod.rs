//! The Redfish resources of the generic (non-profile) BMC shape: the ServiceRoot
//! (`service_root`), the Systems, Managers and FirmwareInventory (`inventory`), the Chassis
//! (`chassis`), `$expand` (`expand`), PATCH of the System (`system_patch`) and every fixed URI
//! (`uris`). Reads and writes host state; it must not run updates, tasks or power transitions
//! (`update`, `tasks`, `power`) nor serve a captured tree (`profile`).

pub mod chassis;
pub mod expand;
pub mod inventory;
pub mod service_root;
pub mod system_patch;
pub mod uris;
