//! The `HostReprovision` workflow, one per host, and the parts it is made of: the attempt loop
//! over components, the three install routes, activation and verification, the approval and
//! platform steps of assigned hosts, failure and retry, and what it carries into a new run.
//!
//! Workflow code only: these files decide and ask for effects through the activity contracts
//! (`crate::contracts`); they never read the clock, the network, the disk or the site database.

pub mod abort;
pub mod activation;
pub(crate) mod approval;
pub(crate) mod attempt;
pub mod carried;
pub(crate) mod deferred;
pub(crate) mod failure;
pub mod freeze_hold;
pub mod host_reprovision;
pub(crate) mod infrastructure;
pub(crate) mod install_agents;
pub(crate) mod install_redfish;
pub(crate) mod platform_steps;
pub mod settings;
pub mod status;
pub(crate) mod steps;
pub(crate) mod verify;
