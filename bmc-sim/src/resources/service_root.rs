//! The unauthenticated entry points: `GET /redfish` (version document) and the ServiceRoot
//! `GET /redfish/v1` (links, and the `ProtocolFeaturesSupported` of `expand`). No state changes.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde_json::json;

use crate::fleet::state::Host;
use crate::http::json::{link, ok};
use crate::resources::uris;

pub async fn versions() -> Response {
    ok(json!({ "v1": uris::SERVICE_ROOT }))
}

pub async fn service_root(State(host): State<Arc<Host>>) -> Response {
    let mut root = json!({
        "@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot",
        "@odata.id": uris::SERVICE_ROOT,
        "Id": "RootService",
        "Name": "Root Service",
        "RedfishVersion": "1.17.0",
        "UUID": stable_uuid(&host.spec.id),
        "Vendor": host.spec.vendor,
        "Product": "hostfw bmc-sim",
        "Systems": link(uris::SYSTEMS),
        "Managers": link(uris::MANAGERS),
        "Chassis": link(uris::CHASSIS_COLLECTION),
        "UpdateService": link(uris::UPDATE_SERVICE),
        // The DMTF name of the TaskService link, as every real BMC's root has it.
        "Tasks": link(crate::tasks::routes::TASK_SERVICE_URI),
        "SessionService": link(uris::SESSION_SERVICE),
        "Links": { "Sessions": link(uris::SESSIONS) },
    });
    if host.spec.expand_query {
        root["ProtocolFeaturesSupported"] =
            crate::resources::expand::protocol_features(&host.spec.vendor, &host.spec.model);
    }
    ok(root)
}

/// The same UUID for the same host id on every start.
fn stable_uuid(host_id: &str) -> String {
    let half = |salt: u8| {
        let mut h = DefaultHasher::new();
        (salt, host_id).hash(&mut h);
        h.finish()
    };
    uuid::Uuid::from_u64_pair(half(1), half(2)).to_string()
}
