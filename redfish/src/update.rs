//! Firmware upload routes: reading the UpdateService and handing an image to the BMC.
//!
//! Owns `UpdateServiceInfo`, `UploadRequest`, `UploadRoute`, `UploadAccepted`, `update_service`
//! and `upload`: route choice (MultipartHttpPushUri, else HttpPushUri, else SimpleUpdate with an
//! ImageURI the BMC fetches), the image checks (empty, MaxImageSizeBytes) and the request bodies.
//! Push and action URIs are always read from the UpdateService, never built. It must not follow
//! the resulting task (that is `task.rs`) nor decide *what* to flash or whether it worked.

use std::path::{Path, PathBuf};

use reqwest::multipart::{Form, Part};
use reqwest::{Method, RequestBuilder};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::client::{Auth, RedfishClient, Reply};
use crate::error::RedfishError;
use crate::etag::{Fetched, Redecided};
use crate::models::UpdateService;
use crate::task::TaskRef;
use crate::timeouts;

/// What the UpdateService offers for uploads (URIs verbatim as the BMC wrote them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateServiceInfo {
    /// `MultipartHttpPushUri` (preferred).
    pub multipart_uri: Option<String>,
    /// `HttpPushUri` (deprecated since UpdateService v1_15_0, still common).
    pub http_push_uri: Option<String>,
    /// `Actions["#UpdateService.SimpleUpdate"].target`.
    pub simple_update_target: Option<String>,
    /// `MaxImageSizeBytes`, when the BMC states one.
    pub max_image_size: Option<u64>,
}

impl UpdateServiceInfo {
    pub(crate) fn from_doc(doc: &UpdateService) -> Self {
        let non_empty = |s: &Option<String>| s.clone().filter(|s| !s.trim().is_empty());
        UpdateServiceInfo {
            multipart_uri: non_empty(&doc.multipart_http_push_uri),
            http_push_uri: non_empty(&doc.http_push_uri),
            simple_update_target: doc
                .actions
                .as_ref()
                .and_then(|a| a.get("#UpdateService.SimpleUpdate"))
                .and_then(|a| a.target().map(str::to_string)),
            max_image_size: doc.max_image_size_bytes.filter(|n| *n > 0),
        }
    }
}

/// How an image reaches the BMC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UploadRoute {
    /// `multipart/form-data` POST to `MultipartHttpPushUri`.
    Multipart,
    /// Raw `application/octet-stream` POST to `HttpPushUri`.
    HttpPush,
    /// `UpdateService.SimpleUpdate` with an `ImageURI` the BMC downloads.
    SimpleUpdate,
}

/// One firmware upload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UploadRequest {
    /// The image on local disk (also checked, for size, on the SimpleUpdate route).
    pub file: PathBuf,
    /// A URL where the BMC can fetch the same file (required for SimpleUpdate).
    pub image_uri: Option<String>,
    /// Update targets (SoftwareInventory or device URIs); empty lets the BMC choose.
    pub targets: Vec<String>,
    /// `@Redfish.OperationApplyTime` (e.g. "Immediate", "OnReset"); `None` leaves the BMC default.
    pub apply_time: Option<String>,
    /// Use this route instead of the preferred one (it must be advertised).
    pub force_route: Option<UploadRoute>,
    /// Vendor parts added to the multipart form after `UpdateParameters`: (name, JSON text),
    /// e.g. Supermicro's `OemParameters`. Ignored on the other routes.
    pub extra_parts: Vec<(String, String)>,
}

/// The BMC accepted the image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadAccepted {
    pub route: UploadRoute,
    /// The task to follow; `None` when the BMC answered without naming one.
    pub task: Option<TaskRef>,
}

/// Why no upload route can be used (`RedfishError::Unsupported` carries its text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoRoute {
    #[error("the Multipart route was requested but MultipartHttpPushUri is not advertised")]
    MultipartNotAdvertised,
    #[error("the HttpPush route was requested but HttpPushUri is not advertised")]
    HttpPushNotAdvertised,
    #[error("the SimpleUpdate route was requested but the UpdateService has no SimpleUpdate action")]
    SimpleUpdateNotAdvertised,
    #[error("the SimpleUpdate route needs an image URI the BMC can fetch the image from, and none was given")]
    SimpleUpdateWithoutImageUri,
    #[error(
        "the BMC offers only SimpleUpdate (no MultipartHttpPushUri, no HttpPushUri), which needs an image URI the BMC \
         can fetch the image from, and none was given"
    )]
    OnlySimpleUpdateWithoutImageUri,
    #[error(
        "the UpdateService advertises no upload route (no MultipartHttpPushUri, HttpPushUri or SimpleUpdate action)"
    )]
    NoneAdvertised,
}

