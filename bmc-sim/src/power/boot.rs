//! Discovery boot: the System's standard `Boot` override (`BootSourceOverrideTarget` None|Pxe|Hdd,
//! `BootSourceOverrideEnabled` Disabled|Once|Continuous) and which image the host runs after it
//! powers on (`Oem.Hostfw.BootedImage`: "discovery" after a PXE override, else "os"). A `Once`
//! override is consumed by the power-on that uses it. Data and rules only; no HTTP.

use serde_json::{json, Value};

/// `BootSourceOverrideTarget@Redfish.AllowableValues`.
pub const BOOT_TARGETS: [&str; 3] = ["None", "Pxe", "Hdd"];
/// `BootSourceOverrideEnabled@Redfish.AllowableValues`.
pub const BOOT_ENABLED: [&str; 3] = ["Disabled", "Once", "Continuous"];

/// The image the host is running (meaningful since its last power-on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BootedImage {
    /// The installed operating system.
    Os,
    /// The network-booted discovery image (PXE).
    Discovery,
}

impl BootedImage {
    pub fn as_str(self) -> &'static str {
        match self {
            BootedImage::Os => "os",
            BootedImage::Discovery => "discovery",
        }
    }
}

/// The System's boot source override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BootOverride {
    /// One of [`BOOT_TARGETS`].
    pub target: &'static str,
    /// One of [`BOOT_ENABLED`].
    pub enabled: &'static str,
}

impl Default for BootOverride {
    fn default() -> Self {
        BootOverride { target: "None", enabled: "Disabled" }
    }
}

impl BootOverride {
    /// The override a captured tree starts with (values this simulator does not model read as
    /// the default).
    pub fn captured(target: Option<&str>, enabled: Option<&str>) -> Self {
        let d = BootOverride::default();
        BootOverride {
            target: BOOT_TARGETS.into_iter().find(|t| Some(*t) == target).unwrap_or(d.target),
            enabled: BOOT_ENABLED.into_iter().find(|e| Some(*e) == enabled).unwrap_or(d.enabled),
        }
    }

    /// The host powers on: what it boots, consuming a `Once` override.
    pub fn power_on(&mut self) -> BootedImage {
        let image =
            if self.target == "Pxe" && self.enabled != "Disabled" { BootedImage::Discovery } else { BootedImage::Os };
        if self.enabled == "Once" {
            *self = BootOverride::default();
        }
        image
    }

    /// The `Boot` property of the ComputerSystem.
    pub fn to_json(&self) -> Value {
        json!({
            "BootSourceOverrideTarget": self.target,
            "BootSourceOverrideTarget@Redfish.AllowableValues": BOOT_TARGETS,
            "BootSourceOverrideEnabled": self.enabled,
            "BootSourceOverrideEnabled@Redfish.AllowableValues": BOOT_ENABLED,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_pxe_boots_discovery_then_os() {
        let mut b = BootOverride { target: "Pxe", enabled: "Once" };
        assert_eq!(b.power_on(), BootedImage::Discovery);
        assert_eq!(b, BootOverride::default(), "Once is consumed");
        assert_eq!(b.power_on(), BootedImage::Os);
    }

    #[test]
    fn continuous_pxe_stays_and_hdd_or_disabled_boot_os() {
        let mut b = BootOverride { target: "Pxe", enabled: "Continuous" };
        assert_eq!(b.power_on(), BootedImage::Discovery);
        assert_eq!(b.power_on(), BootedImage::Discovery);
        let mut b = BootOverride { target: "Pxe", enabled: "Disabled" };
        assert_eq!(b.power_on(), BootedImage::Os);
        let mut b = BootOverride { target: "Hdd", enabled: "Once" };
        assert_eq!(b.power_on(), BootedImage::Os);
        assert_eq!(b, BootOverride::default());
    }
}
