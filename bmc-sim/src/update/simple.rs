//! The `UpdateService.SimpleUpdate` action: validate `ImageURI` / `TransferProtocol` / `Targets`
//! (required where the BMC says `targets_required`),
//! take the update slot and start a task that fetches the image. Never fetches here.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::resources::uris;
use crate::tasks::runner::{start_update, ImageSource, UpdateRequest};
use crate::tasks::style::{accepted_response, RETRY_AFTER_SECS};
use crate::update::params::{check_targets_required, parse_object, parse_params};
use crate::update::slot::UpdateSlot;

/// Largest SimpleUpdate JSON body read.
const MAX_ACTION_BODY: usize = 1 << 20;

pub async fn simple_update(State(host): State<Arc<Host>>, req: Request) -> Response {
    match accept(&host, req).await {
        Ok(resp) | Err(resp) => resp,
    }
}

async fn accept(host: &Arc<Host>, req: Request) -> Result<Response, Response> {
    let bytes = axum::body::to_bytes(req.into_body(), MAX_ACTION_BODY).await.map_err(|_| {
        RedfishError::bad_request("GeneralError", "Unreadable or oversized request body.").into_response()
    })?;
    let body = parse_object(&bytes).map_err(IntoResponse::into_response)?;
    let image_uri = match body.get("ImageURI").and_then(|v| v.as_str()) {
        Some(s) if !s.trim().is_empty() => s.trim(),
        Some(_) | None => {
            return Err(RedfishError::bad_request(
                "ActionParameterMissing",
                "The action UpdateService.SimpleUpdate requires the parameter ImageURI to be present.",
            )
            .into_response())
        }
    };
    let protocol = body.get("TransferProtocol").and_then(|v| v.as_str());
    let uri = resolve_uri(image_uri, protocol).map_err(IntoResponse::into_response)?;
    let params = parse_params(host, &body).map_err(IntoResponse::into_response)?;
    check_targets_required(host, params.only_members.as_deref()).map_err(IntoResponse::into_response)?;
    let slot = UpdateSlot::try_claim(host)
        .ok_or_else(|| RedfishError::update_in_progress(RETRY_AFTER_SECS).into_response())?;
    let req = UpdateRequest {
        source: ImageSource::Remote { uri },
        only_members: params.only_members,
        apply_time: params.apply_time,
    };
    let task = start_update(slot, req, uris::SIMPLE_UPDATE);
    Ok(accepted_response(host.spec.task_style, &task))
}

/// A scheme in the URI wins over `TransferProtocol`; with neither, HTTP. Only HTTP(S) is served.
fn resolve_uri(image_uri: &str, protocol: Option<&str>) -> Result<String, RedfishError> {
    let full = match image_uri.split_once("://") {
        Some((scheme, _)) => {
            if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
                return Err(unsupported_protocol(scheme));
            }
            image_uri.to_string()
        }
        None => match protocol.unwrap_or("HTTP") {
            "HTTP" => format!("http://{image_uri}"),
            "HTTPS" => format!("https://{image_uri}"),
            other => return Err(unsupported_protocol(other)),
        },
    };
    reqwest::Url::parse(&full).map(|u| u.to_string()).map_err(|e| {
        RedfishError::bad_request(
            "ActionParameterValueFormatError",
            format!("The value '{image_uri}' for the parameter ImageURI is not a valid URI: {e}"),
        )
    })
}

fn unsupported_protocol(p: &str) -> RedfishError {
    RedfishError::bad_request(
        "ActionParameterValueNotInList",
        format!("The transfer protocol '{p}' is not supported; use HTTP or HTTPS."),
    )
}

#[cfg(test)]
mod tests {
    use super::resolve_uri;

    #[test]
    fn scheme_wins_and_default_is_http() {
        assert_eq!(resolve_uri("http://a:1/x.bin", Some("HTTPS")).unwrap(), "http://a:1/x.bin");
        assert_eq!(resolve_uri("a:1/x.bin", None).unwrap(), "http://a:1/x.bin");
        assert_eq!(resolve_uri("a/x.bin", Some("HTTPS")).unwrap(), "https://a/x.bin");
        assert!(resolve_uri("ftp://a/x.bin", None).is_err());
        assert!(resolve_uri("a/x.bin", Some("NFS")).is_err());
        assert!(resolve_uri("http://", None).is_err());
    }
}
