//! `AcCycleSetting`: how one host model's AC power cycle (power drain) is done over Redfish,
//! written in the catalog (`[host_models.<key>] ac_cycle = {...}`). No standard names the device:
//! on one BMC it is `#Chassis.Reset` `PowerCycle` of the host's chassis, on a GB200 tray it is the
//! OEM `#NvidiaChassis.AuxPowerReset` of `Chassis/BMC_0` (whose own `PowerCycle` would cycle only
//! the BMC), and many BMCs offer none. So hostfw never guesses: a model without `ac_cycle` refuses
//! an activation that needs a power drain, with that reason.
//!
//! ```toml
//! # NVIDIA GB200 NVL: host off, the tray's auxiliary power cycled, host on
//! ac_cycle = { resource = "/redfish/v1/Chassis/BMC_0", action = "#NvidiaChassis.AuxPowerReset", reset_type = "AuxPowerCycle", power_off_first = true }
//! # a BMC whose host chassis offers the standard action
//! ac_cycle = { resource = "/redfish/v1/Chassis/1", action = "#Chassis.Reset", reset_type = "PowerCycle" }
//! ```
//!
//! Pure data and its validation; the Redfish calls that use it live in the redfish crate.

use serde::{Deserialize, Serialize};

/// Which action of which resource cycles the host's AC power.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawAcCycle")]
pub struct AcCycleSetting {
    /// The resource that carries the action (`/redfish/v1/...`, as the vendor documents it).
    pub resource: String,
    /// The action's name as the resource lists it under `Actions` or `Actions.Oem`
    /// (`#Chassis.Reset`, `#NvidiaChassis.AuxPowerReset`).
    pub action: String,
    /// The `ResetType` to send; `None` sends an empty body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_type: Option<String>,
    /// Power the host off first (`ComputerSystem.Reset` `ForceOff`) and on again after.
    #[serde(default)]
    pub power_off_first: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAcCycle {
    resource: String,
    action: String,
    #[serde(default)]
    reset_type: Option<String>,
    #[serde(default)]
    power_off_first: bool,
}

/// Why an `ac_cycle` catalog setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcCycleError {
    #[error("ac_cycle.resource {0:?}: expected a resource path starting with /redfish/v1/")]
    Resource(String),
    #[error("ac_cycle.action {0:?}: expected an action name such as \"#Chassis.Reset\"")]
    Action(String),
    #[error("ac_cycle.reset_type: empty (leave it out to send no ResetType)")]
    EmptyResetType,
}

impl TryFrom<RawAcCycle> for AcCycleSetting {
    type Error = AcCycleError;
    fn try_from(raw: RawAcCycle) -> Result<Self, AcCycleError> {
        let resource = raw.resource.trim().trim_end_matches('/').to_string();
        if !resource.starts_with("/redfish/v1/") || resource.contains(['?', '#', ' ']) {
            return Err(AcCycleError::Resource(raw.resource));
        }
        let action = raw.action.trim().to_string();
        if !action.starts_with('#') || !action.contains('.') {
            return Err(AcCycleError::Action(raw.action));
        }
        let reset_type = raw.reset_type.map(|t| t.trim().to_string());
        if reset_type.as_deref() == Some("") {
            return Err(AcCycleError::EmptyResetType);
        }
        Ok(AcCycleSetting { resource, action, reset_type, power_off_first: raw.power_off_first })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AcCycleSetting, String> {
        #[derive(Deserialize)]
        struct Doc {
            ac_cycle: AcCycleSetting,
        }
        toml::from_str::<Doc>(text).map(|d| d.ac_cycle).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_the_gb200_tray_cycle_and_the_standard_one() {
        let gb = parse(r##"ac_cycle = { resource = "/redfish/v1/Chassis/BMC_0/", action = "#NvidiaChassis.AuxPowerReset", reset_type = "AuxPowerCycle", power_off_first = true }"##).unwrap();
        assert_eq!(gb.resource, "/redfish/v1/Chassis/BMC_0");
        assert!(gb.power_off_first);
        let std = parse(r##"ac_cycle = { resource = "/redfish/v1/Chassis/1", action = "#Chassis.Reset", reset_type = "PowerCycle" }"##).unwrap();
        assert!(!std.power_off_first);
        assert_eq!(std.reset_type.as_deref(), Some("PowerCycle"));
    }

    #[test]
    fn refuses_what_cannot_work() {
        let e = parse(r##"ac_cycle = { resource = "Chassis/1", action = "#Chassis.Reset" }"##).unwrap_err();
        assert!(e.contains("/redfish/v1/"), "{e}");
        let e = parse(r##"ac_cycle = { resource = "/redfish/v1/Chassis/1", action = "Reset" }"##).unwrap_err();
        assert!(e.contains("ac_cycle.action"), "{e}");
        let e = parse(
            r##"ac_cycle = { resource = "/redfish/v1/Chassis/1", action = "#Chassis.Reset", reset_type = " " }"##,
        )
        .unwrap_err();
        assert!(e.contains("reset_type"), "{e}");
    }
}
