//! `hostfw.host.freeze_hold`: whether a freeze holds an in-flight host before its next component
//! (issue 27). Reads the freezes in force, and only when there is one the host's labels and its
//! catalog vendor and model (the explored report's, named as the catalog names them, else the
//! machine row's), then asks the one rule (`hostfw_model::gates::holding`: a covering freeze set
//! without `drain`).
//!
//! Owns that read. It must not change anything nor decide the rule itself.

use hostfw_model::gates::holding;
use hostfw_workflows::FreezeHold;
use temporalio_common::ActivityError;

use crate::error;
use crate::Deps;

/// The freeze holding `machine_id`, if any.
pub async fn freeze_hold(deps: &Deps, machine_id: &str) -> Result<Option<FreezeHold>, ActivityError> {
    let freezes = deps.store.freeze_list().await.map_err(error::store)?;
    if freezes.is_empty() {
        return Ok(None);
    }
    let machine = deps.store.machine_get(machine_id).await.map_err(error::store)?;
    let report = deps.store.report_for_machine(machine_id).await.map_err(error::store)?;
    let reported = report.and_then(|r| r.report).map(|i| (i.vendor, i.model));
    let named = match &reported {
        Some((vendor, model)) => {
            let catalog = deps.catalog.current().await.map_err(error::catalog)?;
            Some(match catalog.find(vendor, model) {
                Some(entry) => (entry.vendor.clone(), entry.model.clone()),
                None => (vendor.clone(), model.clone()),
            })
        }
        None => machine.as_ref().and_then(|m| Some((m.vendor.clone()?, m.model.clone()?))),
    };
    let labels = machine.map(|m| m.labels).unwrap_or_default();
    let hold =
        holding(&freezes, named.as_ref().map(|(v, _)| v.as_str()), named.as_ref().map(|(_, m)| m.as_str()), &labels);
    Ok(hold.map(|f| FreezeHold { id: f.id, scope: f.scope.key(), by: f.by.clone(), reason: f.reason.clone() }))
}
