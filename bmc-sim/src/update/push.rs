//! The two push routes: `MultipartHttpPushUri` (parts `UpdateParameters` + `UpdateFile`) and the
//! legacy `HttpPushUri` (raw body, Content-Length required). They validate, take the BMC's
//! update slot and hand an [`UpdateRequest`] to `tasks::runner`; they never run the update.

use std::sync::Arc;

use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::reject::reject;
use crate::resources::uris;
use crate::tasks::runner::{start_update, ImageSource, UpdateRequest};
use crate::tasks::style::{accepted_response, RETRY_AFTER_SECS};
use crate::update::image::{ImageSink, ReceivedImage, MAX_IMAGE_BYTES};
use crate::update::params::{check_targets_required, parse_object, parse_params, UpdateParams};
use crate::update::service::{advertises_http_push, advertises_multipart};
use crate::update::slot::UpdateSlot;

/// `POST MultipartHttpPushUri`.
pub async fn multipart_push(State(host): State<Arc<Host>>, req: Request) -> Response {
    let posted_to = req.uri().path().to_string();
    if host.profile.is_none() && !advertises_multipart(host.spec.upload_style) {
        return reject(req, RedfishError::not_found(uris::MULTIPART_PUSH)).await;
    }
    let Some(slot) = UpdateSlot::try_claim(&host) else {
        return reject(req, RedfishError::update_in_progress(RETRY_AFTER_SECS)).await;
    };
    let mut multipart = match Multipart::from_request(req, &()).await {
        Ok(m) => m,
        Err(e) => {
            return RedfishError::bad_request("GeneralError", format!("Expected multipart/form-data: {e}"))
                .into_response()
        }
    };
    let (params, image) = match read_parts(&host, &mut multipart).await {
        Ok(parts) => parts,
        Err(e) => return e.into_response(),
    };
    let Some((image, name)) = image else {
        return RedfishError::bad_request("ActionParameterMissing", "The multipart request has no UpdateFile part.")
            .into_response();
    };
    let params = params.unwrap_or_else(|| default_params(&host));
    let req = UpdateRequest {
        source: ImageSource::Received { image, name },
        only_members: params.only_members,
        apply_time: params.apply_time,
    };
    let task = start_update(slot, req, &posted_to);
    accepted_response(host.spec.task_style, &task)
}

type Parts = (Option<UpdateParams>, Option<(ReceivedImage, String)>);

async fn read_parts(host: &Host, multipart: &mut Multipart) -> Result<Parts, RedfishError> {
    let (mut params, mut image) = (None, None);
    let mut names = Vec::new();
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        names.push(field.name().unwrap_or_default().to_string());
        match field.name() {
            Some("UpdateParameters") => {
                let bytes = field.bytes().await.map_err(multipart_error)?;
                params = Some(parse_params(host, &parse_object(&bytes)?)?);
            }
            Some("UpdateFile") => {
                let name = field.file_name().unwrap_or("image").to_string();
                let mut sink = ImageSink::new();
                while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                    sink.push(&chunk).map_err(|_| RedfishError::too_large(MAX_IMAGE_BYTES))?;
                }
                image = Some((sink.finish(), name));
            }
            // Vendor parts (e.g. OemParameters) are read; only their presence matters here.
            _ => while field.chunk().await.map_err(multipart_error)?.is_some() {},
        }
    }
    if let Some(missing) = host.spec.required_parts.iter().find(|p| !names.contains(p)) {
        return Err(RedfishError::bad_request(
            "ActionParameterMissing",
            format!("The multipart request has no {missing} part, which this service requires."),
        ));
    }
    check_targets_required(host, params.as_ref().and_then(|p: &UpdateParams| p.only_members.as_deref()))?;
    Ok((params, image))
}

fn multipart_error(e: axum::extract::multipart::MultipartError) -> RedfishError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        RedfishError::too_large(MAX_IMAGE_BYTES)
    } else {
        RedfishError::bad_request("GeneralError", format!("Malformed multipart request: {}", e.body_text()))
    }
}

fn default_params(host: &Host) -> UpdateParams {
    UpdateParams { only_members: None, apply_time: host.spec.apply_time }
}

/// `POST HttpPushUri`: the body is the image.
pub async fn http_push(State(host): State<Arc<Host>>, req: Request) -> Response {
    let posted_to = req.uri().path().to_string();
    if host.profile.is_none() && !advertises_http_push(host.spec.upload_style) {
        return reject(req, RedfishError::not_found(uris::HTTP_PUSH)).await;
    }
    let length = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let Some(length) = length else {
        return reject(req, RedfishError::length_required()).await;
    };
    if length > MAX_IMAGE_BYTES {
        return RedfishError::too_large(MAX_IMAGE_BYTES).into_response();
    }
    if let Err(e) = check_targets_required(&host, None) {
        return reject(req, e).await;
    }
    let Some(slot) = UpdateSlot::try_claim(&host) else {
        return reject(req, RedfishError::update_in_progress(RETRY_AFTER_SECS)).await;
    };
    let mut sink = ImageSink::new();
    let mut body = req.into_body().into_data_stream();
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else {
            return RedfishError::bad_request("GeneralError", "The image upload was interrupted.").into_response();
        };
        if sink.push(&chunk).is_err() {
            return RedfishError::too_large(MAX_IMAGE_BYTES).into_response();
        }
    }
    let req = UpdateRequest {
        source: ImageSource::Received { image: sink.finish(), name: "image".into() },
        only_members: None,
        apply_time: host.spec.apply_time,
    };
    let task = start_update(slot, req, &posted_to);
    accepted_response(host.spec.task_style, &task)
}
