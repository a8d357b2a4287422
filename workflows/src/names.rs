//! Every wire name, in one list: workflow types and IDs, activity names, signals, queries and
//! search attributes. The `#[run]`, `#[activity]`, `#[signal]` and `#[query]` attributes of the
//! workflows and contracts name these constants, so a name is written once.
//!
//! These strings are recorded in every workflow history. Renaming one breaks running and recorded
//! workflows, so treat them like a database schema: add, never rename.

// --- Workflow types and IDs -------------------------------------------------------------------

/// Workflow type of the per-host firmware reprovisioning.
pub const HOST_REPROVISION_WORKFLOW: &str = "HostReprovision";
/// Prefix of the per-host workflow ID (`host-reprovision/<machine-id>`).
pub const HOST_REPROVISION_ID_PREFIX: &str = "host-reprovision/";
/// Workflow type of the site scheduler (one per site).
pub const MACHINE_UPDATE_MANAGER_WORKFLOW: &str = "MachineUpdateManager";
/// Workflow ID of the site scheduler: one per namespace and task queue.
pub const MACHINE_UPDATE_MANAGER_ID: &str = "machine-update-manager";
/// Workflow type of the periodic inventory crawl (one per site).
pub const SITE_EXPLORER_WORKFLOW: &str = "SiteExplorer";
/// Workflow ID of the periodic inventory crawl.
pub const SITE_EXPLORER_ID: &str = "site-explorer";
/// Workflow type of the webhook notifier (one per site).
pub const SITE_NOTIFIER_WORKFLOW: &str = "SiteNotifier";
/// Workflow ID of the webhook notifier.
pub const SITE_NOTIFIER_ID: &str = "site-notifier";

// --- Activities of the host workflow ----------------------------------------------------------

/// Protect the host before any update (state, health report, request started).
pub const ACT_PROTECT: &str = "hostfw.host.protect";
/// Read the host's Redfish inventory and store the report.
pub const ACT_REFRESH_INVENTORY: &str = "hostfw.host.refresh_inventory";
/// Record the substates no activity carried (a local activity).
pub const ACT_RECORD_SUBSTATES: &str = "hostfw.host.record_substates";
/// Catalog lookup and route choice in one step (a local activity).
pub const ACT_PLAN_INSTALL: &str = "hostfw.host.plan_install";
/// Precheck and upload one firmware artifact over Redfish.
pub const ACT_UPLOAD: &str = "hostfw.firmware.upload";
/// Follow a Redfish update task to its end.
pub const ACT_WAIT_TASK: &str = "hostfw.firmware.wait_task";
/// One activation step (system or manager reset, power off/on, AC power cycle).
pub const ACT_ACTIVATE: &str = "hostfw.host.activate";
/// Read what an activation plan's resets need from the BMC before its first power action.
pub const ACT_ACTIVATION_PREFLIGHT: &str = "hostfw.host.activation_preflight";
/// Restore the host after the loop (state, request, health report).
pub const ACT_RESTORE: &str = "hostfw.host.restore";
/// Persist the retry count of the host's request.
pub const ACT_RECORD_RETRY: &str = "hostfw.host.record_retry";
/// Run a Core-local script on the worker.
pub const ACT_RUN_SCRIPT: &str = "hostfw.firmware.run_script";
/// A platform step of an assigned host (lockdown, discovery boot, boot back).
pub const ACT_PLATFORM: &str = "hostfw.host.platform";
/// The current retry budget and interval.
pub const ACT_RETRY_LIMITS: &str = "hostfw.host.retry_limits";
/// The stored approval and the current autoreboot period.
pub const ACT_APPROVAL_INPUTS: &str = "hostfw.host.approval_inputs";
pub const ACT_FREEZE_HOLD: &str = "hostfw.host.freeze_hold";
/// An assigned host's approval deadline passed: hold it (`skip`) or record it as overdue.
pub const ACT_APPROVAL_DEADLINE: &str = "hostfw.host.approval_deadline";
/// Scout's one activity, on the host's own task queue: download, verify and run a package.
pub const ACT_SCOUT_RUN_UPGRADE: &str = "hostfw.scout.run_upgrade";

// --- Activities of the site workflows ---------------------------------------------------------

/// One scheduler pass (gates, ceiling, requests, workflow starts).
pub const ACT_MANAGER_PASS: &str = "hostfw.manager.pass";
/// Explore BMCs and store their reports.
pub const ACT_EXPLORER_CRAWL: &str = "hostfw.explorer.crawl";
/// One delivery round of the webhook notifier (claim due deliveries, POST, record).
pub const ACT_NOTIFIER_ROUND: &str = "hostfw.notifier.round";

// --- Signals ----------------------------------------------------------------------------------

/// Host workflow: the operator finished the manual upgrade procedure.
pub const SIGNAL_MARK_MANUAL_UPGRADE_COMPLETE: &str = "mark_manual_upgrade_complete";
/// Host workflow: the tenant approved the reboot.
pub const SIGNAL_APPROVE_UPDATES: &str = "approve_updates";
/// Host workflow: reset the retry count of a failed host and retry now.
pub const SIGNAL_RESET_REPROVISIONING: &str = "reset_reprovisioning";
/// Host workflow: the worker's settings changed (retry budget, autoreboot period); read them again.
pub const SIGNAL_SETTINGS_CHANGED: &str = "settings_changed";
/// Host workflow: the request was cleared before the update started.
pub const SIGNAL_CANCEL_REQUEST: &str = "cancel_request";
/// `host reprovision abort`: stop the update at its next safe point and restore the host (issue 27).
pub const SIGNAL_ABORT: &str = "abort";
/// Both site workflows: run now (a host finished, a window opened, the catalog changed, ...).
pub const SIGNAL_WAKE: &str = "wake";
/// Site Explorer: explore one BMC now.
pub const SIGNAL_RE_EXPLORE: &str = "re_explore";

// --- Queries ----------------------------------------------------------------------------------

/// Every workflow of hostfw: its current status.
pub const QUERY_STATUS: &str = "status";

// --- Search attributes (all of type Keyword; see `search_attributes`) --------------------------

/// Machine id of the host a workflow works on.
pub const SA_MACHINE_ID: &str = "HostfwMachineId";
/// Current substate, with the seed's names.
pub const SA_SUBSTATE: &str = "HostfwSubstate";
/// Host vendor as reported by the BMC.
pub const SA_VENDOR: &str = "HostfwVendor";
/// Host model as reported by the BMC.
pub const SA_MODEL: &str = "HostfwModel";
/// Component being installed, when one is.
pub const SA_COMPONENT: &str = "HostfwComponent";
/// Search attribute: the host's retry budget is spent (Bool; absent or false otherwise).
pub const SA_RETRIES_EXHAUSTED: &str = "HostfwRetriesExhausted";
/// Search attribute: an assigned host still waits for approval after its deadline (`escalate`).
pub const SA_APPROVAL_OVERDUE: &str = "HostfwApprovalOverdue";
