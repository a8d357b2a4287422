//! The site's reads (viewer): the scheduler's plan, compliance, the catalog, machines, one
//! managed host (a tenant may read its own), reprovisioning requests, error budgets and the audit
//! trail and the webhook notifications. Each answers the JSON document `hostfw --format json` prints (docs/cli-json.md), or the
//! operator table for `Accept: text/plain`.
//!
//! Every read declares the schema generated from the type of its document.
//!
//! Owns mounting those commands on their paths and their query parameters. It must not change
//! anything.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use hostfw_starter::budget::TargetView;
use hostfw_starter::cli::{AuditArgs, BudgetCmd};
use hostfw_starter::compliance::ComplianceJson;
use hostfw_starter::firmware::Row as FirmwareRow;
use hostfw_starter::host_show::{HostView, MachineView};
use hostfw_starter::plan::PlanView;
use hostfw_starter::reprovision::RequestRow;
use hostfw_store::{AuditEntry, Machine, NotificationRecord};
use serde::Deserialize;
use utoipa::IntoParams;

use super::verb;
use crate::error::ApiQuery;
use crate::principal::Principal;
use crate::state::ApiState;

macro_rules! read {
    ($name:ident, $path:literal, $tag:literal, $what:literal, $doc:ty, |$ctx:ident| $body:expr) => {
        #[doc = $what]
        #[utoipa::path(get, path = $path, tag = $tag, responses((status = 200, description = $what, content(($doc = "application/json"), (String = "text/plain")))))]
        pub async fn $name(
            State(state): State<ApiState>,
            Extension(p): Extension<Principal>,
            headers: HeaderMap,
        ) -> Response {
            verb::run(&state, &p, &headers, |$ctx| async move { $body }).await
        }
    };
}

read!(plan, "/v1/plan", "site", "A dry run of the scheduler's next pass (hostfw plan).", PlanView<'static>, |ctx| {
    hostfw_starter::plan::plan(&ctx).await
});
read!(
    compliance,
    "/v1/compliance",
    "site",
    "Firmware compliance per model and component (hostfw compliance).",
    ComplianceJson<'static>,
    |ctx| hostfw_starter::compliance::compliance(&ctx).await
);
read!(
    firmware,
    "/v1/firmware",
    "catalog",
    "The effective firmware catalog (hostfw firmware show).",
    Vec<FirmwareRow>,
    |ctx| hostfw_starter::firmware::show(&ctx).await
);
read!(machines, "/v1/machines", "machines", "Every machine (hostfw machine list).", Vec<Machine>, |ctx| {
    hostfw_starter::machine::list(&ctx).await
});
read!(
    requests,
    "/v1/reprovision-requests",
    "requests",
    "Every reprovisioning request (hostfw host reprovision list).",
    Vec<RequestRow<'static>>,
    |ctx| hostfw_starter::reprovision::list(&ctx).await
);
read!(
    budgets,
    "/v1/budgets",
    "brakes",
    "Error budgets per rollout target (hostfw budget list).",
    Vec<TargetView<'static>>,
    |ctx| hostfw_starter::budget::budget(&ctx, &BudgetCmd::List).await
);

/// `?history_count=N`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// State history entries shown (default 10).
    pub history_count: Option<u32>,
}

/// One machine's registration, state and history (hostfw machine show).
#[utoipa::path(get, path = "/v1/machines/{id}", tag = "machines",
    params(("id" = String, Path, description = "Machine id"), HistoryQuery),
    responses((status = 200, description = "The machine", content((MachineView = "application/json"), (String = "text/plain")))))]
pub async fn machine(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> Response {
    let count = q.history_count.unwrap_or(10);
    verb::run(
        &state,
        &p,
        &headers,
        |ctx| async move { hostfw_starter::host_show::machine_show(&ctx, &id, count).await },
    )
    .await
}

/// One managed host's firmware state, request and update (hostfw managed-host show); a tenant
/// reads the hosts of its own instances.
#[utoipa::path(get, path = "/v1/managed-hosts/{id}", tag = "machines",
    params(("id" = String, Path, description = "Machine id"), HistoryQuery),
    responses((status = 200, description = "The host", content((HostView = "application/json"), (String = "text/plain")))))]
pub async fn managed_host(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> Response {
    let count = q.history_count.unwrap_or(10);
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::host_show::show(&ctx, &id, count).await }).await
}

/// `?limit=N&target=T`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries shown, newest first (default 50, at least 1).
    pub limit: Option<u32>,
    /// Only entries about this target (a machine id, `firmware-config`, a token id, ...).
    pub target: Option<String>,
}

/// The audit trail: who changed what, when (hostfw audit).
#[utoipa::path(get, path = "/v1/audit", tag = "site", params(AuditQuery),
    responses((status = 200, description = "Audit entries, newest first", content((Vec<AuditEntry> = "application/json"), (String = "text/plain")))))]
pub async fn audit(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Response {
    let args = AuditArgs { limit: q.limit.unwrap_or(50).max(1), target: q.target };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::audit::audit(&ctx, &args).await }).await
}

/// `?limit=N`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NotificationsQuery {
    /// Events shown, newest first (default 50, at least 1).
    pub limit: Option<u32>,
}

/// Recent webhook events and each delivery's state (hostfw notifications list).
#[utoipa::path(get, path = "/v1/notifications", tag = "site", params(NotificationsQuery), responses((status = 200, description = "Events, newest first, with their deliveries", content((Vec<NotificationRecord> = "application/json"), (String = "text/plain")))))]
pub async fn notifications(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<NotificationsQuery>,
) -> Response {
    let limit = q.limit.unwrap_or(50).max(1);
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::notifications::list(&ctx, limit).await }).await
}
