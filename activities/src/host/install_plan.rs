//! The catalog lookup and the route choice of the next component in one step (the lean history
//! shape's `plan_install` local activity): the effective catalog entry of the reported vendor and
//! model, the component the selection rules pick from the inventory, and its route; the host's
//! attempt of that component is recorded for the error budget (`Store::target_attempt`).
//!
//! It decides nothing the workflow does not decide again: the workflow runs the same pure
//! selection (`hostfw_model::select_with`) on the same inventory and uses the route only when
//! both name the same component and version.

use hostfw_model::gates::Target;
use hostfw_model::{select_with, Selection, UnmatchedRule};
use hostfw_workflows::{InstallPlan, InstallPlanQuery, PlannedRoute, RouteQuery};
use temporalio_common::ActivityError;

use crate::error;
use crate::routes;
use crate::Deps;

/// Look up the catalog entry and plan the next component's route. A route that cannot be used
/// (a Scout package without metadata, an artifact that cannot be served) is returned as its
/// reason, so the attempt fails with it; transient errors fail the activity, which is retried.
pub async fn plan_install(deps: &Deps, query: &InstallPlanQuery) -> Result<InstallPlan, ActivityError> {
    let catalog = deps.catalog.current().await.map_err(error::catalog)?;
    let report = &query.report;
    let Some(model) = catalog.find(&report.vendor, &report.model).cloned() else {
        return Ok(InstallPlan { model: None, route: None });
    };
    let route = match select_with(&model, report, UnmatchedRule::Skip) {
        Selection::Install { component, target_version, entry, .. } => {
            let route_query = RouteQuery {
                machine_id: query.machine_id.clone(),
                vendor: model.vendor.clone(),
                model: model.model.clone(),
                component,
                target_version: target_version.clone(),
                entry,
            };
            record_attempt(deps, &route_query).await?;
            let route = match routes::plan_route(deps, &route_query) {
                Ok(route) => Ok(route),
                Err(ActivityError::Application(f)) if f.is_non_retryable() => Err(f.source_error().to_string()),
                Err(other) => return Err(other),
            };
            Some(PlannedRoute { component, target_version, route })
        }
        _ => None,
    };
    Ok(InstallPlan { model: Some(model), route })
}

/// The error budget's record: the host of `route` begins installing its component at its target
/// version (idempotent per host and target: a retried plan records nothing new).
pub async fn record_attempt(deps: &Deps, route: &RouteQuery) -> Result<(), ActivityError> {
    let target = Target {
        vendor: route.vendor.clone(),
        model: route.model.clone(),
        component: route.component,
        version: route.target_version.clone(),
    };
    deps.store.target_attempt(&target, &route.machine_id).await.map_err(error::store)
}
