//! The tables of the site config file and their defaults (NICo key names where NICo has the key).
//!
//! Owns field names, types and default values only. It must not read files, resolve paths or check
//! cross-field rules (see `config::mod` and `config::validate`).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Secret, TimeWindow};

/// `[site]` (required).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteSection {
    /// Site name (required).
    pub name: String,
    /// `sqlite://...` (relative paths resolved against the config file's directory) or
    /// `postgres://...` (kept verbatim). Default `sqlite://data/hostfw.db`.
    #[serde(default = "default_database_url")]
    pub database_url: String,
    /// A file holding the PostgreSQL password (e.g. a Docker secret), resolved against the config
    /// file's directory and put into `database_url` (which then names the user but no password)
    /// when the config loads. Trailing line breaks are not part of the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_password_file: Option<PathBuf>,
    /// Local state directory, resolved against the config file's directory. Default `data`.
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// File holding the site key (base64 of 32 random bytes; `hostfw site-key generate --out FILE`)
    /// that encrypts BMC passwords at rest and signs artifact URLs; resolved against the config
    /// file's directory. The environment variables `HOSTFW_SITE_KEY` (the key, base64) and
    /// `HOSTFW_SITE_KEY_FILE` override it. Without any key, stored plaintext passwords are
    /// still read but new ones are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_file: Option<PathBuf>,
}

fn default_database_url() -> String {
    "sqlite://data/hostfw.db".to_string()
}

fn default_data_dir() -> PathBuf {
    PathBuf::from("data")
}

/// `[temporal]`: where the Temporal frontend is and which namespace / task queue we use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TemporalSection {
    pub address: String,
    pub namespace: String,
    pub task_queue: String,
}

impl Default for TemporalSection {
    fn default() -> Self {
        TemporalSection {
            address: "http://127.0.0.1:7233".to_string(),
            namespace: "default".to_string(),
            task_queue: "hostfw".to_string(),
        }
    }
}

/// `[worker]`: the worker's own listeners.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkerSection {
    /// Prometheus `/metrics` listener, `host:port` (checked for that shape at load).
    pub metrics_listen: String,
    /// Listener serving firmware artifacts to BMCs (SimpleUpdate route), `host:port`.
    pub artifact_listen: String,
    /// Base URL BMCs use to fetch artifacts (SimpleUpdate `ImageURI`); stored without a trailing `/`.
    pub artifact_base_url: String,
    /// How long a signed artifact URL (SimpleUpdate `ImageURI`, Scout script and artifact URLs)
    /// stays valid after it is minted. Must cover the BMC's whole fetch (`[redfish] task_timeout`)
    /// and a Scout task's wait in its queue plus its download. Default 6h.
    #[serde(with = "crate::duration::serde_duration")]
    pub artifact_url_lifetime: Duration,
    /// Start the site workflows (Machine Update Manager, Site Explorer) if they are not running.
    /// Every worker may do so (the workflow IDs make them singletons); turn it off for a worker
    /// that must only serve host workflows.
    pub site_workflows: bool,
    /// The newest workflow change (its number in `hostfw_workflows::versions`) this worker may
    /// activate in a run; later changes of its build keep their old behaviour until it is raised
    /// or removed (absent: every change of the build). Set to the running build's number while
    /// rolling workers to a new build (docs/deploy.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_changes_through: Option<u32>,
}

impl Default for WorkerSection {
    fn default() -> Self {
        WorkerSection {
            metrics_listen: "127.0.0.1:9464".to_string(),
            artifact_listen: "127.0.0.1:8089".to_string(),
            artifact_base_url: "http://127.0.0.1:8089".to_string(),
            artifact_url_lifetime: Duration::from_secs(6 * 3600),
            site_workflows: true,
            workflow_changes_through: None,
        }
    }
}

/// `[credentials]`: fallback BMC credentials for machines with none stored. Both or neither.
///
/// The password is a [`Secret`]: never serialized, redacted in `Debug`, so it cannot reach a
/// workflow payload or a log line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CredentialsSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_username: Option<String>,
    #[serde(skip_serializing)]
    pub default_password: Option<Secret>,
}

