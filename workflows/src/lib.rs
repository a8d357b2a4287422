//! Deterministic Temporal workflows of hostfw, and the contracts of the activities they call.
//!
//! # Determinism
//! Workflow code in this crate is replayed: after a worker restart Temporal feeds the recorded
//! history back through the same code, which must issue the same commands in the same order.
//! So workflow code here only *decides*: it reads inputs and activity results, calls the pure rules
//! of `hostfw-model`, and asks for effects through activities and durable timers. It never reads
//! the wall clock, draws random numbers, sleeps on tokio, or touches the network, the disk or the
//! site database. The crate does not even depend on an HTTP or SQL library (CI checks this with
//! `cargo tree -p hostfw-workflows -e normal`).
//!
//! Every change to a workflow must keep the recorded histories in `tests/histories/` replaying;
//! when behaviour must change for running workflows, add it to the registry of changes
//! ([`versions`]) and branch on `Change::..applies(ctx)`.
//!
//! # Wire names
//! Workflow types, activity names, signals, queries and search attributes carry explicit, stable
//! names (see [`names`]): they are part of the stored histories, like a database schema.

mod clock;
pub mod contracts;
pub mod host;
pub mod names;
pub mod options;
pub mod scout;
pub mod search_attributes;
pub mod site;
pub mod step_failure;
pub mod tunables;
pub mod versions;
pub mod waits;

pub use host::{activation, carried, host_reprovision, settings, status};
pub use site::{contracts as site_contracts, machine_update_manager, site_explorer, site_notifier};

pub use contracts::*;
pub use host_reprovision::HostReprovisionWorkflow;
pub use machine_update_manager::MachineUpdateManagerWorkflow;
pub use site_contracts::*;
pub use site_explorer::SiteExplorerWorkflow;
pub use site_notifier::SiteNotifierWorkflow;
pub use status::{HostOutcome, HostStatus, InstalledComponent, StatusEvent};

/// The workflow ID of the reprovisioning of one host: at most one runs per host, so the ID is
/// the request lock.
pub fn host_reprovision_workflow_id(machine_id: &str) -> String {
    format!("{}{machine_id}", names::HOST_REPROVISION_ID_PREFIX)
}