/// Chooses the upload route: the forced one if advertised, else Multipart, HttpPush, SimpleUpdate
/// (which needs an image URI). `Err` says what is missing.
pub(crate) fn choose_route(
    info: &UpdateServiceInfo,
    force: Option<UploadRoute>,
    has_image_uri: bool,
) -> Result<UploadRoute, NoRoute> {
    match force {
        Some(UploadRoute::Multipart) if info.multipart_uri.is_none() => Err(NoRoute::MultipartNotAdvertised),
        Some(UploadRoute::HttpPush) if info.http_push_uri.is_none() => Err(NoRoute::HttpPushNotAdvertised),
        Some(UploadRoute::SimpleUpdate) if info.simple_update_target.is_none() => {
            Err(NoRoute::SimpleUpdateNotAdvertised)
        }
        Some(UploadRoute::SimpleUpdate) if !has_image_uri => Err(NoRoute::SimpleUpdateWithoutImageUri),
        Some(route) => Ok(route),
        None if info.multipart_uri.is_some() => Ok(UploadRoute::Multipart),
        None if info.http_push_uri.is_some() => Ok(UploadRoute::HttpPush),
        None if info.simple_update_target.is_some() && has_image_uri => Ok(UploadRoute::SimpleUpdate),
        None if info.simple_update_target.is_some() => Err(NoRoute::OnlySimpleUpdateWithoutImageUri),
        None => Err(NoRoute::NoneAdvertised),
    }
}

/// The JSON of the multipart `UpdateParameters` part.
pub(crate) fn update_parameters(targets: &[String], apply_time: Option<&str>) -> Value {
    let mut params = json!({ "Targets": targets });
    if let Some(at) = apply_time {
        params["@Redfish.OperationApplyTime"] = json!(at);
    }
    params
}

/// The SimpleUpdate body. `TransferProtocol` is sent only when the action lists allowable values
/// and the ImageURI's scheme is among them (the URI's scheme wins anyway, and some services
/// reject the parameter).
pub(crate) fn simple_update_body(
    image_uri: &str,
    targets: &[String],
    apply_time: Option<&str>,
    allowed_protocols: Option<&[String]>,
) -> Value {
    let mut body = json!({ "ImageURI": image_uri });
    if let (Some(allowed), Some((scheme, _))) = (allowed_protocols, image_uri.split_once("://")) {
        let protocol = scheme.to_ascii_uppercase();
        if allowed.iter().any(|p| p.eq_ignore_ascii_case(&protocol)) {
            body["TransferProtocol"] = json!(protocol);
        }
    }
    if !targets.is_empty() {
        body["Targets"] = json!(targets);
    }
    if let Some(at) = apply_time {
        body["@Redfish.OperationApplyTime"] = json!(at);
    }
    body
}

impl RedfishClient {
    /// What the UpdateService offers for uploads.
    pub async fn update_service(&self) -> Result<UpdateServiceInfo, RedfishError> {
        let doc = self.update_service_doc().await?.doc;
        Ok(UpdateServiceInfo::from_doc(&doc))
    }

