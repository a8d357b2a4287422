//! The activities of one host's reprovisioning (`HostReprovision`): inventory and catalog lookup,
//! route choice, the three install routes (Redfish upload with its slot, liveness and running-task
//! checks; Core-local script with its lock; the Scout package), activation, platform steps, and
//! the host's bookkeeping in the site database. The worker binds them in `registry`.
//!
//! Nothing here decides what to do next: that is the workflow's job (`hostfw-workflows::host`).

pub mod activation;
pub mod activation_preflight;
pub mod approval;
pub mod firmware;
pub mod freeze_hold;
pub mod host_model;
pub mod host_state;
pub mod install_plan;
pub mod inventory;
pub mod liveness;
pub mod platform;
pub(crate) mod registry;
pub mod reset_types;
pub mod routes;
pub mod running_task;
pub mod scout_package;
pub mod scout_signing;
pub mod script;
pub mod script_lock;
pub mod upload_slot;