/// `[redfish]`: client timeouts, the reply-size bound and TLS trust of BMC certificates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedfishSection {
    /// Per HTTP request.
    #[serde(with = "crate::duration::serde_duration")]
    pub timeout: Duration,
    /// Whole upload task, from upload to the task's final state.
    #[serde(with = "crate::duration::serde_duration")]
    pub task_timeout: Duration,
    /// PEM file of CA certificates trusted for `https://` BMCs, on top of the built-in roots;
    /// resolved against the config file's directory. Absent = built-in roots only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<PathBuf>,
    /// The explicit per-site opt-out: do not verify BMC certificates at all (self-signed BMCs).
    /// Default false; the worker logs a warning when it is on.
    pub insecure_skip_verify: bool,
    /// Largest Redfish reply body read, in bytes (default 32 MiB, at least 1 MiB). Bodies are read
    /// incrementally and a bigger one fails the request (naming the BMC, URL and limit) instead
    /// of filling the worker's memory.
    pub max_response_bytes: u64,
    /// FirmwareInventory members read at once during an inventory crawl (default 4, 1..=32):
    /// real BMCs throttle, so a small bound; the report keeps the collection's order.
    pub inventory_concurrency: u32,
    /// Read the FirmwareInventory with `$expand` where the BMC's ServiceRoot advertises it
    /// (default true): one request for the whole inventory instead of one per member. False
    /// reads every member by itself (`inventory_concurrency` at a time), as before.
    pub expand: bool,
    /// Bound on following the Task a host reset answers with (default 5m; a captured DGX reset
    /// Task took 24 s). Part of every reset step's wait, so of its activity timeout.
    #[serde(with = "crate::duration::serde_duration")]
    pub reset_task_timeout: Duration,
}

/// Default `[redfish] inventory_concurrency`.
pub const DEFAULT_INVENTORY_CONCURRENCY: u32 = 4;
/// Largest accepted `[redfish] inventory_concurrency`: beyond this a BMC is flooded, not read.
pub const MAX_INVENTORY_CONCURRENCY: u32 = 32;
/// Hard cap of each wait inside one activation step (`[redfish] reset_task_timeout`,
/// `[host_reprovision] bmc_reachable_within`, `power_state_within`, `bmc_goes_down_within`):
/// a step is one activity attempt, whose timeout is derived from its waits; two hours per wait
/// is far beyond any BMC and keeps a typo (`10h`) from parking a host for a day per attempt.
pub const MAX_STEP_WAIT: Duration = Duration::from_secs(2 * 3600);
/// Hard cap of `[redfish] timeout` (one HTTP request): 10 minutes. Every wait is polled with
/// requests of this bound, so it is part of each activity timeout.
pub const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Hard cap of `[redfish] task_timeout` (a whole flash): one day.
pub const MAX_TASK_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// Default `[redfish] max_response_bytes`: 32 MiB, far above the largest document read (an
/// `$expand`ed FirmwareInventory of ~110 members is well under 1 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 32 * 1024 * 1024;

/// Smallest accepted `[redfish] max_response_bytes`: 1 MiB, so a misplaced digit cannot make
/// every ordinary inventory document fail.
pub const MIN_MAX_RESPONSE_BYTES: u64 = 1024 * 1024;

impl Default for RedfishSection {
    fn default() -> Self {
        RedfishSection {
            timeout: Duration::from_secs(30),
            task_timeout: Duration::from_secs(2 * 3600),
            ca_bundle: None,
            insecure_skip_verify: false,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            inventory_concurrency: DEFAULT_INVENTORY_CONCURRENCY,
            expand: true,
            reset_task_timeout: Duration::from_secs(5 * 60),
        }
    }
}

