//! `firmware show`: the effective catalog (including the stored firmware-config layer), one row
//! per vendor, model and component default.

use serde::Serialize;

use crate::context::Context;
use crate::output;

/// One component of one model in the effective catalog (`GET /v1/firmware` answers a list).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = FirmwareRow))]
pub struct Row {
    vendor: String,
    model: String,
    component: String,
    /// How the installed version is found in the BMC's inventory (the catalog's matcher).
    matcher: String,
    /// The model's default version of this component, `-` when it has none.
    version: String,
    /// Updates of this model wait for `start-updates`.
    explicit_start_needed: bool,
}

/// `firmware show`.
pub async fn show(ctx: &Context) -> anyhow::Result<()> {
    let catalog = crate::firmware_config::effective_catalog(ctx).await?;
    let mut rows = Vec::new();
    for model in catalog.models() {
        for component in model.effective_ordering() {
            let Some(c) = model.components.get(&component) else { continue };
            let version = model.default_entry(component).map(|e| e.version.clone()).unwrap_or_else(|| "-".into());
            rows.push(Row {
                vendor: model.vendor.clone(),
                model: model.model.clone(),
                component: component.to_string(),
                matcher: c.current_version_reported_as.to_string(),
                version,
                explicit_start_needed: model.explicit_start_needed,
            });
        }
    }
    let table = rows
        .iter()
        .map(|r| {
            vec![
                r.vendor.clone(),
                r.model.clone(),
                r.component.clone(),
                r.matcher.clone(),
                r.version.clone(),
                r.explicit_start_needed.to_string(),
            ]
        })
        .collect();
    output::print(
        ctx.format,
        &rows,
        &["VENDOR", "MODEL", "COMPONENT", "INVENTORY MATCHER", "VERSION", "EXPLICIT START"],
        table,
    )
}
