//! Activity contracts: the names, inputs and outputs of every activity the workflows call.
//!
//! Only declarations live here (`#[activity_definitions]`, bodies `unimplemented!()`); the
//! implementations are in `hostfw-activities`, which registers them on the worker. Inputs carry
//! machine ids, never BMC credentials: activities resolve credentials themselves.

use hostfw_model::{ComponentType, FirmwareEntry, HostModel, HostState, HostSubstate, InventoryReport, Matcher};
use serde::{Deserialize, Serialize};
use temporalio_common::ActivityError;
use temporalio_macros::activity_definitions;

use crate::scout::ScoutTask;

/// Input of `hostfw.host.protect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectInput {
    pub machine_id: String,
    /// Who asked: `AdminCli`, `Automated`, ...
    pub initiator: String,
    /// How an assigned host's update was approved (`approved by …`, `inside the instance
    /// autoreboot period …`), recorded with the start; absent for unassigned hosts and in inputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
}

/// What the workflow needs to know about the host, read once when it is protected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostContext {
    pub machine_id: String,
    pub bmc_address: String,
    /// Lifecycle state before the update (`Ready`, `Assigned`): restored at the end.
    pub prior_state: HostState,
    /// The request was cleared (`host reprovision clear`) before protect could mark it started:
    /// nothing was changed and the workflow ends without updating.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleared: bool,
}

/// One substate record, carried by the next activity (`records`) or written by
/// `hostfw.host.record_substates`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubstateUpdate {
    pub machine_id: String,
    /// Top-level state to record (`HostReprovision`, or `Assigned` while waiting for approval).
    pub state: HostState,
    pub substate: HostSubstate,
    pub message: String,
    /// The component being worked on and its target version, for the worker's log line (absent in
    /// inputs recorded before they were added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_version: Option<String>,
}

/// Input of `hostfw.host.refresh_inventory`: the machine, and the substate records to write
/// first. On the wire it is the bare machine id when there are no records (inputs recorded
/// before the records were added are bare ids too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "InventoryReadWire", into = "InventoryReadWire")]
pub struct InventoryRead {
    pub machine_id: String,
    pub records: Vec<SubstateUpdate>,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum InventoryReadWire {
    Id(String),
    WithRecords { machine_id: String, records: Vec<SubstateUpdate> },
}

impl From<InventoryReadWire> for InventoryRead {
    fn from(wire: InventoryReadWire) -> Self {
        match wire {
            InventoryReadWire::Id(machine_id) => InventoryRead { machine_id, records: Vec::new() },
            InventoryReadWire::WithRecords { machine_id, records } => InventoryRead { machine_id, records },
        }
    }
}

impl From<InventoryRead> for InventoryReadWire {
    fn from(read: InventoryRead) -> Self {
        if read.records.is_empty() {
            InventoryReadWire::Id(read.machine_id)
        } else {
            InventoryReadWire::WithRecords { machine_id: read.machine_id, records: read.records }
        }
    }
}

impl From<String> for InventoryRead {
    fn from(machine_id: String) -> Self {
        InventoryRead { machine_id, records: Vec::new() }
    }
}

/// Input of `hostfw.host.plan_install` (a local activity): the catalog lookup and the route
/// choice of the component the selection rules pick, in one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallPlanQuery {
    pub machine_id: String,
    /// The inventory the selection works on (its vendor and model find the catalog entry).
    pub report: InventoryReport,
}

/// Output of `hostfw.host.plan_install`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallPlan {
    /// The effective catalog entry of the report's vendor and model, if any.
    pub model: Option<HostModel>,
    /// The route of the component `select_with(model, report, UnmatchedRule::Skip)` picks, when
    /// it picks one to install.
    pub route: Option<PlannedRoute>,
}

/// The installation route planned for one component at one target version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRoute {
    pub component: ComponentType,
    pub target_version: String,
    /// The route, or why none can be used (a Scout package without metadata, an artifact that
    /// cannot be served): the attempt fails with that reason.
    pub route: Result<InstallRoute, String>,
}

