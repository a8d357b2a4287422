//! Stable wire names: workflow types, activity names, ID prefixes.
//!
//! These strings are recorded in every workflow history. Renaming one breaks running and recorded
//! workflows, so treat them like a database schema: add, never rename.

/// Workflow type of the per-host firmware reprovisioning.
pub const HOST_REPROVISION_WORKFLOW: &str = "HostReprovision";
/// Prefix of the per-host workflow ID (`host-reprovision/<machine-id>`).
pub const HOST_REPROVISION_ID_PREFIX: &str = "host-reprovision/";

/// Activity: protect the host before any update (state, health report, request started).
pub const ACT_PROTECT: &str = "hostfw.host.protect";
/// Activity: record a substate transition in the site database.
pub const ACT_RECORD_SUBSTATE: &str = "hostfw.host.record_substate";
/// Activity: read the host's Redfish inventory and store the report.
pub const ACT_REFRESH_INVENTORY: &str = "hostfw.host.refresh_inventory";
/// Activity: look up the effective catalog entry for a vendor and model.
pub const ACT_CATALOG_LOOKUP: &str = "hostfw.catalog.lookup";
/// Activity: precheck and upload one firmware artifact over Redfish.
pub const ACT_UPLOAD: &str = "hostfw.firmware.upload";
/// Activity: follow a Redfish update task to its end.
pub const ACT_WAIT_TASK: &str = "hostfw.firmware.wait_task";
/// Activity: one activation step (system or manager reset, power off/on).
pub const ACT_ACTIVATE: &str = "hostfw.host.activate";
/// Activity: restore the host after the loop (state, request, health report).
pub const ACT_RESTORE: &str = "hostfw.host.restore";

/// Workflow type of the site scheduler (one per site).
pub const MACHINE_UPDATE_MANAGER_WORKFLOW: &str = "MachineUpdateManager";
/// Workflow ID of the site scheduler: one per namespace and task queue.
pub const MACHINE_UPDATE_MANAGER_ID: &str = "machine-update-manager";
/// Workflow type of the periodic inventory crawl (one per site).
pub const SITE_EXPLORER_WORKFLOW: &str = "SiteExplorer";
/// Workflow ID of the periodic inventory crawl.
pub const SITE_EXPLORER_ID: &str = "site-explorer";
/// Activity: one scheduler pass (gates, ceiling, requests, workflow starts).
pub const ACT_MANAGER_PASS: &str = "hostfw.manager.pass";
/// Activity: explore BMCs and store their reports.
pub const ACT_EXPLORER_CRAWL: &str = "hostfw.explorer.crawl";
/// Signal of both site workflows: run now (a host finished, a window opened, the catalog changed, ...).
pub const SIGNAL_WAKE: &str = "wake";
/// Signal of the Site Explorer: explore one BMC now.
pub const SIGNAL_RE_EXPLORE: &str = "re_explore";
