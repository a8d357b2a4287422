//! Host platform settings on the ComputerSystem that an update of an ASSIGNED host goes through:
//! platform lockdown (`Oem.Hostfw.Lockdown`, Enabled/Disabled), the boot source override
//! (`Boot.BootSourceOverrideTarget` / `BootSourceOverrideEnabled`, checked against their
//! `@Redfish.AllowableValues`) and which image the host booted (`Oem.Hostfw.BootedImage`).
//!
//! Owns `lockdown`, `set_lockdown`, `set_boot_override` and `booted_image`, all on the host
//! System (the one with the Reset action, see `systems`), PATCHed with `If-Match` when it served
//! an ETag. The System is found through the ServiceRoot like every other resource; this file
//! never builds a URI, never resets the host (booting what was chosen is the caller's
//! `reset_system`) and never waits.

use serde_json::{json, Value};

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Fetched;
use crate::models::ComputerSystem;

/// The OEM namespace of the platform properties.
const OEM_VENDOR: &str = "Hostfw";

impl RedfishClient {
    /// Whether platform lockdown is enabled (`Oem.Hostfw.Lockdown` of the host System):
    /// `Some(true)` for "Enabled", `Some(false)` for "Disabled", `None` when the BMC has no such
    /// property. Any other value is a `Parse` error naming the System's URL.
    pub async fn lockdown(&self) -> Result<Option<bool>, RedfishError> {
        let system = self.host_system().await?;
        self.read_lockdown(&system)
    }

    /// Enables or disables platform lockdown (PATCH `{"Oem":{"Hostfw":{"Lockdown":...}}}` of the
    /// host System; 200 and 204 answers both count). A BMC without the property is an
    /// `Unsupported` error, and nothing is sent.
    pub async fn set_lockdown(&self, enabled: bool) -> Result<(), RedfishError> {
        let system = self.host_system().await?;
        if self.read_lockdown(&system)?.is_none() {
            return Err(RedfishError::Unsupported {
                bmc: self.bmc(),
                url: system.url.to_string(),
                what: format!("platform lockdown: the ComputerSystem has no Oem.{OEM_VENDOR}.Lockdown property"),
            });
        }
        let value = if enabled { "Enabled" } else { "Disabled" };
        self.patch_resource(
            &system,
            &json!({ "Oem": { OEM_VENDOR: { "Lockdown": value } } }),
        )
        .await?;
        tracing::info!(bmc = %self.address(), lockdown = value, "platform lockdown set");
        Ok(())
    }

    /// Sets the boot source override of the host System, e.g. `("Pxe", "Once")` to boot the
    /// discovery image at the next power-on. Both values are checked against the `Boot`
    /// object's `@Redfish.AllowableValues` when the BMC lists them (`ValueNotAllowed`, nothing
    /// sent); a System without `Boot` is `Unsupported`.
    pub async fn set_boot_override(&self, target: &str, enabled: &str) -> Result<(), RedfishError> {
        let system = self.host_system().await?;
        let url = &system.url;
        let boot = system
            .doc
            .boot
            .as_ref()
            .ok_or_else(|| RedfishError::Unsupported {
                bmc: self.bmc(),
                url: url.to_string(),
                what: "boot override: the ComputerSystem has no Boot property".into(),
            })?;
        for (property, value) in [
            ("BootSourceOverrideTarget", target),
            ("BootSourceOverrideEnabled", enabled),
        ] {
            match boot.allowable_values(property) {
                Some(allowed) if !allowed.is_empty() && !allowed.iter().any(|a| a == value) => {
                    return Err(RedfishError::ValueNotAllowed {
                        bmc: self.bmc(),
                        url: url.to_string(),
                        property: format!("Boot.{property}"),
                        value: value.to_string(),
                        allowed,
                    });
                }
                _ => {}
            }
        }
        let body = json!({
            "Boot": {
                "BootSourceOverrideTarget": target,
                "BootSourceOverrideEnabled": enabled,
            }
        });
        self.patch_resource(&system, &body).await?;
        tracing::info!(bmc = %self.address(), target, enabled, "boot override set");
        Ok(())
    }

    /// The image the host booted (`Oem.Hostfw.BootedImage` of the host System, e.g. "os" or
    /// "discovery"); `None` when the BMC does not report it.
    pub async fn booted_image(&self) -> Result<Option<String>, RedfishError> {
        let system = self.host_system().await?.doc;
        Ok(system
            .oem_property(OEM_VENDOR, "BootedImage")
            .and_then(Value::as_str)
            .map(str::to_string))
    }

    fn read_lockdown(
        &self,
        system: &Fetched<ComputerSystem>,
    ) -> Result<Option<bool>, RedfishError> {
        let Some(v) = system.doc.oem_property(OEM_VENDOR, "Lockdown") else {
            return Ok(None);
        };
        match v {
            Value::String(s) if s.eq_ignore_ascii_case("Enabled") => Ok(Some(true)),
            Value::String(s) if s.eq_ignore_ascii_case("Disabled") => Ok(Some(false)),
            Value::Bool(b) => Ok(Some(*b)),
            other => Err(RedfishError::Parse {
                bmc: self.bmc(),
                url: system.url.to_string(),
                cause: format!(
                    "Oem.{OEM_VENDOR}.Lockdown is {other}; expected \"Enabled\" or \"Disabled\""
                ),
            }),
        }
    }
}