/// "Already at target?" check done inside an install activity before it changes anything, so a
/// retried or replayed step is a no-op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Precheck {
    pub matcher: Matcher,
    pub target_version: String,
}

/// Input of `hostfw.firmware.upload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadInput {
    pub machine_id: String,
    pub component: ComponentType,
    pub target_version: String,
    /// Catalog path of the artifact to upload.
    pub artifact: String,
    /// Position of the artifact in a multi-artifact entry (0-based) and their count.
    pub artifact_index: u32,
    pub artifact_count: u32,
    /// Pass the component to the BMC as the only update target (`install_only_specified`).
    pub install_only_specified: bool,
    /// Checked before the first artifact only.
    pub precheck: Option<Precheck>,
    /// Substate records the workflow entered since its last activity, written by this activity
    /// before its work (deferred bookkeeping: no activity of their own). Absent in inputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<SubstateUpdate>,
}

/// A site-wide upload slot held from the upload until the BMC's task ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotLease {
    pub slot: u32,
    pub holder: String,
    /// The grant's fencing token (`hostfw_store::SlotGrant`); 0 in leases recorded before it.
    #[serde(default)]
    pub generation: i64,
}

/// Where to follow a Redfish update task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskHandle {
    pub monitor_uri: String,
    pub task_uri: Option<String>,
    /// The upload slot this transfer holds; the task wait renews and releases it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<SlotLease>,
}

/// Output of `hostfw.firmware.upload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum UploadResult {
    /// The precheck found every matching inventory entry already at the target: nothing sent.
    AlreadyAtTarget,
    /// The BMC accepted the image through `route`; follow `task` when it returned one.
    Accepted { route: String, task: Option<TaskHandle> },
    /// (Single-artifact entries.) The BMC already holds the target staged for every matching
    /// entry that is not running it (an earlier attempt's upload that its worker never saw
    /// finish): nothing sent; it only needs its activation.
    AlreadyStaged,
}

/// Input of `hostfw.firmware.wait_task`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitTaskInput {
    pub machine_id: String,
    pub task: TaskHandle,
    /// Substate records the workflow entered since its last activity, written by this activity
    /// before its work (deferred bookkeeping: no activity of their own). Absent in inputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<SubstateUpdate>,
}

/// Output of `hostfw.firmware.wait_task`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "TaskResultWire")]
pub struct TaskResult {
    pub succeeded: bool,
    /// Final TaskState as the BMC reported it (`Completed`, `Exception`, ...), for messages.
    pub state: String,
    /// The BMC's messages, `MessageId: text`.
    pub messages: Vec<String>,
    /// The task disappeared (404 from its monitor) before a final state was read: the workflow
    /// then asks the inventory whether the image was applied.
    pub vanished: bool,
}

/// `TaskResult` as recorded: results recorded before `vanished` existed said so only in `state`
/// (the text `Unknown("vanished")`); decoding them keeps their meaning, so their histories replay.
#[derive(Deserialize)]
struct TaskResultWire {
    succeeded: bool,
    state: String,
    messages: Vec<String>,
    #[serde(default)]
    vanished: Option<bool>,
}

#[cfg(test)]
mod task_result_tests {
    use super::TaskResult;