    /// Uploads one firmware image by the best advertised route (see `choose_route`) and returns
    /// the task to follow. Refuses empty images and images over `MaxImageSizeBytes` before
    /// sending anything.
    pub async fn upload(&self, req: &UploadRequest) -> Result<UploadAccepted, RedfishError> {
        let size = self.image_size(&req.file)?;
        let us = self.update_service_doc().await?;
        let (us_url, doc) = (&us.url, &us.doc);
        let info = UpdateServiceInfo::from_doc(doc);
        if let Some(max) = info.max_image_size {
            if size > max {
                return Err(RedfishError::ImageTooLarge {
                    bmc: self.bmc(),
                    url: us_url.to_string(),
                    path: req.file.clone(),
                    size,
                    max,
                });
            }
        }
        let image_uri = req.image_uri.as_deref().filter(|s| !s.trim().is_empty());
        let route = choose_route(&info, req.force_route, image_uri.is_some())
            .map_err(|e| RedfishError::Unsupported { bmc: self.bmc(), url: us_url.to_string(), what: e.to_string() })?;
        let timeout = timeouts::upload_timeout(self.options().request_timeout, size);
        tracing::info!(bmc = %self.address(), ?route, file = %req.file.display(), size, "uploading firmware image");
        let reply = match route {
            UploadRoute::Multipart => {
                let uri = info.multipart_uri.as_deref().unwrap_or_default();
                let url = self.resolve_from(uri, Some(us_url))?;
                let params = update_parameters(&req.targets, req.apply_time.as_deref()).to_string();
                let file_name = file_name_of(&req.file);
                let path = req.file.clone();
                let bmc = self.bmc();
                let extra_parts = req.extra_parts.clone();
                let build = move |rb: RequestBuilder| -> Result<RequestBuilder, RedfishError> {
                    let body = open_image(&bmc, &path)?;
                    let file_part = Part::stream_with_length(body, size)
                        .file_name(file_name.clone())
                        .mime_str("application/octet-stream")
                        .map_err(|e| file_error(&bmc, &path, e))?;
                    let params_part = Part::text(params.clone())
                        .mime_str("application/json")
                        .map_err(|e| file_error(&bmc, &path, e))?;
                    let mut form = Form::new().part("UpdateParameters", params_part);
                    for (name, text) in &extra_parts {
                        let part = Part::text(text.clone())
                            .mime_str("application/json")
                            .map_err(|e| file_error(&bmc, &path, e))?;
                        form = form.part(name.clone(), part);
                    }
                    let form = form.part("UpdateFile", file_part);
                    Ok(rb.timeout(timeout).multipart(form))
                };
                self.send(Method::POST, &url, &build, Auth::Default).await?
            }
            UploadRoute::HttpPush => {
                self.prepare_http_push(&us, req).await?;
                let uri = info.http_push_uri.as_deref().unwrap_or_default();
                let url = self.resolve_from(uri, Some(us_url))?;
                let path = req.file.clone();
                let bmc = self.bmc();
                let build = move |rb: RequestBuilder| -> Result<RequestBuilder, RedfishError> {
                    let body = open_image(&bmc, &path)?;
                    Ok(rb
                        .timeout(timeout)
                        .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                        .header(reqwest::header::CONTENT_LENGTH, size)
                        .body(body))
                };
                self.send(Method::POST, &url, &build, Auth::Default).await?
            }
            UploadRoute::SimpleUpdate => {
                let action =
                    doc.actions.as_ref().and_then(|a| a.get("#UpdateService.SimpleUpdate")).unwrap_or_default();
                let target = info.simple_update_target.as_deref().unwrap_or_default();
                let url = self.resolve_from(target, Some(us_url))?;
                // Inline, else through the action's ActionInfo (Supermicro, DGX list them there).
                let mut allowed = action.allowable_values("TransferProtocol");
                if allowed.as_ref().is_none_or(Vec::is_empty) {
                    if let Some(info) = action.action_info.as_deref().filter(|s| !s.trim().is_empty()) {
                        let info_url = self.resolve_from(info, Some(us_url))?;
                        match self.get_json::<crate::models::ActionInfo>(&info_url).await {
                            Ok(info) => allowed = info.allowable_values("TransferProtocol"),
                            Err(e) => tracing::warn!(bmc = %self.address(), error = %e,
                                "cannot read the SimpleUpdate ActionInfo; TransferProtocol left out"),
                        }
                    }
                }
                let body = simple_update_body(
                    image_uri.unwrap_or_default(),
                    &req.targets,
                    req.apply_time.as_deref(),
                    allowed.as_deref(),
                );
                // An action of the UpdateService: If-Match its ETag when it served one; after a
                // 412, sent again only if the service read again still offers it.
                let redecide = |fresh: &Value| {
                    if fresh.pointer("/Actions/#UpdateService.SimpleUpdate").is_some() {
                        Ok(body.clone())
                    } else {
                        Err(RedfishError::Unsupported {
                            bmc: self.bmc(),
                            url: us_url.to_string(),
                            what: "SimpleUpdate: the UpdateService read again after a 412 no longer offers it".into(),
                        })
                    }
                };
                self.post_action(&url, us_url, us.etag.as_deref(), &body, &redecide).await?
            }
        };
        self.accepted(route, reply).await
    }

