//! Read-only Chassis resources: the Chassis collection and its one member, which links the
//! System and the Manager and advertises `#Chassis.Reset` (the AC power cycle, `ac_cycle`).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde_json::json;

use crate::fleet::state::Host;
use crate::http::json::{collection, link, ok};
use crate::power::reset_types::CHASSIS_RESET_TYPES;
use crate::resources::uris;

pub async fn chassis_collection(State(_host): State<Arc<Host>>) -> Response {
    ok(collection(
        "#ChassisCollection.ChassisCollection",
        uris::CHASSIS_COLLECTION,
        "Chassis Collection",
        vec![uris::CHASSIS.to_string()],
    ))
}

pub async fn chassis(State(host): State<Arc<Host>>) -> Response {
    let power = host.data().power.as_str();
    let mut body = json!({
        "@odata.type": "#Chassis.v1_25_0.Chassis",
        "@odata.id": uris::CHASSIS,
        "Id": "1",
        "Name": "Chassis",
        "ChassisType": "RackMount",
        "Manufacturer": host.spec.vendor,
        "Model": host.spec.model,
        "PowerState": power,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Actions": {
            "#Chassis.Reset": {
                "target": uris::CHASSIS_RESET,
                "ResetType@Redfish.AllowableValues": CHASSIS_RESET_TYPES,
            }
        },
        "Links": {
            "ComputerSystems": [link(uris::SYSTEM)],
            "ManagedBy": [link(uris::MANAGER)],
        },
    });
    if let Some(serial) = &host.spec.serial {
        body["SerialNumber"] = json!(serial);
    }
    ok(body)
}
