//! What a host workflow carries into its next run when it continues as new (patch
//! `continue-as-new`): a stubborn host that fails, waits and is reset many times would otherwise
//! grow one history without bound, towards Temporal's history limit.
//!
//! The next run starts where this one stopped, at the top of the attempt loop: the host is
//! already protected (its `HostContext` is carried, protect is not run again), the tenant's
//! approval and the manual-upgrade mark hold, and the retry count, installed components and
//! status history are kept, so the CLI, the metrics and the Web UI see one continuous update.
//! Deterministic data only.

use serde::{Deserialize, Serialize};

use crate::contracts::HostContext;
use crate::host::status::HostStatus;
pub use crate::tunables::HISTORY_EVENTS_BOUND;

/// The state a host workflow hands to its next run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedRun {
    /// The host as protect found it (its steady state to restore).
    pub host: HostContext,
    /// The `status` query's answer so far (retry count, installed components, events, approval).
    pub status: HostStatus,
    /// Retries used.
    pub retries: u32,
    /// The platform preparation of an assigned host is done.
    pub prepared: bool,
    pub manual_upgrade_complete: bool,
    pub approved_by: Option<String>,
    /// Runs before this one (1 for the first continuation).
    pub runs: u32,
}
