//! Serving a captured Redfish tree (a host's `profile`): the dispatcher (`routes`), the
//! documents as they are now with the simulation laid over the capture (`documents`), and
//! PATCH of captured resources (`patch`). Loading a tree and reading its shape is the
//! `hostfw-fleet` crate's (`hostfw_fleet::Profile`); what an action means is the generic
//! handlers' (`power`, `update`, `tasks`), which this folder only routes to.

pub mod documents;
pub mod patch;
pub mod routes;