    #[test]
    fn a_result_recorded_before_the_typed_field_keeps_its_vanished_meaning() {
        let old: TaskResult =
            serde_json::from_str(r#"{"succeeded":false,"state":"Unknown(\"vanished\")","messages":[]}"#).unwrap();
        assert!(old.vanished);
        let failed: TaskResult =
            serde_json::from_str(r#"{"succeeded":false,"state":"Exception","messages":["x"]}"#).unwrap();
        assert!(!failed.vanished);
        let new = TaskResult { succeeded: false, state: "vanished".into(), messages: vec![], vanished: true };
        let back: TaskResult = serde_json::from_str(&serde_json::to_string(&new).unwrap()).unwrap();
        assert_eq!(back, new);
    }
}

impl From<TaskResultWire> for TaskResult {
    fn from(w: TaskResultWire) -> TaskResult {
        let vanished = w.vanished.unwrap_or(!w.succeeded && w.state == r#"Unknown("vanished")"#);
        TaskResult { succeeded: w.succeeded, state: w.state, messages: w.messages, vanished }
    }
}

/// One activation step, decided by [`crate::host::activation`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActivationStep {
    /// `ComputerSystem.Reset` with this ResetType, then wait until the BMC answers.
    SystemReset { reset_type: String },
    /// `Manager.Reset` with this ResetType, then wait for `healthy_reads` consecutive good reads.
    ManagerReset { reset_type: String, healthy_reads: u32 },
    /// `ComputerSystem.Reset` ForceOff, then wait until the host reports Off.
    PowerOff,
    /// `ComputerSystem.Reset` On, then wait until the host reports On.
    PowerOn,
    /// An AC power cycle (power drain) through the chassis, then wait until the BMC answers.
    AcPowerCycle,
}

/// Input of `hostfw.host.activate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivateInput {
    pub machine_id: String,
    pub step: ActivationStep,
    /// The waits the step runs with: the ones its activity timeout was derived from.
    #[serde(default)]
    pub waits: crate::waits::BmcWaits,
    /// Substate records the workflow entered since its last activity, written by this activity
    /// before its work (deferred bookkeeping: no activity of their own). Absent in inputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<SubstateUpdate>,
}

/// Input of `hostfw.host.activation_preflight`: the steps of one activation plan, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightInput {
    pub machine_id: String,
    pub steps: Vec<ActivationStep>,
    /// The waits the plan's steps run with (the preflight uses the request timeout).
    #[serde(default)]
    pub waits: crate::waits::BmcWaits,
    /// Substate records the workflow entered since its last activity, written by this activity
    /// before its work (deferred bookkeeping: no activity of their own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<SubstateUpdate>,
}

/// `host reprovision abort` (the `abort` signal's payload): who, why, and whether the host is left
/// in maintenance for hands-on repair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortOrder {
    /// The audit actor who asked.
    pub by: String,
    pub reason: String,
    /// Leave the host in maintenance, marked for repair (a dead BMC), instead of its prior state.
    #[serde(default)]
    pub to_maintenance: bool,
}

/// Input of `hostfw.host.restore`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreInput {
    pub machine_id: String,
    /// State to return the host to (its prior steady state).
    pub state: HostState,
    pub message: String,
    /// The run ends by an abort: the restore records what was and was not flashed and, with
    /// `to_maintenance`, leaves the host in maintenance marked for repair (`state` is then
    /// `Maintenance`). Absent in inputs recorded before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<AbortOrder>,
    /// Substate records the workflow entered since its last activity, written by this activity
    /// before its work (deferred bookkeeping: no activity of their own). Absent in inputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<SubstateUpdate>,
}

/// Input of `hostfw.host.record_retry`: the persisted retry count of the host's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryRecord {
    pub machine_id: String,
    /// Retries used so far (0 after a reset).
    pub retry_count: u32,
    /// The budget is spent: the host stays failed until reset.
    pub exhausted: bool,
    pub message: String,
    /// The component being worked on and its target version, for the worker's log line (absent in
    /// inputs recorded before they were added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_version: Option<String>,
}

/// What the route of one component is chosen from (inside `hostfw.host.plan_install`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteQuery {
    pub machine_id: String,
    pub vendor: String,
    pub model: String,
    pub component: ComponentType,
    pub target_version: String,
    pub entry: FirmwareEntry,
}

/// How a component is installed (seed "Installation route", in precedence order).
// A wire type decoded once per install step: the Scout variant's size (it carries the signed
// manifest) costs nothing worth a Box in every match of the workflow code.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum InstallRoute {
    /// A packaged Scout script exists for the vendor, model and component.
    Scout(ScoutTask),
    /// The catalog entry names a Core-local script (run on the worker).
    Script { script: String },
    /// Upload over Redfish.
    Redfish,
}

