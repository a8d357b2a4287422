//! "Is this component already being flashed?": the update task a lost attempt of this upload
//! started (issue 11, finding 7). A worker killed after its POST, on a BMC that flashes for
//! minutes, leaves the task running with nobody following it; the retried upload must follow that
//! task, not POST the image a second time.
//!
//! Reads the BMC's running update tasks (`RedfishClient::running_update_tasks`) and picks the one
//! for this component: a task naming (in its messages or payload targets) an inventory member the
//! component's matcher selects, by Id or by `@odata.id`. A running update task that names no member
//! at all is taken as ours too (the BMC has not said yet what it updates; a second POST now is the
//! one thing that must not happen; following the wrong task only costs the verification a retry).
//! A task naming only other members is someone else's.

use hostfw_model::{InventoryReport, Matcher};
use hostfw_redfish::{RedfishClient, RunningUpdateTask};
use temporalio_common::ActivityError;

use crate::error;

/// The running update task of the component `matcher` selects, if any. `None` matcher (no
/// catalog entry for the component): only a task that names nothing counts.
pub async fn ours(
    client: &RedfishClient,
    report: &InventoryReport,
    matcher: Option<&Matcher>,
) -> Result<Option<RunningUpdateTask>, ActivityError> {
    let running = client.running_update_tasks().await.map_err(error::redfish)?;
    Ok(running.into_iter().find(|t| is_ours(t, report, matcher)))
}

fn is_ours(task: &RunningUpdateTask, report: &InventoryReport, matcher: Option<&Matcher>) -> bool {
    if task.names.is_empty() {
        return true;
    }
    let Some(matcher) = matcher else { return false };
    task.names.iter().any(|name| {
        let last = name.trim_end_matches('/').rsplit('/').next().unwrap_or(name);
        matcher.is_match(name)
            || matcher.is_match(last)
            || report
                .members
                .iter()
                .any(|m| matcher.is_match(&m.id) && m.odata_id.trim_end_matches('/') == name.trim_end_matches('/'))
    })
}
