//! Custom search attributes, so the Temporal Web UI and `temporal workflow list` can find host
//! workflows by machine, vendor, model and substate, and the hosts whose retry budget is spent or whose
//! approval is overdue.
//!
//! They must be registered on the namespace before a workflow uses them (the dev server is
//! started with `--search-attribute` flags from [`REGISTRATION`]; a production namespace with
//! `temporal operator search-attribute create`).

use hostfw_model::HostSubstate;
use temporalio_common::search_attributes::{SearchAttributeKey, SearchAttributeUpdate};

use crate::names;

/// Machine id of the host a workflow works on.
pub const MACHINE_ID: SearchAttributeKey<String> = SearchAttributeKey::keyword(names::SA_MACHINE_ID);
/// Current substate, with the seed's names (e.g. `WaitingForFirmwareUpgrade`).
pub const SUBSTATE: SearchAttributeKey<String> = SearchAttributeKey::keyword(names::SA_SUBSTATE);
/// Host vendor as reported by the BMC.
pub const VENDOR: SearchAttributeKey<String> = SearchAttributeKey::keyword(names::SA_VENDOR);
/// Host model as reported by the BMC.
pub const MODEL: SearchAttributeKey<String> = SearchAttributeKey::keyword(names::SA_MODEL);
/// Component being installed, when one is.
pub const COMPONENT: SearchAttributeKey<String> = SearchAttributeKey::keyword(names::SA_COMPONENT);
/// The retry budget is spent: the host waits for `reset-host-reprovisioning` (its substate is
/// `FailedFirmwareUpgrade`, as for a host waiting to retry; this tells the two apart).
pub const RETRIES_EXHAUSTED: SearchAttributeKey<bool> = SearchAttributeKey::bool(names::SA_RETRIES_EXHAUSTED);

/// An assigned host still waits for its tenant's approval after the approval deadline (policy
/// `escalate`): `HostfwApprovalOverdue = true` lists the hosts to chase. Cleared when approved.
pub const APPROVAL_OVERDUE: SearchAttributeKey<bool> = SearchAttributeKey::bool(names::SA_APPROVAL_OVERDUE);

/// The update that sets [`SUBSTATE`] to `substate` (its seed name).
pub fn substate(substate: HostSubstate) -> SearchAttributeUpdate {
    SUBSTATE.value_set(substate.as_str().to_owned())
}

/// `(name, type)` of every attribute above, for registration on a namespace.
pub const REGISTRATION: &[(&str, &str)] = &[
    (names::SA_MACHINE_ID, "Keyword"),
    (names::SA_SUBSTATE, "Keyword"),
    (names::SA_VENDOR, "Keyword"),
    (names::SA_MODEL, "Keyword"),
    (names::SA_COMPONENT, "Keyword"),
    (names::SA_RETRIES_EXHAUSTED, "Bool"),
    (names::SA_APPROVAL_OVERDUE, "Bool"),
];
