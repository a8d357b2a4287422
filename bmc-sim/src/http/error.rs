//! Redfish error responses (`{"error":{"code","message","@Message.ExtendedInfo"}}`) with the
//! right status and headers. Every rejected client request is answered through here; this file
//! decides nothing about WHEN to reject.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The Base message registry prefix used in `code` and `MessageId`s.
pub const BASE_REGISTRY: &str = "Base.1.18";

/// A rejected request, rendered as a Redfish error body.
#[derive(Debug, Clone)]
pub struct RedfishError {
    pub status: StatusCode,
    /// Full MessageId, e.g. `Base.1.18.ResourceNotFound` or `Update.1.0.UpdateInProgress`.
    pub message_id: String,
    pub message: String,
    pub resolution: &'static str,
    /// Seconds for a `Retry-After` header.
    pub retry_after: Option<u64>,
    /// Add `WWW-Authenticate` (401 only).
    pub challenge: bool,
}

impl RedfishError {
    fn new(status: StatusCode, id: &str, message: impl Into<String>, resolution: &'static str) -> Self {
        let message_id = if id.contains('.') { id.to_string() } else { format!("{BASE_REGISTRY}.{id}") };
        RedfishError { status, message_id, message: message.into(), resolution, retry_after: None, challenge: false }
    }

    pub fn not_found(uri: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "ResourceNotFound",
            format!("The requested resource {uri} was not found."),
            "Provide a valid resource identifier and resubmit the request.",
        )
    }

    /// 412: the request's `If-Match` names an ETag the resource no longer has.
    pub fn precondition_failed(uri: &str) -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "PreconditionFailed",
            format!("The ETag supplied did not match the ETag required to change the resource {uri}."),
            "Try the operation again using the appropriate ETag.",
        )
    }

    pub fn method_not_allowed(method: &str, uri: &str) -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "OperationNotAllowed",
            format!("The {method} operation is not allowed on {uri}."),
            "Use a method the resource supports.",
        )
    }

    pub fn unauthorized() -> Self {
        let mut e = Self::new(
            StatusCode::UNAUTHORIZED,
            "NoValidSession",
            "There is no valid session established with the implementation.",
            "Establish a session, or send valid HTTP Basic credentials, before retrying.",
        );
        e.challenge = true;
        e
    }

    pub fn bad_request(id: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, id, message, "Correct the request body and resubmit the request.")
    }

    pub fn malformed_json(detail: impl std::fmt::Display) -> Self {
        Self::bad_request("MalformedJSON", format!("The request body submitted was malformed JSON: {detail}"))
    }

    pub fn length_required() -> Self {
        Self::new(
            StatusCode::LENGTH_REQUIRED,
            "GeneralError",
            "A Content-Length header is required for this operation.",
            "Send the image with a known length (no chunked transfer).",
        )
    }

    pub fn too_large(limit: u64) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PayloadTooLarge",
            format!("The image exceeds MaxImageSizeBytes ({limit})."),
            "Send a smaller image.",
        )
    }

    pub fn update_in_progress(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Update.1.0.UpdateInProgress",
            "An update is in progress.",
            "Wait for the running update to finish, then resubmit the request.",
        );
        e.retry_after = Some(retry_after);
        e
    }

    /// An error the `http_errors` fault injects (503 and 429 carry `Retry-After: 1`).
    pub fn injected(status: StatusCode) -> Self {
        let id = match status.as_u16() {
            500 => "InternalError",
            503 => "ServiceTemporarilyUnavailable",
            _ => "GeneralError",
        };
        let mut e = Self::new(
            status,
            id,
            format!("Injected fault: the service answered HTTP {}.", status.as_u16()),
            "Retry the operation.",
        );
        if matches!(status.as_u16(), 503 | 429) {
            e.retry_after = Some(1);
        }
        e
    }

    /// 412: the request's `OData-Version` is not one this service supports (4.0).
    pub fn odata_version_unsupported(version: &str) -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "HeaderInvalid",
            format!("The OData-Version {version} is not supported; this service supports 4.0."),
            "Resubmit the request with OData-Version 4.0 or without the header.",
        )
    }

    /// 501: a `$` query parameter this service does not implement.
    pub fn query_not_supported(parameter: &str) -> Self {
        Self::new(
            StatusCode::NOT_IMPLEMENTED,
            "QueryNotSupported",
            format!("Querying with {parameter} is not supported by the implementation."),
            "Remove the query parameter and resubmit the request.",
        )
    }

    /// 400: a query parameter with a value it cannot take.
    pub fn query_value_invalid(parameter: &str, value: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "QueryParameterValueFormatError",
            format!("The value {value} for the parameter {parameter} is of a different format than the parameter can accept."),
            "Correct the value for the query parameter in the request and resubmit the request.",
        )
    }

    pub fn temporarily_unavailable(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceTemporarilyUnavailable",
            format!("The service is temporarily unavailable. Retry in {retry_after} seconds."),
            "Wait for the indicated retry duration and retry the operation.",
        );
        e.retry_after = Some(retry_after);
        e
    }
}

impl IntoResponse for RedfishError {
    fn into_response(self) -> Response {
        let body = json!({
            "error": {
                "code": format!("{BASE_REGISTRY}.GeneralError"),
                "message": self.message,
                "@Message.ExtendedInfo": [{
                    "@odata.type": "#Message.v1_1_1.Message",
                    "MessageId": self.message_id,
                    "Message": self.message,
                    "MessageSeverity": "Critical",
                    "Severity": "Critical",
                    "Resolution": self.resolution,
                }]
            }
        });
        let mut resp = (self.status, axum::Json(body)).into_response();
        let headers = resp.headers_mut();
        headers.insert("OData-Version", HeaderValue::from_static("4.0"));
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.challenge {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"bmc-sim\""));
        }
        resp
    }
}
