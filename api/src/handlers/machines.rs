//! Machine changes over the API. Admin: `POST /v1/machines` (machine add), `POST
//! /v1/machines/import` (machine import: the fleet file's text, read and resolved by the CLI),
//! `POST /v1/machines/rotate-key` (machine rotate-key: the new key's text, read by the CLI).
//! Operator: `POST /v1/machines/{id}/labels`, `/auto-update`, `/maintenance`.
//!
//! Owns the request bodies and mounting the commands; an unknown machine id is a 404. It must
//! not decide anything the commands decide, and never reads a path named by the client.

use std::path::PathBuf;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use hostfw_starter::cli::{
    AutoUpdateArgs, LabelArgs, MachineAddArgs, MachineSelector, MaintenanceArgs, OptionalMachine,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::verb;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::principal::Principal;
use crate::state::ApiState;

/// One machine to register or update (hostfw machine add).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMachineRequest {
    pub machine_id: String,
    /// `[http(s)://]host[:port][/prefix]`.
    pub bmc: String,
    /// Ready (default) or Assigned.
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub instance: Option<String>,
    #[serde(default)]
    pub bmc_username: Option<String>,
    #[serde(default)]
    pub bmc_password: Option<String>,
    /// `key=value` labels; given, they replace the machine's labels.
    #[serde(default)]
    pub labels: Vec<String>,
}

/// A fleet file's text (hostfw machine import), its `profile` folders already resolved by the
/// sender.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The file's name, as the client knows it (shown and audited; never read here).
    pub file: String,
    /// The fleet TOML.
    pub fleet: String,
}

/// A new site key (hostfw machine rotate-key).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateKeyRequest {
    /// The key file's name, as the client knows it (shown; never read here).
    pub file: String,
    /// The key: base64 of 32 bytes (the file's text).
    pub key: String,
}

/// Labels to set and remove (hostfw machine label).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelRequest {
    /// `key=value` labels to set.
    #[serde(default)]
    pub set: Vec<String>,
    /// Label keys to remove.
    #[serde(default)]
    pub remove: Vec<String>,
}

/// A host's auto-update override.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AutoUpdatePolicy {
    Enable,
    Disable,
    Clear,
}

/// hostfw machine auto-update.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoUpdateRequest {
    pub policy: AutoUpdatePolicy,
}

/// hostfw machine auto-update --selector: the same override on every machine in scope.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoUpdateManyRequest {
    /// `model=<vendor>/<model>`, `model=<model>` or `label=<key>=<value>`.
    pub selector: String,
    pub policy: AutoUpdatePolicy,
    /// List the machines and their policy before and after, change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// The confirmation (without it or `dry_run`, nothing is changed: 422 with the preview).
    #[serde(default)]
    pub yes: bool,
}

/// Into or out of maintenance.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MaintenanceDirection {
    Enter,
    Exit,
}

/// hostfw machine maintenance.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MaintenanceRequest {
    pub direction: MaintenanceDirection,
    /// Why (recorded in the host's history and the audit trail).
    #[serde(default)]
    pub reason: Option<String>,
}

/// Register or update one machine (hostfw machine add).
#[utoipa::path(post, path = "/v1/machines", tag = "machines", request_body = AddMachineRequest,
    responses((status = 200, description = "Registered", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn add(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AddMachineRequest>,
) -> Response {
    if body.bmc_username.is_some() != body.bmc_password.is_some() {
        return ApiError::bad_request("bmc_username and bmc_password go together: give both or neither")
            .into_response();
    }
    let args = MachineAddArgs {
        machine: MachineSelector::new(body.machine_id),
        bmc: body.bmc,
        state: body.state.unwrap_or_else(|| "Ready".into()),
        instance: body.instance,
        bmc_username: body.bmc_username,
        bmc_password: body.bmc_password,
        label: body.labels,
    };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::machine::add(&ctx, &args).await }).await
}

/// Register every host of a fleet file (hostfw machine import).
#[utoipa::path(post, path = "/v1/machines/import", tag = "machines", request_body = ImportRequest,
    responses((status = 200, description = "Imported", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Refused; nothing was imported", body = ErrorBody)))]
pub async fn import(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ImportRequest>,
) -> Response {
    verb::run(&state, &p, &headers, |ctx| async move {
        hostfw_starter::machine::import_text(&ctx, &PathBuf::from(&body.file), &body.fleet).await
    })
    .await
}

/// Re-encrypt every stored BMC password with a new site key (hostfw machine rotate-key).
#[utoipa::path(post, path = "/v1/machines/rotate-key", tag = "machines", request_body = RotateKeyRequest,
    responses((status = 200, description = "Re-encrypted", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 400, description = "The key is not base64 of 32 bytes", body = ErrorBody)))]
