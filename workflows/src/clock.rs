//! Workflow time as unix milliseconds: the deterministic clock of a workflow (the time of the
//! workflow task being replayed or run), never the wall clock.

use std::time::UNIX_EPOCH;

use temporalio_workflow::WorkflowContext;

/// The workflow's current time, unix ms (0 before the first workflow task).
pub(crate) fn now_ms<W>(ctx: &WorkflowContext<W>) -> i64 {
    ctx.workflow_time().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_millis() as i64).unwrap_or(0)
}