/// Input of `hostfw.firmware.run_script`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptInput {
    pub machine_id: String,
    /// Catalog path of the script (relative to the firmware directory).
    pub script: String,
    pub component: ComponentType,
    pub target_version: String,
    pub timeout_secs: u64,
}

/// Output of `hostfw.firmware.run_script`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptResult {
    pub success: bool,
    pub exit_code: Option<i32>,
    /// Tails of the script's output, BMC password scrubbed.
    pub stdout: String,
    pub stderr: String,
    pub error: Option<String>,
}

/// A platform step around the update of an assigned host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlatformStep {
    /// Enable or disable platform lockdown.
    Lockdown { enabled: bool },
    /// Boot the host into the discovery environment (PXE once, restart, wait until up).
    DiscoveryBoot,
    /// Boot the host back into its own OS (restart, wait until up).
    BootToOs,
}

/// Input of `hostfw.host.platform`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformInput {
    pub machine_id: String,
    pub step: PlatformStep,
    /// The waits the step runs with: the ones its activity timeout was derived from.
    #[serde(default)]
    pub waits: crate::waits::BmcWaits,
    /// Substate records the workflow entered since its last activity, written by this activity
    /// before its work (deferred bookkeeping: no activity of their own). Absent in inputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<SubstateUpdate>,
}

/// Output of `hostfw.host.approval_inputs`: what an assigned host's wait for approval reads each
/// time it wakes, from the site database and the worker's current site config (not frozen into
/// the workflow's input).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalInputs {
    /// The request records the tenant's approval (`instance reboot --apply-updates-on-reboot`),
    /// even if its signal never reached the workflow.
    pub approved: bool,
    /// The site's `instance_autoreboot_period` as configured now.
    pub autoreboot_period: Option<crate::host::settings::TimeWindow>,
    /// The request's approval deadline under the site config now (`machine_updater.approval_deadline`,
    /// counted from the request) and its policy; `None` without a deadline. Absent in outputs
    /// recorded before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<ApprovalDeadlineNow>,
}

/// An approval deadline as the wait sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalDeadlineNow {
    pub at_ms: i64,
    pub policy: hostfw_model::gates::DeadlinePolicy,
}

/// Input of `hostfw.host.approval_deadline`: an assigned host's approval deadline passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalDeadlinePassed {
    pub machine_id: String,
    pub deadline: ApprovalDeadlineNow,
}

/// Output of `hostfw.host.approval_deadline`: what was recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalDeadlineRecord {
    /// The operator line (history, status).
    pub message: String,
    /// `skip`: the host is held until then (its next window).
    pub held_until_ms: Option<i64>,
    /// `skip`: the tenant's approval was on record first (it raced the deadline and won), so the
    /// request was not given up: the update goes on. (Absent in records of older workers.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved_first: bool,
}

/// Output of `hostfw.host.retry_limits`: the retry budget and interval of the worker's current
/// site config (not frozen into the workflow's input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryLimits {
    pub max_retries: u32,
    pub retry_interval_secs: u64,
}

/// Output of `hostfw.host.freeze_hold` (a local activity): the freeze an in-flight host holds
/// for before its next component (`gates::holding`: a covering freeze set without `drain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreezeHold {
    pub id: i64,
    /// `site`, `model=...` or `label=...`.
    pub scope: String,
    pub by: String,
    pub reason: String,
}

/// The activities of host reprovisioning, as the workflow sees them.
pub struct HostActivities;

#[activity_definitions]
impl HostActivities {
    /// Health report `host-fw-update`, state `HostReprovision`, request marked started.
    #[activity(name = crate::names::ACT_PROTECT)]
    pub fn protect(input: ProtectInput) -> Result<HostContext, ActivityError> {
        unimplemented!()
    }

    /// Explore the BMC (Redfish inventory crawl) and store the report, after writing the records
    /// it carries.
    #[activity(name = crate::names::ACT_REFRESH_INVENTORY)]
    pub fn refresh_inventory(input: InventoryRead) -> Result<InventoryReport, ActivityError> {
        unimplemented!()
    }