    /// The image's size; a missing, unreadable or empty file is an error.
    fn image_size(&self, path: &Path) -> Result<u64, RedfishError> {
        let meta = std::fs::metadata(path).map_err(|e| file_error(&self.bmc(), path, e))?;
        if !meta.is_file() {
            return Err(RedfishError::File {
                bmc: self.bmc(),
                path: path.to_path_buf(),
                cause: "not a regular file".into(),
            });
        }
        if meta.len() == 0 {
            return Err(RedfishError::EmptyImage { bmc: self.bmc(), path: path.to_path_buf() });
        }
        Ok(meta.len())
    }

    /// For the legacy HttpPushUri, targets and apply time are properties of the UpdateService set
    /// by PATCH (with If-Match when the service served an ETag). They are patched only when the
    /// service advertises them; otherwise the request's targets/apply time cannot be conveyed
    /// and a warning says so.
    async fn prepare_http_push(&self, us: &Fetched<UpdateService>, req: &UploadRequest) -> Result<(), RedfishError> {
        let us_url = &us.url;
        let patch = self.http_push_patch(&us.doc, req, true);
        if patch.is_empty() {
            return Ok(());
        }
        // After a 412 the UpdateService read again decides what still needs setting.
        let redecide = |fresh: &Value| {
            let doc: UpdateService = serde_json::from_value(fresh.clone()).map_err(|e| RedfishError::Parse {
                bmc: self.bmc(),
                url: us_url.to_string(),
                cause: e.to_string(),
            })?;
            let patch = self.http_push_patch(&doc, req, false);
            Ok(if patch.is_empty() { Redecided::AlreadyDone } else { Redecided::Write(Value::Object(patch)) })
        };
        let fields: Vec<String> = patch.keys().cloned().collect();
        match self.patch_resource(us, &Value::Object(patch), &redecide).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_transient() => Err(e),
            // The BMC will not take our targets/apply time for HttpPushUri: say so plainly
            // rather than push an image that would be applied differently than asked.
            Err(e) => Err(RedfishError::Unsupported {
                bmc: self.bmc(),
                url: us_url.to_string(),
                what: format!(
                    "HttpPushUri needs {} set on the UpdateService (targets {:?}, apply time {:?}), and the BMC refused the PATCH: {e}",
                    fields.join(" and "),
                    req.targets,
                    req.apply_time,
                ),
            }),
        }
    }

    /// The UpdateService properties an HttpPushUri upload of `req` still needs changed
    /// (`HttpPushUriTargets`, `HttpPushUriOptions.HttpPushUriApplyTime`), empty when none;
    /// `warn` says when the service cannot take what the request asks.
    fn http_push_patch(&self, doc: &UpdateService, req: &UploadRequest, warn: bool) -> serde_json::Map<String, Value> {
        let mut patch = serde_json::Map::new();
        if !req.targets.is_empty() {
            if doc.http_push_uri_targets.is_some() {
                if doc.http_push_uri_targets.as_deref() != Some(req.targets.as_slice()) {
                    patch.insert("HttpPushUriTargets".into(), json!(req.targets));
                }
            } else if warn {
                tracing::warn!(bmc = %self.address(), "HttpPushUri without HttpPushUriTargets: targets are chosen by the BMC");
            }
        }
        if let Some(apply_time) = req.apply_time.as_deref() {
            let current = doc
                .http_push_uri_options
                .as_ref()
                .and_then(|o| o.get("HttpPushUriApplyTime"))
                .map(|a| a.get("ApplyTime").and_then(Value::as_str));
            match current {
                Some(Some(now)) if now == apply_time => {}
                Some(_) => {
                    patch.insert(
                        "HttpPushUriOptions".into(),
                        json!({ "HttpPushUriApplyTime": { "ApplyTime": apply_time } }),
                    );
                }
                None if warn => {
                    tracing::warn!(bmc = %self.address(), apply_time, "HttpPushUri without HttpPushUriOptions.HttpPushUriApplyTime: the BMC's default apply time is used");
                }
                None => {}
            }
        }
        patch
    }

    /// Turns an upload/action answer into `UploadAccepted`: any 2xx is accepted (200, 201, 202
    /// and 204 in practice); the task comes from `Location` or a Task body.
    async fn accepted(&self, route: UploadRoute, reply: Reply) -> Result<UploadAccepted, RedfishError> {
        let reply = self.ensure_success(reply)?;
        let task = self.task_of_answer(&reply).await;
        if task.is_none() {
            tracing::warn!(bmc = %self.address(), status = reply.status, url = %reply.url, "upload accepted without a task to follow");
        }
        Ok(UploadAccepted { route, task })
    }
}

