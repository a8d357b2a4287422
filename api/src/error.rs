//! The API's error answer: a status and a JSON body `{"status": 403, "error": "..."}` whose
//! sentence says what was refused and why, like the CLI's own messages.
//!
//! Owns mapping a failure to its status: a store refusal keeps its kind (not found 404, invalid
//! input 400, conflict 409), an unreachable database or Temporal server is 503, and a command
//! that refused its input for another reason is 422 (nothing was changed). It must not decide
//! anything about access (that is `access`).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hostfw_store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// What the command printed before it failed (a preview, doctor's findings).
    pub output: Option<String>,
    /// The question a change needs confirmed (send it again with `yes: true`).
    pub confirm: Option<String>,
}

/// The JSON body of every error answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The HTTP status, repeated.
    pub status: u16,
    /// What was refused and why.
    pub error: String,
    /// What the command printed before it stopped (the preview of a change that needs
    /// confirming, the findings of `doctor`), in the format asked for; absent when nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Present when the change needs confirming: the question to put to the operator. Nothing was
    /// changed; send the same request with `"yes": true` to make it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into(), output: None, confirm: None }
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// A failure of a command or of the store, classified by what is in its chain.
    pub fn from_failure(e: &anyhow::Error) -> ApiError {
        let message = format!("{e:#}");
        for cause in e.chain() {
            if let Some(needed) = cause.downcast_ref::<hostfw_starter::confirm::ConfirmationNeeded>() {
                let mut error = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message);
                error.confirm = Some(needed.question.clone());
                return error;
            }
            if let Some(missing) = cause.downcast_ref::<crate::handlers::verb::UnknownMachine>() {
                return ApiError::new(StatusCode::NOT_FOUND, missing.to_string());
            }
            if let Some(store) = cause.downcast_ref::<StoreError>() {
                return ApiError::new(store_status(store), message);
            }
            if cause.downcast_ref::<hostfw_connect::ConnectError>().is_some() {
                return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message);
            }
        }
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::new(store_status(&e), e.to_string())
    }
}

fn store_status(e: &StoreError) -> StatusCode {
    match e {
        StoreError::NotFound { .. } => StatusCode::NOT_FOUND,
        StoreError::Invalid { .. } => StatusCode::BAD_REQUEST,
        StoreError::Conflict { .. }
        | StoreError::BmcAddressTaken { .. }
        | StoreError::MachineBusy { .. }
        | StoreError::LabelCapReached { .. }
        | StoreError::Frozen { .. }
        | StoreError::GateMoved { .. } => StatusCode::CONFLICT,
        other if other.is_transient() => StatusCode::SERVICE_UNAVAILABLE,
        StoreError::Connect { .. } => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body =
            ErrorBody { status: self.status.as_u16(), error: self.message, output: self.output, confirm: self.confirm };
        (self.status, axum::Json(body)).into_response()
    }
}

/// A JSON request body whose refusal (not JSON, a missing or unknown field, a wrong content type)
/// is an [`ApiError`] with a JSON body like every other error answer.
pub struct ApiJson<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for ApiJson<T>
where
    axum::Json<T>: axum::extract::FromRequest<S, Rejection = axum::extract::rejection::JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(ApiError::new(rejection.status(), rejection.body_text())),
        }
    }
}

/// Query parameters whose refusal (a missing or malformed parameter) is an [`ApiError`] with a
/// JSON body naming the parameter, like every other error answer.
pub struct ApiQuery<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for ApiQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(ApiError::new(rejection.status(), rejection.body_text())),
        }
    }
}
