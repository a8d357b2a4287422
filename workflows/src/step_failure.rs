//! A host's own update step that ran to its end and failed (a BMC task that ended in `Exception`,
//! a script or Scout package that exited non-zero) is a *failed activity*: red in the Temporal
//! Web UI and counted among the run's failures, not a completed activity whose result says
//! `succeeded: false` (issue 26 item 12). The failure is not retried (the workflow's own retry
//! budget decides what happens next) and carries the step's full result in its details, so the
//! workflow reads the same result either way.
//!
//! Owns the failure type names and both halves of that contract: [`failed_step`] builds the error
//! an activity (the worker's, or Scout's on the host) returns; [`failed_result`] reads the result
//! back in workflow code. Histories recorded before this shape have the result as a completed
//! activity; the workflow treats both the same, so they issue the same commands and replay. It
//! must not decide anything about the failure itself.

use serde::de::DeserializeOwned;
use serde::Serialize;
use temporalio_common::error::ApplicationFailure;
use temporalio_common::ActivityError;
use temporalio_workflow::common::error::IncomingError;
use temporalio_workflow::ActivityExecutionError;

/// `hostfw.firmware.wait_task`: the BMC's update task ended in a failed state (details: the
/// `TaskResult`).
pub const UPDATE_TASK_FAILED: &str = "UpdateTaskFailed";

/// `hostfw.firmware.run_script` and Scout's `run_upgrade`: the script ran and failed, or never
/// ran for a reason of the host's (a digest mismatch, a refused package) (details: the
/// `ScriptResult` or `ScoutResult`).
pub const SCRIPT_FAILED: &str = "ScriptFailed";

/// The error behind a failed step: its message (what the Web UI shows) and its result, for a
/// caller in the same process (activity tests run the activity without a server, where the
/// details are not encoded yet). Temporal carries the result in the failure's details.
#[derive(Debug)]
pub struct FailedStep<T> {
    pub message: String,
    pub result: T,
}

impl<T> std::fmt::Display for FailedStep<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl<T: std::fmt::Debug> std::error::Error for FailedStep<T> {}

/// The error an activity returns when its step failed on the host: not retryable, `message`
/// shown in the Web UI, `result` in the details.
pub fn failed_step<T>(type_name: &str, message: impl Into<String>, result: T) -> ActivityError
where
    T: Serialize + Clone + std::fmt::Debug + Send + Sync + 'static,
{
    let source = FailedStep { message: message.into(), result: result.clone() };
    let failure = ApplicationFailure::builder(source)
        .type_name(type_name.to_string())
        .non_retryable(true)
        .details(result)
        .build();
    ActivityError::application(failure)
}

/// The result a failed step of type `type_name` carries, read in the process that returned it
/// (activity tests); `None` for any other error.
pub fn failed_step_result<T>(err: &ActivityError, type_name: &str) -> Option<T>
where
    T: Clone + std::fmt::Debug + 'static,
{
    let ActivityError::Application(failure) = err else {
        return None;
    };
    if failure.type_name() != Some(type_name) {
        return None;
    }
    failure.source_error().downcast_ref::<FailedStep<T>>().map(|f| f.result.clone())
}

/// The step result carried by a failure of type `type_name`, if `err` is one.
pub fn failed_result<T>(err: &ActivityExecutionError, type_name: &str) -> Option<T>
where
    T: DeserializeOwned + 'static,
{
    let ActivityExecutionError::Failed(failure) = err else {
        return None;
    };
    let mut cause = failure.cause();
    while let Some(c) = cause {
        if let IncomingError::Application(app) = c {
            if app.type_name() == Some(type_name) {
                return app.details::<T>().ok().flatten();
            }
            return None;
        }
        cause = c.cause();
    }
    None
}
