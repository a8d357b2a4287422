//! `LockdownSetting`: how one host model's platform lockdown is read and changed over Redfish,
//! written in the catalog (`[host_models.<key>.lockdown]`). Real BMCs keep lockdown in vendor
//! properties, not in any standard one:
//!
//! ```toml
//! # Dell iDRAC: a manager attribute
//! lockdown = { resource = "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes", property = "Attributes/Lockdown.1.SystemLockdown", enabled = "Enabled", disabled = "Disabled" }
//! # Supermicro: an OEM resource of the manager
//! lockdown = { resource = "/redfish/v1/Managers/1/Oem/Supermicro/SysLockdown", property = "SysLockdownEnabled", enabled = true, disabled = false }
//! # NVIDIA DGX H100: a BIOS attribute (changed through the Bios settings object, running after a reset)
//! lockdown = { resource = "/redfish/v1/Systems/DGX/Bios", property = "Attributes/KcsInterfaceDisable", enabled = "Deny All", disabled = "Allow All" }
//! ```
//!
//! A model without `lockdown` has none to change (OpenBMC): the platform step counts it as
//! already in the wanted state and says so. Pure data and its validation; the Redfish calls that
//! use it live in the redfish crate.

use serde::{Deserialize, Serialize};

/// A lockdown property value as the BMC reports it (text, boolean or integer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SettingValue {
    Bool(bool),
    Int(i64),
    Text(String),
}

impl SettingValue {
    /// The value as JSON (for a PATCH body and for comparing with what the BMC reports).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            SettingValue::Bool(b) => serde_json::Value::Bool(*b),
            SettingValue::Int(i) => serde_json::Value::from(*i),
            SettingValue::Text(s) => serde_json::Value::String(s.clone()),
        }
    }
}

impl std::fmt::Display for SettingValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.to_json())
    }
}

/// Where a model keeps its platform lockdown, and the values that mean on and off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawLockdown")]
pub struct LockdownSetting {
    /// The resource's path (`/redfish/v1/...`), as the vendor documents it. When the resource has
    /// a `@Redfish.Settings` object, changes go there and run after the next host reset.
    pub resource: String,
    /// The property inside it, `/`-separated for nested objects (`Attributes/Lockdown.1.SystemLockdown`).
    pub property: String,
    pub enabled: SettingValue,
    pub disabled: SettingValue,
}

impl LockdownSetting {
    /// The property's path segments.
    pub fn property_path(&self) -> Vec<&str> {
        self.property.split('/').collect()
    }

    /// `Some(true)` for the enabled value, `Some(false)` for the disabled one, `None` otherwise.
    pub fn state_of(&self, reported: &serde_json::Value) -> Option<bool> {
        if *reported == self.enabled.to_json() {
            Some(true)
        } else if *reported == self.disabled.to_json() {
            Some(false)
        } else {
            None
        }
    }

    /// The value that means `enabled`.
    pub fn value(&self, enabled: bool) -> &SettingValue {
        if enabled {
            &self.enabled
        } else {
            &self.disabled
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLockdown {
    resource: String,
    property: String,
    enabled: SettingValue,
    disabled: SettingValue,
}

/// Why a `lockdown` catalog setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockdownError {
    #[error("lockdown.resource {0:?}: expected a resource path starting with /redfish/v1/")]
    Resource(String),
    #[error("lockdown.property {0:?}: expected a property name, nested names separated by '/'")]
    Property(String),
    #[error("lockdown: enabled and disabled are both {0}")]
    SameValues(SettingValue),
}

impl TryFrom<RawLockdown> for LockdownSetting {
    type Error = LockdownError;
    fn try_from(raw: RawLockdown) -> Result<Self, LockdownError> {
        let resource = raw.resource.trim().trim_end_matches('/').to_string();
        if !resource.starts_with("/redfish/v1/") || resource.contains(['?', '#', ' ']) {
            return Err(LockdownError::Resource(raw.resource));
        }
        let property = raw.property.trim().to_string();
        if property.is_empty() || property.split('/').any(str::is_empty) {
            return Err(LockdownError::Property(raw.property));
        }
        if raw.enabled == raw.disabled {
            return Err(LockdownError::SameValues(raw.enabled));
        }
        Ok(LockdownSetting { resource, property, enabled: raw.enabled, disabled: raw.disabled })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LockdownSetting, String> {
        #[derive(Deserialize)]
        struct Doc {
            lockdown: LockdownSetting,
        }
        toml::from_str::<Doc>(text).map(|d| d.lockdown).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_each_vendor_shape() {
        let dell = parse(r#"lockdown = { resource = "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes/", property = "Attributes/Lockdown.1.SystemLockdown", enabled = "Enabled", disabled = "Disabled" }"#).unwrap();
        assert_eq!(dell.resource, "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes");
        assert_eq!(dell.property_path(), vec!["Attributes", "Lockdown.1.SystemLockdown"]);
        assert_eq!(dell.state_of(&serde_json::json!("Enabled")), Some(true));
        assert_eq!(dell.state_of(&serde_json::json!("Disabled")), Some(false));
        assert_eq!(dell.state_of(&serde_json::json!("Other")), None);
        let smc = parse(r#"lockdown = { resource = "/redfish/v1/Managers/1/Oem/Supermicro/SysLockdown", property = "SysLockdownEnabled", enabled = true, disabled = false }"#).unwrap();
        assert_eq!(smc.value(true).to_json(), serde_json::json!(true));
        assert_eq!(smc.state_of(&serde_json::json!(false)), Some(false));
    }

    #[test]
    fn refuses_what_cannot_work() {
        let e = parse(r#"lockdown = { resource = "Managers/1", property = "X", enabled = true, disabled = false }"#)
            .unwrap_err();
        assert!(e.contains("/redfish/v1/"), "{e}");
        let e = parse(r#"lockdown = { resource = "/redfish/v1/Managers/1", property = "A//B", enabled = true, disabled = false }"#).unwrap_err();
        assert!(e.contains("lockdown.property"), "{e}");
        let e = parse(
            r#"lockdown = { resource = "/redfish/v1/Managers/1", property = "A", enabled = "On", disabled = "On" }"#,
        )
        .unwrap_err();
        assert!(e.contains("both"), "{e}");
        let e = parse(r#"lockdown = { resource = "/redfish/v1/Managers/1", property = "A", enabled = 1, disabled = 0, extra = 1 }"#).unwrap_err();
        assert!(e.contains("extra"), "{e}");
    }
}
