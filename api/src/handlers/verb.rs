//! Serving a CLI command's result: the command runs here, in the API process, against this
//! process's site database and Temporal, with the caller as the audit actor; its JSON document
//! (docs/cli-json.md) or, when the caller asks for `text/plain`, its operator table is the answer.
//! The CLI prints that answer as it is, so `hostfw -a URL plan` and `hostfw plan` print the same.
//!
//! Owns choosing the representation from `Accept`, running one command with its output captured
//! and turning a command's failure into an error answer. It must not decide what a command does.

use std::future::Future;

use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hostfw_starter::cli::Format;
use hostfw_starter::context::Context;

use crate::error::ApiError;
use crate::principal::Principal;
use crate::state::ApiState;

/// `text/plain` when the caller prefers it (the CLI's table format), else JSON.
pub fn format_of(headers: &HeaderMap) -> Format {
    let accept = headers.get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if accept.split(',').next().is_some_and(|first| first.trim().starts_with("text/plain")) {
        Format::Table
    } else {
        Format::Json
    }
}

/// A machine id the site does not know (answered 404).
#[derive(Debug, thiserror::Error)]
#[error("no machine {0:?} is registered (hostfw machine list)")]
pub struct UnknownMachine(pub String);

/// Like [`run`], for a command about machine `id`: a 404 naming it when it is not registered.
pub async fn run_on_machine<F, Fut>(
    state: &ApiState,
    principal: &Principal,
    headers: &HeaderMap,
    id: &str,
    command: F,
) -> Response
where
    F: FnOnce(Context) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    match state.store.machine_get(id).await {
        Ok(Some(_)) => run(state, principal, headers, command).await,
        Ok(None) => ApiError::from_failure(&UnknownMachine(id.to_string()).into()).into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// Run one command for `principal` and answer with what it printed.
pub async fn run<F, Fut>(state: &ApiState, principal: &Principal, headers: &HeaderMap, command: F) -> Response
where
    F: FnOnce(Context) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let format = format_of(headers);
    let ctx = Context::for_api((*state.site).clone(), state.store.clone(), format, principal.actor.clone());
    let (result, printed) = hostfw_starter::output::capture(command(ctx)).await;
    match result {
        Err(e) => {
            let mut error = ApiError::from_failure(&e);
            if !printed.trim().is_empty() {
                error.output = Some(printed);
            }
            error.into_response()
        }
        Ok(()) => {
            let content_type = match format {
                Format::Json => "application/json",
                Format::Table => "text/plain; charset=utf-8",
            };
            let body = match format {
                // A command that printed nothing (none does today) still answers a JSON document.
                Format::Json if printed.trim().is_empty() => "{}".to_string(),
                _ => printed,
            };
            (StatusCode::OK, [(CONTENT_TYPE, content_type)], body).into_response()
        }
    }
}