    /// Record substates (and their history entries) in order: the deferred records that no
    /// activity carried (before a timer or a wait). Run as a local activity.
    #[activity(name = crate::names::ACT_RECORD_SUBSTATES)]
    pub fn record_substates(records: Vec<SubstateUpdate>) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// The catalog lookup and the route of the next component, in one step. Run as a local
    /// activity.
    #[activity(name = crate::names::ACT_PLAN_INSTALL)]
    pub fn plan_install(input: InstallPlanQuery) -> Result<InstallPlan, ActivityError> {
        unimplemented!()
    }

    /// Whether a freeze holds the host before its next component (issue 27). Run as a local
    /// activity.
    #[activity(name = crate::names::ACT_FREEZE_HOLD)]
    pub fn freeze_hold(machine_id: String) -> Result<Option<FreezeHold>, ActivityError> {
        unimplemented!()
    }

    /// Precheck, then upload one artifact over Redfish.
    #[activity(name = crate::names::ACT_UPLOAD)]
    pub fn upload(input: UploadInput) -> Result<UploadResult, ActivityError> {
        unimplemented!()
    }

    /// Follow a Redfish task to its end, heartbeating its progress.
    #[activity(name = crate::names::ACT_WAIT_TASK)]
    pub fn wait_task(input: WaitTaskInput) -> Result<TaskResult, ActivityError> {
        unimplemented!()
    }

    /// One activation step (reset), waiting until the BMC is reachable again.
    #[activity(name = crate::names::ACT_ACTIVATE)]
    pub fn activate(input: ActivateInput) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// Before the first power action of a plan of several steps: read from the BMC whether it
    /// allows every reset the plan sends (each step's ResetTypes, the model's `ac_cycle` action).
    /// Sends nothing; a plan it would refuse fails here (`BmcRejected`, naming what is missing).
    #[activity(name = crate::names::ACT_ACTIVATION_PREFLIGHT)]
    pub fn activation_preflight(input: PreflightInput) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// Return the host to its steady state, clear the request, remove the health report.
    #[activity(name = crate::names::ACT_RESTORE)]
    pub fn restore(input: RestoreInput) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// Persist the retry count of the host's request.
    #[activity(name = crate::names::ACT_RECORD_RETRY)]
    pub fn record_retry(input: RetryRecord) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// Run a Core-local script with the BMC address and credentials in its environment.
    #[activity(name = crate::names::ACT_RUN_SCRIPT)]
    pub fn run_script(input: ScriptInput) -> Result<ScriptResult, ActivityError> {
        unimplemented!()
    }

    /// A platform step of an assigned host: lockdown, discovery boot, boot back to the OS.
    #[activity(name = crate::names::ACT_PLATFORM)]
    pub fn platform(input: PlatformInput) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// The current retry budget and interval. Input: machine id.
    #[activity(name = crate::names::ACT_RETRY_LIMITS)]
    pub fn retry_limits(machine_id: String) -> Result<RetryLimits, ActivityError> {
        unimplemented!()
    }

    /// The stored approval and the current autoreboot period. Input: machine id.
    #[activity(name = crate::names::ACT_APPROVAL_INPUTS)]
    pub fn approval_inputs(machine_id: String) -> Result<ApprovalInputs, ActivityError> {
        unimplemented!()
    }

    /// An assigned host's approval deadline passed: `skip` holds the host until its next window
    /// (the workflow then gives the request up), `escalate` records it as overdue.
    #[activity(name = crate::names::ACT_APPROVAL_DEADLINE)]
    pub fn approval_deadline(input: ApprovalDeadlinePassed) -> Result<ApprovalDeadlineRecord, ActivityError> {
        unimplemented!()
    }
}

/// Markers of the activities above, for `#[activity(definition = ...)]` in other crates.
pub mod defs {
    pub use super::host_activities::*;
}
