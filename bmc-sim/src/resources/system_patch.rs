//! `PATCH` of the ComputerSystem: platform lockdown (`{"Oem":{"Hostfw":{"Lockdown":
//! "Enabled"|"Disabled"}}}`) and the boot override (`{"Boot":{"BootSourceOverrideTarget":"Pxe",
//! "BootSourceOverrideEnabled":"Once"}}`). The whole body is checked before anything changes;
//! unknown, read-only or out-of-list values answer 400 with a Base message. The answer is
//! 200 + the System (task styles spec, dell) or 204 (bmcweb, sushy), as those BMCs do.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::fleet::state::Host;
use crate::http::error::RedfishError;
use crate::http::json::ok;
use crate::power::boot::{BOOT_ENABLED, BOOT_TARGETS};
use crate::resources::inventory::system_json;
use crate::update::params::parse_object;
use hostfw_fleet::TaskStyle;

/// Largest PATCH body read.
const MAX_PATCH_BODY: usize = 64 << 10;
/// System properties a client may read but not PATCH here.
const READ_ONLY: [&str; 12] = [
    "@odata.id",
    "@odata.type",
    "Id",
    "Name",
    "SystemType",
    "Manufacturer",
    "Model",
    "SerialNumber",
    "PowerState",
    "BiosVersion",
    "Status",
    "Links",
];

/// The changes a valid PATCH body asks for.
#[derive(Debug, Default)]
struct SystemPatch {
    lockdown: Option<bool>,
    boot_target: Option<&'static str>,
    boot_enabled: Option<&'static str>,
}

/// `PATCH /redfish/v1/Systems/<id>`.
pub async fn patch_system(State(host): State<Arc<Host>>, req: Request) -> Response {
    let patch = match read_patch(req).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    // A captured tree has no `Oem.Hostfw`: its lockdown is the vendor's own property.
    if host.profile.is_some() && patch.lockdown.is_some() {
        return unknown("Oem/Hostfw").into_response();
    }
    let body = {
        let mut d = host.data();
        if let Some(l) = patch.lockdown {
            d.lockdown = l;
            d.stats.setting_patches += 1;
        }
        if let Some(t) = patch.boot_target {
            d.boot.target = t;
        }
        if let Some(e) = patch.boot_enabled {
            d.boot.enabled = e;
        }
        match crate::profile::documents::system_doc(&host, &d) {
            Some(doc) => doc,
            None => system_json(&host, &d),
        }
    };
    tracing::info!(host = %host.spec.id, ?patch, "system patched");
    match host.spec.task_style {
        TaskStyle::Spec | TaskStyle::Dell => ok(body),
        TaskStyle::Bmcweb | TaskStyle::Sushy => StatusCode::NO_CONTENT.into_response(),
    }
}

async fn read_patch(req: Request) -> Result<SystemPatch, RedfishError> {
    let bytes = axum::body::to_bytes(req.into_body(), MAX_PATCH_BODY)
        .await
        .map_err(|_| RedfishError::bad_request("GeneralError", "Unreadable or oversized request body."))?;
    let body = parse_object(&bytes)?;
    if body.is_empty() {
        return Err(RedfishError::bad_request(
            "EmptyJSON",
            "The request body submitted contained an empty JSON object and the service is unable to process it.",
        ));
    }
    let mut patch = SystemPatch::default();
    for (key, value) in &body {
        match key.as_str() {
            "Boot" => read_boot(object(value, "Boot")?, &mut patch)?,
            "Oem" => read_oem(object(value, "Oem")?, &mut patch)?,
            k if READ_ONLY.contains(&k) || k == "Actions" => return Err(not_writable(k)),
            k => return Err(unknown(k)),
        }
    }
    Ok(patch)
}

fn read_boot(boot: &Map<String, Value>, patch: &mut SystemPatch) -> Result<(), RedfishError> {
    for (key, value) in boot {
        match key.as_str() {
            "BootSourceOverrideTarget" => {
                patch.boot_target = Some(one_of(value, "Boot/BootSourceOverrideTarget", &BOOT_TARGETS)?)
            }
            "BootSourceOverrideEnabled" => {
                patch.boot_enabled = Some(one_of(value, "Boot/BootSourceOverrideEnabled", &BOOT_ENABLED)?)
            }
            k => return Err(unknown(&format!("Boot/{k}"))),
        }
    }
    Ok(())
}

fn read_oem(oem: &Map<String, Value>, patch: &mut SystemPatch) -> Result<(), RedfishError> {
    for (vendor, value) in oem {
        if vendor != "Hostfw" {
            return Err(unknown(&format!("Oem/{vendor}")));
        }
        for (key, value) in object(value, "Oem/Hostfw")? {
            match key.as_str() {
                "Lockdown" => {
                    let v = one_of(value, "Oem/Hostfw/Lockdown", &["Enabled", "Disabled"])?;
                    patch.lockdown = Some(v == "Enabled");
                }
                "BootedImage" => return Err(not_writable("Oem/Hostfw/BootedImage")),
                k => return Err(unknown(&format!("Oem/Hostfw/{k}"))),
            }
        }
    }
    Ok(())
}

fn object<'a>(v: &'a Value, property: &str) -> Result<&'a Map<String, Value>, RedfishError> {
    v.as_object().ok_or_else(|| {
        RedfishError::bad_request(
            "PropertyValueTypeError",
            format!("The value {v} for the property {property} is not a JSON object."),
        )
    })
}

/// The allowed value `v` names, as the `'static` spelling from `allowed`.
fn one_of(v: &Value, property: &str, allowed: &[&'static str]) -> Result<&'static str, RedfishError> {
    let Some(s) = v.as_str() else {
        return Err(RedfishError::bad_request(
            "PropertyValueTypeError",
            format!("The value {v} for the property {property} is not a string."),
        ));
    };
    allowed.iter().copied().find(|a| *a == s).ok_or_else(|| {
        RedfishError::bad_request(
            "PropertyValueNotInList",
            format!("The value '{s}' for the property {property} is not in the list of acceptable values {allowed:?}."),
        )
    })
}

fn unknown(property: &str) -> RedfishError {
    RedfishError::bad_request(
        "PropertyUnknown",
        format!("The property {property} is not in the list of valid properties for the resource."),
    )
}

fn not_writable(property: &str) -> RedfishError {
    RedfishError::bad_request(
        "PropertyNotWritable",
        format!("The property {property} is a read only property and cannot be assigned a value."),
    )
}
