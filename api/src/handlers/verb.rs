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
        Err(e) => ApiError::from_failure(&e).into_response(),
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
