//! What a host workflow reports about itself: the query result and the workflow result.
//!
//! Plain data only; the workflow fills it in, the CLI and tests read it.

pub use crate::tunables::STATUS_EVENTS_KEPT;
use hostfw_model::gates::UnmatchedComponent;
use hostfw_model::{ComponentType, HostSubstate};
use serde::{Deserialize, Serialize};

/// One substate transition, as kept in the workflow's recent history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusEvent {
    pub substate: HostSubstate,
    pub message: String,
}

/// A component the workflow installed and verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InstalledComponent {
    pub component: ComponentType,
    /// Versions the matching inventory entries reported before the install.
    pub from: Vec<String>,
    pub to: String,
}

/// The answer of the `status` query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HostStatus {
    pub machine_id: String,
    pub substate: HostSubstate,
    /// Component being worked on, with its target version.
    pub component: Option<ComponentType>,
    pub target_version: Option<String>,
    pub installed: Vec<InstalledComponent>,
    /// The last [`STATUS_EVENTS_KEPT`] transitions, oldest first.
    pub events: Vec<StatusEvent>,
    /// Retries used after FailedFirmwareUpgrade.
    #[serde(default)]
    pub retry_count: u32,
    /// The retry budget is spent; the host waits for reset-host-reprovisioning.
    #[serde(default)]
    pub exhausted: bool,
    /// How an assigned host's update was approved.
    #[serde(default)]
    pub approval: Option<String>,
    /// Who marked the manual platform procedure complete.
    #[serde(default)]
    pub manual_upgrade_completed_by: Option<String>,
    /// An abort was asked (`host reprovision abort`): by whom and why, until the run takes it
    /// at its next safe point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_requested: Option<String>,
}

impl HostStatus {
    pub fn new(machine_id: &str) -> Self {
        HostStatus {
            machine_id: machine_id.to_string(),
            substate: HostSubstate::Protecting,
            component: None,
            target_version: None,
            installed: Vec::new(),
            events: Vec::new(),
            retry_count: 0,
            exhausted: false,
            approval: None,
            manual_upgrade_completed_by: None,
            abort_requested: None,
        }
    }

    /// Move to `substate`, remembering the transition.
    pub fn enter(&mut self, substate: HostSubstate, message: impl Into<String>) {
        self.substate = substate;
        self.events.push(StatusEvent { substate, message: message.into() });
        if self.events.len() > STATUS_EVENTS_KEPT {
            let excess = self.events.len() - STATUS_EVENTS_KEPT;
            self.events.drain(..excess);
        }
    }
}

/// How a host workflow ended (its result when it did not fail).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostOutcome {
    /// Every component of the catalog entry reports its default version.
    Compliant { installed: Vec<InstalledComponent> },
    /// The catalog has no entry for the host's vendor and model: nothing to compare with.
    NoCatalogEntry { vendor: String, model: String },
    /// The request was cleared before the update started.
    Cancelled { by: String },
    /// `host reprovision abort` stopped the update at a safe point: the host was restored (or
    /// left in maintenance for repair), `installed` lists what this run flashed before it.
    Aborted { by: String, reason: String, installed: Vec<InstalledComponent>, to_maintenance: bool },
    /// The tenant did not approve before the approval deadline and the policy is `skip`: the
    /// request was given up; the host is held until `held_until_ms` (its next window).
    ApprovalDeadlinePassed { message: String, held_until_ms: Option<i64> },
    /// Nothing more to install, but `components` do not report their version ("version not
    /// reported"): neither drifted nor compliant. `installed` lists what this run installed.
    VersionNotReported { installed: Vec<InstalledComponent>, components: Vec<ComponentType> },
    /// Nothing more can be installed, but `unmatched` components find no inventory member (their
    /// catalog matcher names nothing the BMC reports), so the host is not fully at the catalog.
    /// `installed` lists what this run installed; `not_reported` components report no version.
    NotFullyInstallable {
        installed: Vec<InstalledComponent>,
        unmatched: Vec<UnmatchedComponent>,
        not_reported: Vec<ComponentType>,
    },
}
