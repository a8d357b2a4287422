//! The two OData documents every Redfish service exposes without authentication (DSP0266
//! "OData service and metadata document"): `GET /redfish/v1/odata` (the service document: the
//! root's top-level resources) and `GET /redfish/v1/$metadata` (CSDL: a reference to the DMTF
//! schema of each resource type this BMC serves, and the `Service` entity container). A profile
//! BMC serves its tree's captured `$metadata/index.xml` (the odata document is an ordinary
//! captured resource there). Documents only; no state.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::fleet::state::Host;
use crate::http::json::ok;
use crate::resources::uris;

/// Where the metadata document is served.
pub const METADATA_URI: &str = "/redfish/v1/$metadata";
/// Where the OData service document is served.
pub const ODATA_URI: &str = "/redfish/v1/odata";

/// The versioned namespaces of the resources the generic shape serves (keep in step with the
/// `@odata.type`s of its handlers); each schema file also holds the unversioned namespace.
const NAMESPACES: [&str; 18] = [
    "ServiceRoot.v1_15_0",
    "ComputerSystemCollection",
    "ComputerSystem.v1_20_0",
    "ManagerCollection",
    "Manager.v1_19_0",
    "ChassisCollection",
    "Chassis.v1_25_0",
    "UpdateService.v1_11_0",
    "SoftwareInventoryCollection",
    "SoftwareInventory.v1_12_0",
    "TaskService.v1_2_0",
    "TaskCollection",
    "Task.v1_7_0",
    "SessionService.v1_1_8",
    "SessionCollection",
    "Session.v1_7_0",
    "Message.v1_1_1",
    "Settings.v1_3_5",
];

/// The generic shape's top-level resources: `(name, uri)` as the service root links them.
const TOP_LEVEL: [(&str, &str); 6] = [
    ("Systems", uris::SYSTEMS),
    ("Managers", uris::MANAGERS),
    ("Chassis", uris::CHASSIS_COLLECTION),
    ("UpdateService", uris::UPDATE_SERVICE),
    ("Tasks", crate::tasks::routes::TASK_SERVICE_URI),
    ("SessionService", uris::SESSION_SERVICE),
];

/// `GET /redfish/v1/odata` of the generic shape.
pub async fn service_document() -> Response {
    let mut value = vec![json!({"name": "Service", "kind": "Singleton", "url": "/redfish/v1"})];
    value.extend(TOP_LEVEL.iter().map(|(name, url)| json!({"name": name, "kind": "Singleton", "url": url})));
    value.push(json!({"name": "Sessions", "kind": "Singleton", "url": uris::SESSIONS}));
    ok(json!({ "@odata.context": METADATA_URI, "value": value }))
}

/// `GET /redfish/v1/$metadata`: the tree's captured document on a profile BMC, else the
/// generic shape's.
pub async fn metadata(State(host): State<Arc<Host>>) -> Response {
    let captured = host.profile.as_ref().and_then(|p| std::fs::read(p.dir.join("redfish/v1/$metadata/index.xml")).ok());
    xml(captured.unwrap_or_else(|| generic_metadata().into_bytes()))
}

fn generic_metadata() -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <edmx:Edmx xmlns:edmx=\"http://docs.oasis-open.org/odata/ns/edmx\" Version=\"4.0\">\n",
    );
    for ns in NAMESPACES {
        let file = ns.split('.').next().unwrap_or(ns);
        out.push_str(&format!(
            "  <edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/{file}_v1.xml\">\n    \
             <edmx:Include Namespace=\"{file}\"/>\n"
        ));
        if ns != file {
            out.push_str(&format!("    <edmx:Include Namespace=\"{ns}\"/>\n"));
        }
        out.push_str("  </edmx:Reference>\n");
    }
    out.push_str(
        "  <edmx:DataServices>\n    \
         <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" Namespace=\"Service\">\n      \
         <EntityContainer Name=\"Service\" Extends=\"ServiceRoot.v1_15_0.ServiceContainer\"/>\n    \
         </Schema>\n  </edmx:DataServices>\n</edmx:Edmx>\n",
    );
    out
}

fn xml(body: Vec<u8>) -> Response {
    let mut resp = (StatusCode::OK, body).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/xml"));
    h.insert("OData-Version", HeaderValue::from_static("4.0"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_metadata_references_each_namespace_once_and_has_the_container() {
        let doc = generic_metadata();
        for ns in NAMESPACES {
            assert_eq!(doc.matches(&format!("Namespace=\"{ns}\"")).count(), 1, "{ns}");
        }
        assert!(doc.contains("<EntityContainer Name=\"Service\""));
    }
}
