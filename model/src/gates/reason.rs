//! Why a drifted (or unknown) host was not started in a pass: one typed `SkipReason` per gate
//! outcome, each displayed as one operator line naming the key or command that changes it.
//!
//! Owns the reasons and their wording. It must not decide which reason applies (see
//! `gates::host_gates` and `gates::pass`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::budget::Target;
use super::firmware::UnmatchedComponent;
use super::freeze::{FreezeScope, OperatorPause};
use super::waves::NextWave;
use super::window_fit::{span_text, Estimate};
use crate::drift::NotReportedComponent;
use crate::reported_version::VERSION_NOT_REPORTED;
use crate::time_text::rfc3339_utc;
use crate::{ComponentType, TimeWindow};

/// The first gate a host failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum SkipReason {
    NotExplored,
    ExploreFailed {
        error: String,
    },
    NoCatalogEntry {
        vendor: String,
        model: String,
    },
    /// Only components without an inventory match drift: nothing installable (S54).
    NoInventoryMatch {
        unmatched: Vec<UnmatchedComponent>,
    },
    /// Nothing installable differs, but these components do not report their version: neither
    /// drifted nor compliant, not started.
    VersionNotReported {
        not_reported: Vec<NotReportedComponent>,
    },
    AutoUpdateOffSite,
    AutoUpdateOffHost,
    LegacyDisableList,
    AssignedManualTagging,
    AlreadyRequested,
    /// Updating or in maintenance without a request (counts against the budget, S9).
    Busy {
        state: crate::HostState,
    },
    /// `explicit_start_needed` and no window containing now.
    WindowClosed {
        window: Option<TimeWindow>,
    },
    /// The ceiling is 0; `how` says why (e.g. both limits unset).
    CeilingZero {
        how: String,
    },
    /// All slots are used: `in_flight` counts the work running before the pass plus the hosts
    /// started by it.
    CeilingReached {
        limit: u32,
        in_flight: u32,
    },
    /// `max_concurrent_per_label.<key>`: `in_flight` hosts with `key=value` are in flight (before
    /// this pass or started by it) and the cap is `limit`.
    LabelCapReached {
        key: String,
        value: String,
        limit: u32,
        in_flight: u32,
    },
    /// The error budget of a target the host would install is spent (`Plan::paused` has the
    /// evidence): no new host starts on it until `hostfw budget resume`.
    TargetPaused {
        target: Target,
        failed_hosts: u32,
        attempted_hosts: u32,
    },
    /// The open canary wave of a target the host would install has no room left
    /// (`machine_updater.canary_waves`): `allowed` hosts may have started on it in all.
    WaveFull {
        target: Target,
        wave: u32,
        waves: u32,
        allowed: u32,
        next: NextWave,
    },
    /// Window fit (`machine_updater.window_fit_min_samples`): the host's explicit update window
    /// is open but closes in `remaining_ms`, sooner than the p90 of past updates of its vendor,
    /// model and component set.
    WindowTooShort {
        vendor: String,
        model: String,
        components: Vec<ComponentType>,
        estimate: Estimate,
        window: TimeWindow,
        remaining_ms: i64,
    },
    /// The tenant did not approve the host's last request before its approval deadline and the
    /// policy is `skip`: the request was given up and the host is held until its next window.
    ApprovalSkipped {
        until_ms: i64,
    },
    /// A freeze covers the host (`hostfw freeze`): no new host starts in its scope until
    /// `hostfw unfreeze`.
    Frozen {
        id: i64,
        by: String,
        reason: String,
        scope: FreezeScope,
    },
    /// An operator paused a target the host would install (`hostfw budget pause`): no new host
    /// starts on it until `hostfw budget resume`. Boxed: a skip reason stays small.
    TargetPausedByOperator(Box<OperatorPause>),
    /// `in_repair` hosts need hands-on repair (a spent retry budget, an abort to maintenance), as
    /// many as `machine_updater.max_hosts_in_repair` allows: no new host starts until one of them
    /// is repaired, reset or aborted.
    RepairCapReached {
        in_repair: u32,
        cap: u32,
    },
}