pub async fn rotate_key(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<RotateKeyRequest>,
) -> Response {
    let key = match hostfw_store::SiteKey::from_base64(&body.key, "the request's key") {
        Ok(key) => key,
        Err(e) => return ApiError::bad_request(format!("key: {e}; nothing was changed")).into_response(),
    };
    verb::run(&state, &p, &headers, |ctx| async move {
        hostfw_starter::site_key::rotate_to(&ctx, key, &PathBuf::from(&body.file)).await
    })
    .await
}

/// Set or remove a machine's labels (hostfw machine label).
#[utoipa::path(post, path = "/v1/machines/{id}/labels", tag = "machines", request_body = LabelRequest,
    params(("id" = String, Path, description = "Machine id")),
    responses((status = 200, description = "Labels changed", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody)))]
pub async fn label(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<LabelRequest>,
) -> Response {
    let args = LabelArgs { machine: MachineSelector::new(id.clone()), set: body.set, remove: body.remove };
    verb::run_on_machine(&state, &p, &headers, &id, |ctx| async move {
        hostfw_starter::machine_label::label(&ctx, &args).await
    })
    .await
}

/// Enable or disable a host's automatic updates, or clear the override (hostfw machine auto-update).
#[utoipa::path(post, path = "/v1/machines/{id}/auto-update", tag = "machines", request_body = AutoUpdateRequest,
    params(("id" = String, Path, description = "Machine id")),
    responses((status = 200, description = "Changed", content((hostfw_starter::auto_update::AutoUpdatePolicy = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody)))]
pub async fn auto_update(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<AutoUpdateRequest>,
) -> Response {
    let args = AutoUpdateArgs {
        machine: OptionalMachine::new(id.clone()),
        selector: None,
        dry_run: false,
        yes: false,
        enable: matches!(body.policy, AutoUpdatePolicy::Enable),
        disable: matches!(body.policy, AutoUpdatePolicy::Disable),
        clear: matches!(body.policy, AutoUpdatePolicy::Clear),
    };
    verb::run_on_machine(&state, &p, &headers, &id, |ctx| async move {
        hostfw_starter::auto_update::auto_update(&ctx, &args).await
    })
    .await
}

/// Put a host into maintenance or take it out (hostfw machine maintenance).
#[utoipa::path(post, path = "/v1/machines/{id}/maintenance", tag = "machines", request_body = MaintenanceRequest,
    params(("id" = String, Path, description = "Machine id")),
    responses((status = 200, description = "Changed", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 404, description = "No such machine", body = ErrorBody),
              (status = 422, description = "Refused; nothing was changed", body = ErrorBody)))]
pub async fn maintenance(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<MaintenanceRequest>,
) -> Response {
    let args = MaintenanceArgs {
        machine: MachineSelector::new(id.clone()),
        enter: matches!(body.direction, MaintenanceDirection::Enter),
        exit: matches!(body.direction, MaintenanceDirection::Exit),
        reason: body.reason,
    };
    verb::run_on_machine(&state, &p, &headers, &id, |ctx| async move {
        hostfw_starter::maintenance::maintenance(&ctx, &args).await
    })
    .await
}

/// Set the auto-update override on every machine of a selector (hostfw machine auto-update --selector).
#[utoipa::path(post, path = "/v1/machines/auto-update", tag = "machines", request_body = AutoUpdateManyRequest,
    responses((status = 200, description = "Changed, or the dry run's preview", content((crate::change_answer::ChangeAnswer = "application/json"), (String = "text/plain"))),
              (status = 422, description = "Not confirmed (preview and question in the body), or refused; nothing was changed", body = ErrorBody)))]
pub async fn auto_update_many(
    State(state): State<ApiState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AutoUpdateManyRequest>,
) -> Response {
    let args = AutoUpdateArgs {
        machine: OptionalMachine::default(),
        selector: Some(body.selector),
        dry_run: body.dry_run,
        yes: body.yes,
        enable: matches!(body.policy, AutoUpdatePolicy::Enable),
        disable: matches!(body.policy, AutoUpdatePolicy::Disable),
        clear: matches!(body.policy, AutoUpdatePolicy::Clear),
    };
    verb::run(&state, &p, &headers, |ctx| async move { hostfw_starter::auto_update::auto_update(&ctx, &args).await })
        .await
}