/// `[host_reprovision]`: hostfw's own timings for the per-host workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostReprovisionSection {
    /// Pause between inventory reads while waiting for the new version (NewFirmwareReportedWait).
    #[serde(with = "crate::duration::serde_duration")]
    pub verify_poll_interval: Duration,
    /// Inventory reads before verification gives up.
    pub verify_max_polls: u32,
    /// Pause between Redfish task monitor polls.
    #[serde(with = "crate::duration::serde_duration")]
    pub task_poll_interval: Duration,
    /// Consecutive healthy BMC reads required after a BMC reset.
    pub bmc_healthy_reads: u32,
    /// Retries after FailedFirmwareUpgrade before the host counts as exhausted (seed: five),
    /// for unassigned and assigned hosts alike.
    pub max_retries: u32,
    /// Activations repeated when the new version is not reported, before the attempt fails
    /// (NICo resets every 30 min forever).
    pub max_reactivations: u32,
    /// Upload attempts that failed transiently and went back to firmware checking, per component
    /// and attempt, before the attempt fails.
    pub max_upload_retries: u32,
    /// Bound on a Core-local (worker-local) script.
    #[serde(with = "crate::duration::serde_duration")]
    pub script_timeout: Duration,
    /// How long a rerun of a Core-local script waits for an earlier run of the same machine and
    /// component that is still running on this worker's host (orphaned by a worker that died)
    /// before it kills that run's process group. The wait also ends at the earlier run's own
    /// deadline (its start plus `script_timeout`). Default 30 min: a slow flash is let finish
    /// rather than cut off mid-write.
    #[serde(with = "crate::duration::serde_duration")]
    pub script_orphan_wait: Duration,
    /// Wait after the pre-update resets (NICo: 20 min) before firmware checking goes on.
    #[serde(with = "crate::duration::serde_duration")]
    pub pre_update_wait: Duration,
    /// Power-drain cycle waits: after ForceOff, after the AC power cycle, after On (NICo: 60/90/5 s).
    #[serde(with = "crate::duration::serde_duration")]
    pub power_drain_off_wait: Duration,
    #[serde(with = "crate::duration::serde_duration")]
    pub power_drain_cycle_wait: Duration,
    #[serde(with = "crate::duration::serde_duration")]
    pub power_drain_on_wait: Duration,
    /// Heartbeat timeout of long activities (uploads, task waits, resets, scripts, Scout): how
    /// soon the work of a worker that died moves to another worker.
    #[serde(with = "crate::duration::serde_duration")]
    pub heartbeat_timeout: Duration,
    /// Removed in 1.0 (every host workflow takes the one history shape): read only to refuse it
    /// with a message saying so (`validate`).
    #[serde(skip_serializing)]
    pub lean_history: Option<bool>,
    /// How long a reset may keep the BMC unreachable (and, after a BMC reset, not yet answering
    /// its healthy reads) before the activation step fails and is retried (default 10m).
    #[serde(with = "crate::duration::serde_duration")]
    pub bmc_reachable_within: Duration,
    /// How long a host may take to reach the wanted power state after a reset or power action
    /// (default 10m).
    #[serde(with = "crate::duration::serde_duration")]
    pub power_state_within: Duration,
    /// How long a BMC may keep answering after accepting Manager.Reset before it goes down; one
    /// that does not is taken to have reset faster than we could see (default 30s).
    #[serde(with = "crate::duration::serde_duration")]
    pub bmc_goes_down_within: Duration,
    /// How often a host waiting for its tenant's approval reads the stored approval again when
    /// nothing wakes it (default 1h): an approval whose signal was lost starts the host within it.
    #[serde(with = "crate::duration::serde_duration")]
    pub approval_recheck: Duration,
}

impl Default for HostReprovisionSection {
    fn default() -> Self {
        HostReprovisionSection {
            verify_poll_interval: Duration::from_secs(10),
            verify_max_polls: 60,
            task_poll_interval: Duration::from_secs(2),
            bmc_healthy_reads: 3,
            max_retries: 5,
            max_reactivations: 3,
            max_upload_retries: 3,
            script_timeout: Duration::from_secs(3600),
            script_orphan_wait: Duration::from_secs(30 * 60),
            pre_update_wait: Duration::from_secs(20 * 60),
            power_drain_off_wait: Duration::from_secs(60),
            power_drain_cycle_wait: Duration::from_secs(90),
            power_drain_on_wait: Duration::from_secs(5),
            heartbeat_timeout: Duration::from_secs(30),
            lean_history: None,
            bmc_reachable_within: Duration::from_secs(10 * 60),
            power_state_within: Duration::from_secs(10 * 60),
            bmc_goes_down_within: Duration::from_secs(30),
            approval_recheck: Duration::from_secs(3600),
        }
    }
}

