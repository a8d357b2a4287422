//! Custom search attributes, so the Temporal Web UI and `temporal workflow list` can find host
//! workflows by machine, vendor, model and substate.
//!
//! They must be registered on the namespace before a workflow uses them (the dev server is
//! started with `--search-attribute` flags from [`REGISTRATION`]; a production namespace with
//! `temporal operator search-attribute create`).

use temporalio_common::search_attributes::SearchAttributeKey;

/// Machine id of the host a workflow works on.
pub const MACHINE_ID: SearchAttributeKey<String> = SearchAttributeKey::keyword("HostfwMachineId");
/// Current substate, with the seed's names (e.g. `WaitingForFirmwareUpgrade`).
pub const SUBSTATE: SearchAttributeKey<String> = SearchAttributeKey::keyword("HostfwSubstate");
/// Host vendor as reported by the BMC.
pub const VENDOR: SearchAttributeKey<String> = SearchAttributeKey::keyword("HostfwVendor");
/// Host model as reported by the BMC.
pub const MODEL: SearchAttributeKey<String> = SearchAttributeKey::keyword("HostfwModel");
/// Component being installed, when one is.
pub const COMPONENT: SearchAttributeKey<String> = SearchAttributeKey::keyword("HostfwComponent");

/// `(name, type)` of every attribute above, for registration on a namespace.
pub const REGISTRATION: &[(&str, &str)] = &[
    ("HostfwMachineId", "Keyword"),
    ("HostfwSubstate", "Keyword"),
    ("HostfwVendor", "Keyword"),
    ("HostfwModel", "Keyword"),
    ("HostfwComponent", "Keyword"),
];
