//! Test helpers: build catalogs from TOML text and inventory reports from (id, version) pairs.
#![allow(dead_code)]

use std::path::Path;

use hostfw_model::{Catalog, HostModel, InventoryMember, InventoryReport, SiteConfig};

pub const ORIGIN: &str = "/nonexistent/site.toml";

/// `[site]` header every config text needs.
pub const SITE: &str = "[site]\nname = \"t\"\n";

/// Loads config text (with `[site]` prepended) then its catalog; errors as display strings.
pub fn catalog(text: &str) -> Result<Catalog, String> {
    let full = format!("{SITE}{text}");
    let config = SiteConfig::from_toml_str(&full, Path::new(ORIGIN)).map_err(|e| e.to_string())?;
    Catalog::load(&config).map_err(|e| e.to_string())
}

/// The single model of a catalog text; panics with the error otherwise (tests only).
pub fn model(text: &str) -> HostModel {
    match catalog(text) {
        Ok(c) if c.models.len() == 1 => c.models[0].clone(),
        Ok(c) => panic!("expected one model, got {}", c.models.len()),
        Err(e) => panic!("catalog error: {e}"),
    }
}

/// A report whose members reported these `Version`s with `Status.State` Enabled, read the way the
/// crawl reads them (`InventoryMember::reported`).
pub fn report(members: &[(&str, &str)]) -> InventoryReport {
    let members: Vec<(&str, Option<&str>, Option<&str>)> =
        members.iter().map(|(id, v)| (*id, Some(*v), Some("Enabled"))).collect();
    report_of(&members)
}

/// A report from `(id, Version or None for absent/null, Status.State or None)` triples.
pub fn report_of(members: &[(&str, Option<&str>, Option<&str>)]) -> InventoryReport {
    InventoryReport {
        vendor: "Dell".into(),
        model: "PowerEdge R760".into(),
        serial: None,
        power_state: Some("On".into()),
        members: members
            .iter()
            .map(|(id, version, state)| {
                InventoryMember::reported(
                    *id,
                    format!("/redfish/v1/UpdateService/FirmwareInventory/{id}"),
                    *version,
                    *state,
                )
            })
            .collect(),
    }
}

/// A model with bmc (1.0), uefi (2.0), nic (no default) and `ordering` as given (TOML array text).
pub fn three_components(ordering: &str) -> HostModel {
    model(&format!(
        r#"
[host_models.m]
vendor = "Dell"
model = "PowerEdge R760"
ordering = {ordering}
[host_models.m.components.bmc]
current_version_reported_as = "^BMC"
[[host_models.m.components.bmc.known_firmware]]
version = "1.0"
default = true
filename = "bmc.bin"
[host_models.m.components.uefi]
current_version_reported_as = "^BIOS"
[[host_models.m.components.uefi.known_firmware]]
version = "2.0"
default = true
filename = "bios.bin"
[host_models.m.components.nic]
current_version_reported_as = "^NIC"
[[host_models.m.components.nic.known_firmware]]
version = "9.9"
filename = "nic.bin"
"#
    ))
}

/// A Ready, unassigned, healthy host whose drifted components are `targets`' (no window needed).
pub fn drifted_host(id: &str, targets: Vec<hostfw_model::gates::Target>) -> hostfw_model::HostView {
    hostfw_model::HostView {
        repair: false,
        machine_id: id.into(),
        state: hostfw_model::HostState::Ready,
        assigned: false,
        auto_update: None,
        window: None,
        has_request: false,
        exhausted: false,
        unhealthy: false,
        firmware: hostfw_model::FirmwareStatus::Drifted {
            explicit_start_needed: false,
            differing: targets.iter().map(|t| t.component).collect(),
            unmatched: vec![],
            not_reported: vec![],
        },
        labels: Default::default(),
        targets,
    }
}