impl SkipReason {
    /// Every other gate would select the host: only capacity (the site ceiling, full or 0, or a
    /// full failure-domain cap) or its closed update window (or the hold until its next window
    /// after a skipped approval) holds it. Such a host counts as
    /// pending (`Plan::pending`).
    pub fn held_only_for_capacity_or_window(&self) -> bool {
        matches!(
            self,
            SkipReason::CeilingReached { .. }
                | SkipReason::CeilingZero { .. }
                | SkipReason::WindowClosed { .. }
                | SkipReason::LabelCapReached { .. }
                | SkipReason::WaveFull { .. }
                | SkipReason::WindowTooShort { .. }
                | SkipReason::ApprovalSkipped { .. }
                | SkipReason::RepairCapReached { .. }
        )
    }

    /// The variant's name (`"CeilingReached"`, `"WindowClosed"`, ...), e.g. for counting hosts by
    /// reason.
    pub fn kind(&self) -> &'static str {
        match self {
            SkipReason::NotExplored => "NotExplored",
            SkipReason::ExploreFailed { .. } => "ExploreFailed",
            SkipReason::NoCatalogEntry { .. } => "NoCatalogEntry",
            SkipReason::NoInventoryMatch { .. } => "NoInventoryMatch",
            SkipReason::VersionNotReported { .. } => "VersionNotReported",
            SkipReason::AutoUpdateOffSite => "AutoUpdateOffSite",
            SkipReason::AutoUpdateOffHost => "AutoUpdateOffHost",
            SkipReason::LegacyDisableList => "LegacyDisableList",
            SkipReason::AssignedManualTagging => "AssignedManualTagging",
            SkipReason::AlreadyRequested => "AlreadyRequested",
            SkipReason::Busy { .. } => "Busy",
            SkipReason::WindowClosed { .. } => "WindowClosed",
            SkipReason::CeilingZero { .. } => "CeilingZero",
            SkipReason::CeilingReached { .. } => "CeilingReached",
            SkipReason::RepairCapReached { .. } => "RepairCapReached",
            SkipReason::LabelCapReached { .. } => "LabelCapReached",
            SkipReason::TargetPaused { .. } => "TargetPaused",
            SkipReason::WaveFull { .. } => "WaveFull",
            SkipReason::WindowTooShort { .. } => "WindowTooShort",
            SkipReason::ApprovalSkipped { .. } => "ApprovalSkipped",
            SkipReason::Frozen { .. } => "Frozen",
            SkipReason::TargetPausedByOperator(_) => "TargetPausedByOperator",
        }
    }
}

/// A host that was not started, with its first failing gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Skipped {
    pub machine_id: String,
    pub reason: SkipReason,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.machine_id, self.reason.for_host(&self.machine_id))
    }
}

/// How a reason's remedies name the host when no host is given (`SkipReason`'s `Display`);
/// [`SkipReason::for_host`] puts the real id in its place.
pub const MACHINE_ID_PLACEHOLDER: &str = "<machine-id>";

impl SkipReason {
    /// The reason as an operator line for one host: every remedy names `machine_id` where the
    /// bare `Display` says `<machine-id>`, so the command can be run as printed.
    pub fn for_host(&self, machine_id: &str) -> String {
        self.to_string().replace(MACHINE_ID_PLACEHOLDER, machine_id)
    }
}