fn file_name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "firmware.bin".into())
}

fn file_error(bmc: &str, path: &Path, e: impl std::fmt::Display) -> RedfishError {
    RedfishError::File { bmc: bmc.to_string(), path: path.to_path_buf(), cause: e.to_string() }
}

/// Opens the image as a streaming request body (reopened on every attempt).
fn open_image(bmc: &str, path: &Path) -> Result<reqwest::Body, RedfishError> {
    let file = std::fs::File::open(path).map_err(|e| file_error(bmc, path, e))?;
    Ok(reqwest::Body::from(tokio::fs::File::from_std(file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(multipart: bool, push: bool, simple: bool) -> UpdateServiceInfo {
        UpdateServiceInfo {
            multipart_uri: multipart.then(|| "/m".to_string()),
            http_push_uri: push.then(|| "/p".to_string()),
            simple_update_target: simple.then(|| "/s".to_string()),
            max_image_size: None,
        }
    }

    #[test]
    fn route_preference() {
        assert_eq!(choose_route(&info(true, true, true), None, true), Ok(UploadRoute::Multipart));
        assert_eq!(choose_route(&info(false, true, true), None, true), Ok(UploadRoute::HttpPush));
        assert_eq!(choose_route(&info(false, false, true), None, true), Ok(UploadRoute::SimpleUpdate));
        let e = choose_route(&info(false, false, true), None, false).unwrap_err();
        assert!(e.to_string().contains("only SimpleUpdate"), "{e}");
        assert!(choose_route(&info(false, false, false), None, true).is_err());
    }

    #[test]
    fn forced_route_must_be_advertised() {
        assert_eq!(
            choose_route(&info(true, true, true), Some(UploadRoute::HttpPush), false),
            Ok(UploadRoute::HttpPush)
        );
        assert!(choose_route(&info(false, true, true), Some(UploadRoute::Multipart), true).is_err());
        assert!(choose_route(&info(true, true, true), Some(UploadRoute::SimpleUpdate), false).is_err());
        assert_eq!(
            choose_route(&info(true, true, true), Some(UploadRoute::SimpleUpdate), true),
            Ok(UploadRoute::SimpleUpdate)
        );
    }

    #[test]
    fn info_from_doc() {
        let doc: UpdateService = serde_json::from_str(
            r##"{"MultipartHttpPushUri":"","HttpPushUri":"/redfish/v1/UpdateService/push","MaxImageSizeBytes":0,
                "Actions":{"#UpdateService.SimpleUpdate":{"target":"/redfish/v1/UpdateService/Actions/SimpleUpdate"}}}"##,
        )
        .unwrap();
        let i = UpdateServiceInfo::from_doc(&doc);
        assert_eq!(i.multipart_uri, None);
        assert_eq!(i.http_push_uri.as_deref(), Some("/redfish/v1/UpdateService/push"));
        assert_eq!(i.simple_update_target.as_deref(), Some("/redfish/v1/UpdateService/Actions/SimpleUpdate"));
        assert_eq!(i.max_image_size, None);
    }

    #[test]
    fn bodies() {
        let targets = vec!["/redfish/v1/UpdateService/FirmwareInventory/BMC_0".to_string()];
        assert_eq!(
            update_parameters(&targets, Some("OnReset")),
            json!({"Targets": targets, "@Redfish.OperationApplyTime": "OnReset"})
        );
        assert_eq!(update_parameters(&[], None), json!({"Targets": []}));
        let allowed = vec!["HTTP".to_string(), "HTTPS".to_string()];
        assert_eq!(
            simple_update_body("http://h/fw.bin", &targets, None, Some(&allowed)),
            json!({"ImageURI": "http://h/fw.bin", "TransferProtocol": "HTTP", "Targets": targets})
        );
        assert_eq!(
            simple_update_body("tftp://h/fw.bin", &[], Some("Immediate"), Some(&allowed)),
            json!({"ImageURI": "tftp://h/fw.bin", "@Redfish.OperationApplyTime": "Immediate"})
        );
        assert_eq!(simple_update_body("http://h/fw.bin", &[], None, None), json!({"ImageURI": "http://h/fw.bin"}));
    }
}
