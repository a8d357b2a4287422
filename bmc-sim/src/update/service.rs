//! The UpdateService resource: which push URIs and actions a host ADVERTISES, per its
//! `upload_style`. The push endpoints themselves are `update::push` and `update::simple`.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde_json::json;

use crate::fleet::state::Host;
use crate::http::json::{link, ok};
use crate::resources::uris;
use crate::update::image::MAX_IMAGE_BYTES;
use hostfw_fleet::UploadStyle;

/// Whether a host of this style serves `MultipartHttpPushUri`.
pub fn advertises_multipart(style: UploadStyle) -> bool {
    style == UploadStyle::Multipart
}

/// Whether a host of this style serves the legacy `HttpPushUri`.
pub fn advertises_http_push(style: UploadStyle) -> bool {
    style == UploadStyle::HttpPush
}

pub async fn update_service(State(host): State<Arc<Host>>) -> Response {
    let style = host.spec.upload_style;
    let apply_times = ["Immediate", "OnReset"];
    let mut body = json!({
        "@odata.type": "#UpdateService.v1_11_0.UpdateService",
        "@odata.id": uris::UPDATE_SERVICE,
        "Id": "UpdateService",
        "Name": "Update Service",
        "ServiceEnabled": true,
        "Status": {"State": "Enabled", "Health": "OK"},
        "MaxImageSizeBytes": MAX_IMAGE_BYTES,
        "FirmwareInventory": link(uris::FIRMWARE_INVENTORY),
        "Actions": {
            "#UpdateService.SimpleUpdate": {
                "target": uris::SIMPLE_UPDATE,
                "TransferProtocol@Redfish.AllowableValues": ["HTTP", "HTTPS"],
                "@Redfish.OperationApplyTimeSupport": {
                    "@odata.type": "#Settings.v1_3_5.OperationApplyTimeSupport",
                    "SupportedValues": apply_times,
                },
            }
        },
    });
    if advertises_multipart(style) {
        body["MultipartHttpPushUri"] = json!(uris::MULTIPART_PUSH);
    }
    if advertises_http_push(style) {
        body["HttpPushUri"] = json!(uris::HTTP_PUSH);
        body["HttpPushUriOptions"] = json!({
            "HttpPushUriApplyTime": {
                "ApplyTime": host.spec.apply_time.as_str(),
                "ApplyTime@Redfish.AllowableValues": apply_times,
            }
        });
    }
    ok(body)
}
