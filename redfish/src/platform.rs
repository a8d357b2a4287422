//! Host platform settings on the ComputerSystem that an update of an ASSIGNED host goes through:
//! the boot source override (`Boot.BootSourceOverrideTarget` / `BootSourceOverrideEnabled`,
//! checked against their `@Redfish.AllowableValues`) and which image the host booted
//! (`Oem.Hostfw.BootedImage`, which only bmc-sim's generic shape reports; a real BMC does not,
//! and the caller then boots unconditionally). Lockdown is the model's own property: `lockdown`.
//!
//! Owns `set_boot_override` and `booted_image`, both on the host
//! System (the one with the Reset action, see `systems`), PATCHed with `If-Match` when it served
//! an ETag. The System is found through the ServiceRoot like every other resource; this file
//! never builds a URI, never resets the host (booting what was chosen is the caller's
//! `reset_system`) and never waits.

use serde_json::{json, Value};

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Redecided;
use crate::models::ComputerSystem;

/// The OEM namespace of the platform properties.
const OEM_VENDOR: &str = "Hostfw";

impl RedfishClient {
    /// Sets the boot source override of the host System, e.g. `("Pxe", "Once")` to boot the
    /// discovery image at the next power-on. Both values are checked against the `Boot`
    /// object's `@Redfish.AllowableValues` when the BMC lists them (`ValueNotAllowed`, nothing
    /// sent); a System without `Boot` is `Unsupported`.
    pub async fn set_boot_override(&self, target: &str, enabled: &str) -> Result<(), RedfishError> {
        let system = self.host_system().await?;
        let url = system.url.clone();
        self.check_boot_override(&url, &system.doc, target, enabled)?;
        let body = json!({
            "Boot": {
                "BootSourceOverrideTarget": target,
                "BootSourceOverrideEnabled": enabled,
            }
        });
        // After a 412 the System read again decides: already set (nothing sent), no longer
        // allowed (refused), or the same PATCH with its fresh ETag.
        let redecide = |fresh: &Value| {
            let doc: ComputerSystem = serde_json::from_value(fresh.clone()).map_err(|e| RedfishError::Parse {
                bmc: self.bmc(),
                url: url.to_string(),
                cause: e.to_string(),
            })?;
            self.check_boot_override(&url, &doc, target, enabled)?;
            let boot = doc.boot.as_ref();
            let set = boot.and_then(|b| b.boot_source_override_target.as_deref()) == Some(target)
                && boot.and_then(|b| b.boot_source_override_enabled.as_deref()) == Some(enabled);
            Ok(if set { Redecided::AlreadyDone } else { Redecided::Write(body.clone()) })
        };
        self.patch_resource(&system, &body, &redecide).await?;
        tracing::info!(bmc = %self.address(), target, enabled, "boot override set");
        Ok(())
    }

    /// Whether the System offers `Boot` and allows both values (when it lists them).
    fn check_boot_override(
        &self,
        url: &url::Url,
        system: &ComputerSystem,
        target: &str,
        enabled: &str,
    ) -> Result<(), RedfishError> {
        let boot = system.boot.as_ref().ok_or_else(|| RedfishError::Unsupported {
            bmc: self.bmc(),
            url: url.to_string(),
            what: "boot override: the ComputerSystem has no Boot property".into(),
        })?;
        for (property, value) in [("BootSourceOverrideTarget", target), ("BootSourceOverrideEnabled", enabled)] {
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
        Ok(())
    }

    /// The image the host booted (`Oem.Hostfw.BootedImage` of the host System, e.g. "os" or
    /// "discovery"); `None` when the BMC does not report it.
    pub async fn booted_image(&self) -> Result<Option<String>, RedfishError> {
        let system = self.host_system().await?.doc;
        Ok(system.oem_property(OEM_VENDOR, "BootedImage").and_then(Value::as_str).map(str::to_string))
    }
}