/// `[firmware_global]` (NICo names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FirmwareGlobalSection {
    /// Site default of the per-machine auto-update policy.
    pub autoupdate: bool,
    /// Site-wide concurrent Redfish uploads (held for the whole upload, across workers).
    pub max_uploads: u32,
    /// Directory overlay of the catalog, resolved against the config file's directory; a missing
    /// directory means no overlay.
    pub firmware_directory: PathBuf,
    /// Wait in FailedFirmwareUpgrade before a retry.
    #[serde(with = "crate::duration::serde_duration")]
    pub host_firmware_upgrade_retry_interval: Duration,
    /// MNNVL-capable hosts pause in WaitingForManualUpgrade before component selection.
    pub requires_manual_upgrade: bool,
    /// true: automatic selection only picks unassigned Ready hosts.
    pub instance_updates_manual_tagging: bool,
    /// Legacy; not read by the scheduler (kept so NICo configs load).
    pub host_enable_autoupdate: Vec<String>,
    /// Legacy: machine ids never auto-selected.
    pub host_disable_autoupdate: Vec<String>,
    /// Wait after an HGX BMC reset before the GPUs are expected back.
    #[serde(with = "crate::duration::serde_duration")]
    pub hgx_bmc_gpu_reboot_delay: Duration,
    /// Packaged Scout scripts, `<dir>/<vendor>/<model>/<component>/upgrade.sh` with a sibling
    /// `metadata.toml`; resolved against the config file's directory; absent = no Scout route.
    pub scout_scripts_directory: PathBuf,
    /// Two-person rule for the runtime catalog layer: a change (`firmware-config set`, `unset`,
    /// `rollback`) waits as a pending change until an actor other than its proposer approves it.
    pub require_second_admin: bool,
}

impl Default for FirmwareGlobalSection {
    fn default() -> Self {
        FirmwareGlobalSection {
            autoupdate: true,
            max_uploads: 4,
            firmware_directory: PathBuf::from("firmware"),
            host_firmware_upgrade_retry_interval: Duration::from_secs(60 * 60),
            requires_manual_upgrade: false,
            instance_updates_manual_tagging: true,
            host_enable_autoupdate: Vec::new(),
            host_disable_autoupdate: Vec::new(),
            hgx_bmc_gpu_reboot_delay: Duration::from_secs(30),
            scout_scripts_directory: PathBuf::from("scout-firmware-scripts"),
            require_second_admin: false,
        }
    }
}

