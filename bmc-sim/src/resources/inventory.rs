//! Read-only inventory resources: the Systems and Managers collections and their one member
//! each (the System shows `Boot` and `Oem.Hostfw` {Lockdown, BootedImage}), and the
//! FirmwareInventory (SoftwareInventory members, minus those the `hide_members` fault hides, plus
//! one `Staged` entry per image waiting for its activation, as Redfish SoftwareInventory v1_12
//! models it: `Staged: true`, `Active: false`, `Links.StagedTargets` naming the running member),
//! with the members inline on `$expand` (`expand` says which forms), as the Systems collection
//! has its System.
//! Resets, updates and the System PATCH live elsewhere.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::fleet::state::{Host, HostData, Member};
use crate::http::error::RedfishError;
use crate::http::json::{collection, link, ok};
use crate::power::reset_types::{MANAGER_RESET_TYPES, SYSTEM_RESET_TYPES};
use crate::resources::uris;

/// The Systems collection; with `$expand` (`.` or `*`) the System's document inline.
pub async fn systems(State(host): State<Arc<Host>>, uri: Uri) -> Response {
    let expand = match crate::resources::expand::requested(&host, uri.query()) {
        Ok(e) => e,
        Err(e) => return e.into_response(),
    };
    let members = vec![uris::SYSTEM.to_string()];
    let mut body = collection(
        "#ComputerSystemCollection.ComputerSystemCollection",
        uris::SYSTEMS,
        "Computer System Collection",
        members,
    );
    if expand == Some(crate::resources::expand::Expand::Members) {
        let mut d = host.data();
        crate::resources::expand::expand_members(&mut body, |uri| {
            (uri == uris::SYSTEM).then(|| system_json(&host, &d))
        });
        d.stats.expanded_reads += 1;
    }
    ok(body)
}

pub async fn system(State(host): State<Arc<Host>>) -> Response {
    let body = system_json(&host, &host.data());
    ok(body)
}

/// The ComputerSystem resource.
pub(crate) fn system_json(host: &Host, d: &HostData) -> Value {
    let mut body = json!({
        "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
        "@odata.id": uris::SYSTEM,
        "Id": "System.Embedded.1",
        "Name": "System",
        "SystemType": "Physical",
        "Manufacturer": host.spec.vendor,
        "Model": host.spec.model,
        "PowerState": d.power.as_str(),
        "Status": {"State": "Enabled", "Health": "OK"},
        "Actions": {
            "#ComputerSystem.Reset": {
                "target": uris::SYSTEM_RESET,
                "ResetType@Redfish.AllowableValues": SYSTEM_RESET_TYPES,
            }
        },
        "Boot": d.boot.to_json(),
        "Oem": {
            "Hostfw": {
                "Lockdown": if d.lockdown { "Enabled" } else { "Disabled" },
                "BootedImage": d.booted_image.as_str(),
            }
        },
        "Links": {
            "ManagedBy": [link(uris::MANAGER)],
            "Chassis": [link(uris::CHASSIS)],
        },
    });
    if let Some(serial) = &host.spec.serial {
        body["SerialNumber"] = json!(serial);
    }
    if let Some(bios) = d.bios_version() {
        body["BiosVersion"] = json!(bios);
    }
    body
}

pub async fn managers(State(_host): State<Arc<Host>>) -> Response {
    let members = vec![uris::MANAGER.to_string()];
    ok(collection("#ManagerCollection.ManagerCollection", uris::MANAGERS, "Manager Collection", members))
}

pub async fn manager(State(host): State<Arc<Host>>) -> Response {
    let d = host.data();
    ok(json!({
        "@odata.type": "#Manager.v1_19_0.Manager",
        "@odata.id": uris::MANAGER,
        "Id": "BMC",
        "Name": "Manager",
        "ManagerType": "BMC",
        "Manufacturer": host.spec.vendor,
        "FirmwareVersion": d.bmc_version(),
        "Status": {"State": "Enabled", "Health": "OK"},
        "Actions": {
            "#Manager.Reset": {
                "target": uris::MANAGER_RESET,
                "ResetType@Redfish.AllowableValues": MANAGER_RESET_TYPES,
            }
        },
        "Links": { "ManagerForServers": [link(uris::SYSTEM)] },
    }))
}

/// Id of the inventory entry of the image staged for member `id`.
fn staged_id(id: &str) -> String {
    format!("{id}{STAGED_SUFFIX}")
}

const STAGED_SUFFIX: &str = "-Staged";

/// The FirmwareInventory; with `$expand` (`.` or `*`, as advertised: `expand`) each member's
/// document inline.
pub async fn firmware_inventory(State(host): State<Arc<Host>>, uri: Uri) -> Response {
    let expand = match crate::resources::expand::requested(&host, uri.query()) {
        Ok(e) => e,
        Err(e) => return e.into_response(),
    };
    let mut d = host.data();
    let mut members: Vec<String> = d.visible_members().map(|m| uris::firmware_member(&m.id)).collect();
    members
        .extend(d.visible_members().filter(|m| m.staged.is_some()).map(|m| uris::firmware_member(&staged_id(&m.id))));
    let mut body = collection(
        "#SoftwareInventoryCollection.SoftwareInventoryCollection",
        uris::FIRMWARE_INVENTORY,
        "Firmware Inventory Collection",
        members,
    );
    if expand == Some(crate::resources::expand::Expand::Members) {
        crate::resources::expand::expand_members(&mut body, |uri| {
            let id = uri.strip_prefix(uris::FIRMWARE_INVENTORY)?.strip_prefix('/')?;
            member_doc(&d, id)
        });
        d.stats.expanded_reads += 1;
    }
    ok(body)
}

pub async fn firmware_member(State(host): State<Arc<Host>>, Path(id): Path<String>, uri: Uri) -> Response {
    let body = member_doc(&host.data(), &id);
    match body {
        Some(b) => ok(b),
        None => RedfishError::not_found(uri.path()).into_response(),
    }
}

/// The document of member `id` (a running member, or the entry of an image staged for one).
fn member_doc(d: &HostData, id: &str) -> Option<Value> {
    match d.visible_members().find(|m| m.id == id) {
        Some(m) => Some(member_json(m)),
        None => id
            .strip_suffix(STAGED_SUFFIX)
            .and_then(|running| d.visible_members().find(|m| m.id == running))
            .and_then(staged_json),
    }
}

fn member_json(m: &Member) -> Value {
    json!({
        "@odata.type": "#SoftwareInventory.v1_12_0.SoftwareInventory",
        "@odata.id": uris::firmware_member(&m.id),
        "Id": m.id,
        "Name": m.name,
        "Version": m.version,
        "SoftwareId": m.id,
        "Updateable": m.updateable,
        "Active": true,
        "Status": {"State": "Enabled", "Health": "OK"},
    })
}

/// The entry of the image staged for `m`, if any.
fn staged_json(m: &Member) -> Option<Value> {
    let staged = m.staged.as_ref()?;
    let id = staged_id(&m.id);
    Some(json!({
        "@odata.type": "#SoftwareInventory.v1_12_0.SoftwareInventory",
        "@odata.id": uris::firmware_member(&id),
        "Id": id,
        "Name": format!("{} (staged)", m.name),
        "Version": staged.version,
        "SoftwareId": m.id,
        "Updateable": false,
        "Active": false,
        "Staged": true,
        "Status": {"State": "StandbyOffline", "Health": "OK"},
        "Links": { "StagedTargets": [link(&uris::firmware_member(&m.id))] },
    }))
}
