//! The one place that decides which activity errors are worth retrying.
//!
//! Activity failures carry a type name that the workflows' retry policies read
//! (`hostfw_workflows::options::NON_RETRYABLE_ERRORS`): `BadInput`, `BmcRejected` and `NotFound`
//! stop retries at once; `BmcTransient`, `Store`, `CatalogInvalid` and `Superseded` are retried
//! with backoff; `EarlierScriptRun` (a Core-local script found an earlier run of itself and did not
//! run) is never retried. No error of the site database is ever non-retryable, except a row that
//! does not exist: a database blip must not end a workflow.

use hostfw_redfish::RedfishError;
use hostfw_store::StoreError;

use crate::catalog_source::CatalogUnavailable;
use temporalio_common::error::ApplicationFailure;
use temporalio_common::ActivityError;

fn failure(type_name: &str, retryable: bool, message: String) -> ActivityError {
    let failure =
        ApplicationFailure::builder(message).type_name(type_name.to_string()).non_retryable(!retryable).build();
    ActivityError::application(failure)
}

/// The input names something that does not make sense (no retry can fix it).
pub fn bad_input(message: impl Into<String>) -> ActivityError {
    failure("BadInput", false, message.into())
}

/// Something the activity needs does not exist (machine, artifact file).
pub fn not_found(message: impl Into<String>) -> ActivityError {
    failure("NotFound", false, message.into())
}

/// A Redfish error: transient ones (unreachable, timeout, 5xx) are retried, the rest are not.
pub fn redfish(err: RedfishError) -> ActivityError {
    if err.is_transient() {
        failure("BmcTransient", true, err.to_string())
    } else {
        failure("BmcRejected", false, err.to_string())
    }
}

/// The BMC does not offer what the step needs (an action, a reset value): not retried.
pub fn bmc_refuses(message: impl Into<String>) -> ActivityError {
    failure("BmcRejected", false, message.into())
}

/// The BMC did not reach the expected state in time: retried (the next attempt starts over).
pub fn bmc_timeout(message: impl Into<String>) -> ActivityError {
    failure("BmcTransient", true, message.into())
}

/// A site-database error: retried (the database may be briefly unavailable), except a missing row.
pub fn store(err: StoreError) -> ActivityError {
    match err {
        StoreError::NotFound { .. } => failure("NotFound", false, hostfw_model::error_chain(&err)),
        other => failure("Store", true, hostfw_model::error_chain(&other)),
    }
}

/// The effective catalog cannot be given: a database error is retried like any other; a catalog
/// that has never loaded is retried too (with backoff, so the step waits for the operator's fix
/// instead of ending the workflow).
pub fn catalog(err: CatalogUnavailable) -> ActivityError {
    match err {
        CatalogUnavailable::Store(e) => store(e),
        invalid @ CatalogUnavailable::Invalid(_) => failure("CatalogInvalid", true, invalid.to_string()),
    }
}

/// This attempt lost its right to act (its slot lease was taken over by a retried attempt, or the
/// Temporal server may have retried it): it stops before any irreversible step. Retryable: if the
/// server still waits for this attempt, its retry starts over with a fresh slot and precheck.
pub fn superseded(message: impl Into<String>) -> ActivityError {
    failure("Superseded", true, message.into())
}

/// A Core-local script did not run because an earlier run of it held its lock (see
/// `script_lock`): not retried; the workflow judges the earlier run by the inventory.
pub fn earlier_script_run(message: impl Into<String>) -> ActivityError {
    failure("EarlierScriptRun", false, message.into())
}