/// `[machine_updater]`: the site scheduler (Machine Update Manager).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MachineUpdaterSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrent_machine_updates_absolute: Option<u32>,
    /// 1..=100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrent_machine_updates_percent: Option<u32>,
    #[serde(with = "crate::duration::serde_duration")]
    pub machine_update_run_interval: Duration,
    /// Site-level window in which assigned hosts consume pending requests without tenant approval:
    /// `{ start = "<RFC 3339>", end = "<RFC 3339>" }`, parsed when the config loads.
    #[serde(default, with = "crate::window::config_text", skip_serializing_if = "Option::is_none")]
    pub instance_autoreboot_period: Option<TimeWindow>,
    /// hostfw: also run a pass at once when a host workflow ends, a window opens or the catalog
    /// changes (default). `false` is NICo's policy: a pass only every run interval (kept for
    /// comparison, e.g. by the benchmarks).
    pub event_driven: bool,
    /// Failure-domain caps: label key → at most this many hosts sharing one value of it are
    /// updating (or in maintenance) at once, beneath the site ceiling, e.g. `{ rack = 1 }`.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub max_concurrent_per_label: std::collections::BTreeMap<String, u32>,
    /// Error budget per rollout target (model, component, version): pause it once this many of
    /// the hosts that attempted it failed (0: no count rule).
    pub error_budget_failed_hosts: u32,
    /// ...or once this percentage of them failed (0: no percentage rule)...
    pub error_budget_failed_percent: u32,
    /// ...with at least this many hosts attempted.
    pub error_budget_min_hosts: u32,
    /// Canary waves per rollout target: cumulative wave sizes, a host count (`"1"`) or a share
    /// of the target's hosts (`"10%"`), ending with `"100%"`; `[]` turns waves off.
    pub canary_waves: Vec<crate::gates::WaveSize>,
    /// How long after a wave's last host finished the next wave opens.
    #[serde(with = "crate::duration::serde_duration")]
    pub canary_soak: Duration,
    /// Window fit: a host is not started inside its explicit update window when the p90 of at
    /// least this many past update runs of its model and component set would overrun the
    /// window's end (0 turns the rule off; at most 100, the runs kept per set).
    pub window_fit_min_samples: u32,
    /// How long an assigned host's request waits for its tenant's approval (or the instance
    /// autoreboot period) before `approval_deadline_policy` applies; `"0s"`: no deadline.
    #[serde(with = "crate::duration::serde_duration")]
    pub approval_deadline: Duration,
    /// At the deadline: `skip` gives the request up and selects the host again at its next
    /// window; `escalate` keeps waiting and flags the host as overdue.
    pub approval_deadline_policy: crate::gates::DeadlinePolicy,
    /// Hosts that need hands-on repair (a spent retry budget, an abort to maintenance) are
    /// counted apart from the update ceiling; once this many are in repair, no new update starts.
    pub max_hosts_in_repair: u32,
}

/// The longest `machine_updater.approval_deadline` accepted: 30 days.
pub const APPROVAL_DEADLINE_MAX: Duration = Duration::from_secs(720 * 3600);

impl Default for MachineUpdaterSection {
    fn default() -> Self {
        MachineUpdaterSection {
            max_concurrent_machine_updates_absolute: None,
            max_concurrent_machine_updates_percent: None,
            machine_update_run_interval: Duration::from_secs(300),
            instance_autoreboot_period: None,
            event_driven: true,
            max_concurrent_per_label: std::collections::BTreeMap::new(),
            error_budget_failed_hosts: 3,
            error_budget_failed_percent: 20,
            error_budget_min_hosts: 10,
            canary_waves: crate::gates::default_waves(),
            canary_soak: Duration::from_secs(30 * 60),
            window_fit_min_samples: 3,
            approval_deadline: Duration::from_secs(72 * 3600),
            approval_deadline_policy: crate::gates::DeadlinePolicy::Escalate,
            max_hosts_in_repair: 10,
        }
    }
}

/// `[site_explorer]`: the periodic Redfish inventory crawl of every BMC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SiteExplorerSection {
    /// Pause between two crawls of the whole site (NICo: `site_explorer.run_interval`).
    #[serde(with = "crate::duration::serde_duration")]
    pub run_interval: Duration,
    /// BMCs explored at once during a crawl.
    pub concurrency: u32,
}

impl Default for SiteExplorerSection {
    fn default() -> Self {
        SiteExplorerSection { run_interval: Duration::from_secs(300), concurrency: 16 }
    }
}

/// `[scripts]`: how Core-local scripts (a catalog entry's `script`, run on the worker) are
/// started. Every script starts with a cleared environment (its `BMC_*` variables and a few
/// inherited ones, see docs/security.md); this table says as whom.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptsSection {
    /// Start every Core-local script as this user (the worker must run as root to switch), so a
    /// script can read neither the site key file nor the worker's memory or environment. Unset:
    /// scripts run as the worker's own user, which can read the site key file; a worker given
    /// its key through `HOSTFW_SITE_KEY` then refuses to start any script, since a script of
    /// the same user could read it from `/proc/<worker>/environ`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_as: Option<String>,
}