const EXPLORE: &str = "`hostfw site-explorer explore --machine <machine-id>`";
const ENABLE: &str = "`hostfw machine auto-update --machine <machine-id> --enable`";
const LIMITS: &str = "machine_updater.max_concurrent_machine_updates_absolute (or _percent)";

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::NotExplored => {
                write!(f, "not explored yet: no firmware inventory is stored; explore it with {EXPLORE}")
            }
            SkipReason::ExploreFailed { error } => {
                write!(f, "the last exploration failed ({error}); fix BMC access and re-run {EXPLORE}")
            }
            SkipReason::NoCatalogEntry { vendor, model } => write!(
                f,
                "no catalog entry for vendor {vendor:?} model {model:?}: add a [host_models.*] \
                 table or a firmware directory entry for it (`hostfw firmware show` lists the catalog)"
            ),
            SkipReason::NoInventoryMatch { unmatched } => {
                let list: Vec<String> =
                    unmatched.iter().map(|u| format!("{} (`{}`)", u.component, u.matcher)).collect();
                write!(
                    f,
                    "nothing installable: no inventory member matches {}; not started (it would \
                     only churn) until the catalog's current_version_reported_as or the BMC \
                     inventory is fixed",
                    list.join(", ")
                )
            }
            SkipReason::VersionNotReported { not_reported } => {
                let list: Vec<String> = not_reported.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "{VERSION_NOT_REPORTED}: {}; nothing else differs from the catalog, so not \
                     started (an unknown version cannot be compared with the catalog, and an \
                     install over it could never be verified); compared again once the BMC \
                     reports a version (`hostfw site-explorer get-report managed-host <bmc-ip>` \
                     shows what it sent)",
                    list.join(", ")
                )
            }
            SkipReason::AutoUpdateOffSite => write!(
                f,
                "automatic updates are off for the site (firmware_global.autoupdate = false); \
                 enable this machine alone with {ENABLE}"
            ),
            SkipReason::AutoUpdateOffHost => write!(
                f,
                "automatic updates are disabled for this machine; {ENABLE}, or `--clear` to \
                 follow firmware_global.autoupdate"
            ),
            SkipReason::LegacyDisableList => write!(
                f,
                "listed in the legacy firmware_global.host_disable_autoupdate; remove it there or \
                 override with {ENABLE}"
            ),
            SkipReason::AssignedManualTagging => write!(
                f,
                "assigned to a tenant and firmware_global.instance_updates_manual_tagging = true: \
                 only unassigned Ready hosts are selected; set it to false or request this host \
                 with `hostfw host reprovision set --id <machine-id>`"
            ),
            SkipReason::AlreadyRequested => {
                write!(f, "a reprovisioning request already exists (`hostfw host reprovision list`)")
            }
            SkipReason::Busy { state } => write!(
                f,
                "already in {state} (no request); it uses a slot of the site budget and is \
                 considered again once it is back in Ready or Assigned"
            ),
            SkipReason::WindowClosed { window: None } => write!(
                f,
                "the model needs an explicit start (explicit_start_needed = true) and this \
                 machine has no firmware update window; open one with \
                 `hostfw managed-host start-updates --machines <machine-id> --start <t> --end <t>`"
            ),
            SkipReason::WindowClosed { window: Some(w) } => write!(
                f,
                "the model needs an explicit start (explicit_start_needed = true) and this \
                 machine's update window [{}, {}) is not open now; change it with \
                 `hostfw managed-host start-updates --machines <machine-id> --start <t> --end <t>`",
                rfc3339_utc(w.start_ms),
                rfc3339_utc(w.end_ms)
            ),
            SkipReason::CeilingZero { how } => write!(f, "the site update ceiling is 0 ({how}); set {LIMITS}"),
            SkipReason::CeilingReached { limit, in_flight } => write!(
                f,
                "the site update ceiling is reached (limit {limit}, all taken by updates in flight \
                 and hosts this pass starts: {in_flight}); waits for a slot, or raise {LIMITS}"
            ),
            SkipReason::RepairCapReached { in_repair, cap } => write!(
                f,
                "{in_repair} hosts need hands-on repair (machine_updater.max_hosts_in_repair = {cap}): no new \
                 update starts until one is repaired (`hostfw machine maintenance --machine <id> --exit`), \
                 reset (`hostfw managed-host reset-host-reprovisioning`) or aborted (`hostfw host reprovision \
                 abort`); `hostfw plan` lists them under IN REPAIR"
            ),
            SkipReason::LabelCapReached { key, value, limit, in_flight } => write!(
                f,
                "failure-domain cap reached: {in_flight} of {limit} hosts labelled {key}={value} are \
                 updating or in maintenance (machine_updater.max_concurrent_per_label.{key} = {limit}); \
                 waits until one of them is done"
            ),
            SkipReason::TargetPaused { target, failed_hosts, attempted_hosts } => write!(
                f,
                "the error budget of {target} is spent ({failed_hosts} of {attempted_hosts} hosts that \
                 attempted it failed; `hostfw plan` lists them): no new host starts on it; after \
                 fixing the image, `{}`",
                target.resume_command()
            ),
            SkipReason::WaveFull { target, wave, waves, allowed, next } => write!(
                f,
                "canary wave {wave} of {waves} of {target} is full ({allowed} host{} in all); {next} \
                 (machine_updater.canary_waves)",
                if *allowed == 1 { "" } else { "s" }
            ),
            SkipReason::WindowTooShort { vendor, model, components, estimate, window, remaining_ms } => {
                let names: Vec<String> = components.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "window fit: an update of {vendor} {model} ({}) takes {} (p90 of {} past update{}) \
                     but this machine's update window closes in {} (at {}); not started, so it \
                     cannot overrun the window; widen it with `hostfw managed-host start-updates \
                     --machines <machine-id> --start <t> --end <t>` \
                     (machine_updater.window_fit_min_samples = 0 turns the rule off)",
                    names.join(", "),
                    span_text(estimate.p90_ms),
                    estimate.samples,
                    if estimate.samples == 1 { "" } else { "s" },
                    span_text(*remaining_ms),
                    rfc3339_utc(window.end_ms)
                )
            }
            SkipReason::ApprovalSkipped { until_ms } => write!(
                f,
                "its tenant did not approve the last request before the approval deadline \
                 (machine_updater.approval_deadline_policy = \"skip\"): the request was given up and \
                 the host is held until {}, its next window; request it now with \
                 `hostfw host reprovision set --id <machine-id>`",
                rfc3339_utc(*until_ms)
            ),
            SkipReason::Frozen { id, by, reason, scope } => {
                let what = match scope {
                    FreezeScope::Site => "the whole site is frozen".to_string(),
                    other => format!("{other} is frozen"),
                };
                write!(
                    f,
                    "{what} by {by} ({reason:?}, freeze {id}): no new host starts in its scope; \
                     `hostfw unfreeze --id {id}` lifts it"
                )
            }
            SkipReason::TargetPausedByOperator(p) => write!(
                f,
                "{} is paused by {} ({:?}): no new host starts on it; `{}` releases it",
                p.target,
                p.by,
                p.reason,
                p.target.resume_command()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26 item 12: a remedy shown for a host names that host, ready to run.
    #[test]
    fn remedies_shown_for_a_host_name_its_id() {
        let reasons = [
            SkipReason::NotExplored,
            SkipReason::ExploreFailed { error: "refused".into() },
            SkipReason::AutoUpdateOffSite,
            SkipReason::AutoUpdateOffHost,
            SkipReason::LegacyDisableList,
            SkipReason::AssignedManualTagging,
            SkipReason::WindowClosed { window: None },
            SkipReason::ApprovalSkipped { until_ms: 0 },
        ];
        for reason in reasons {
            let bare = reason.to_string();
            assert!(bare.contains(MACHINE_ID_PLACEHOLDER), "{bare}");
            let shown = reason.for_host("rack7-node3");
            assert!(!shown.contains(MACHINE_ID_PLACEHOLDER), "{shown}");
            assert!(shown.contains(" rack7-node3`") || shown.contains(" rack7-node3 "), "{shown}");
            let skipped = Skipped { machine_id: "rack7-node3".into(), reason };
            assert!(!skipped.to_string().contains(MACHINE_ID_PLACEHOLDER), "{skipped}");
        }
    }
}
