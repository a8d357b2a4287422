//! Log context of an activity: every line its work logs (down to the Redfish client's) carries
//! the machine id and workflow id (a `hostfw_logging::context_span`), and a failed attempt gets
//! one WARN line, whether Temporal retries it (a transient fault: a BMC that did not answer, a
//! busy database) or the workflow decides what it means. The failed firmware attempt itself is
//! logged at ERROR where the workflow records it (`host_state::record_substate`).
//!
//! Owns the lines' fields only; the error values come from the activities.

use std::future::Future;

use hostfw_workflows::names::HOST_REPROVISION_ID_PREFIX;
use temporalio_common::ActivityError;
use temporalio_sdk::activities::ActivityContext;
use tracing::Instrument;

/// Run `work` inside the activity's log context and log its failure, if any. Success and
/// cancellation are not logged here.
pub(crate) async fn logged<T>(
    ctx: &ActivityContext,
    work: impl Future<Output = Result<T, ActivityError>>,
) -> Result<T, ActivityError> {
    let info = ctx.info();
    let workflow_id = info.workflow_id.as_deref().unwrap_or_default();
    let machine_id = workflow_id.strip_prefix(HOST_REPROVISION_ID_PREFIX).unwrap_or_default();
    let result = work.instrument(hostfw_logging::context_span(machine_id, workflow_id)).await;
    if let Err(ActivityError::Application(failure)) = &result {
        let error = hostfw_model::error_chain(failure.source_error());
        let retried_by_temporal = !failure.is_non_retryable();
        tracing::warn!(
            machine_id,
            workflow_id,
            activity = %info.activity_type,
            attempt = info.attempt,
            retried_by_temporal,
            error,
            "activity attempt failed"
        );
    }
    result
}
