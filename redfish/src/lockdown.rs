//! Platform lockdown through the model's own property, as the catalog describes it
//! ([`LockdownSetting`]: a resource path, a property inside it, the values for on and off).
//!
//! Owns reading the state (`lockdown_state`) and changing it (`set_lockdown_at`). When the
//! resource names a `@Redfish.Settings` object that does not offer `Immediate` (BIOS
//! attributes), the change is PATCHed there and runs after the next host reset; the pending value counts as the
//! state, so a retried step does not PATCH again. Never resets the host.

use hostfw_model::LockdownSetting;
use serde_json::{Map, Value};
use url::Url;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::{Fetched, Redecided};

/// Where a model's lockdown stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockdownState {
    /// The value the BMC runs with now.
    pub running: bool,
    /// The value waiting in the settings object for the next reset, if it differs from `running`.
    pub pending: Option<bool>,
}

impl LockdownState {
    /// What the host will run after the next reset.
    pub fn effective(&self) -> bool {
        self.pending.unwrap_or(self.running)
    }
}

impl RedfishClient {
    /// The lockdown state read from `setting.resource` (and its settings object, if any). A
    /// value that is neither `enabled` nor `disabled` is a `Parse` error naming both.
    pub async fn lockdown_state(&self, setting: &LockdownSetting) -> Result<LockdownState, RedfishError> {
        let url = self.resolve_from(&setting.resource, None)?;
        let doc: Value = self.get_json(&url).await?;
        let running = self.read_state(&url, &doc, setting)?;
        let pending = match settings_object(&doc) {
            Some(link) => {
                let so_url = self.resolve_from(&link, Some(&url))?;
                let so: Value = self.get_json(&so_url).await?;
                // A sparse settings object may not list the property: nothing pending then.
                match lookup(&so, setting) {
                    Some(_) => Some(self.read_state(&so_url, &so, setting)?).filter(|p| *p != running),
                    None => None,
                }
            }
            None => None,
        };
        Ok(LockdownState { running, pending })
    }

    /// PATCH the lockdown property to `enabled` (at the settings object when the resource has
    /// one). Returns true when the change waits for the next host reset.
    pub async fn set_lockdown_at(&self, setting: &LockdownSetting, enabled: bool) -> Result<bool, RedfishError> {
        let url = self.resolve_from(&setting.resource, None)?;
        let resource: Fetched<Value> = self.get_fetched(&url).await?;
        self.read_state(&url, &resource.doc, setting)?;
        // The PATCH carries the target's own ETag (If-Match), read just before.
        let (target, deferred) = match settings_object(&resource.doc) {
            Some(link) => (self.get_fetched::<Value>(&self.resolve_from(&link, Some(&url))?).await?, true),
            None => (resource, false),
        };
        let mut body = setting.value(enabled).to_json();
        for key in setting.property_path().into_iter().rev() {
            let mut m = Map::new();
            m.insert(key.to_string(), body);
            body = Value::Object(m);
        }
        // After a 412 the target read again decides: already at the value (nothing sent), or
        // the same PATCH with its fresh ETag.
        let redecide = |fresh: &Value| {
            let already = lookup(fresh, setting).and_then(|v| setting.state_of(v)) == Some(enabled);
            Ok(if already { Redecided::AlreadyDone } else { Redecided::Write(body.clone()) })
        };
        self.patch_resource(&target, &body, &redecide).await?;
        tracing::info!(bmc = %self.address(), resource = %setting.resource, property = %setting.property,
            value = %setting.value(enabled), deferred, "platform lockdown set");
        Ok(deferred)
    }

    fn read_state(&self, url: &Url, doc: &Value, setting: &LockdownSetting) -> Result<bool, RedfishError> {
        let Some(value) = lookup(doc, setting) else {
            return Err(RedfishError::Unsupported {
                bmc: self.bmc(),
                url: url.to_string(),
                what: format!("platform lockdown: the resource has no property {}", setting.property),
            });
        };
        setting.state_of(value).ok_or_else(|| RedfishError::Parse {
            bmc: self.bmc(),
            url: url.to_string(),
            cause: format!(
                "{} is {value}; the catalog says {} means enabled and {} disabled",
                setting.property, setting.enabled, setting.disabled
            ),
        })
    }
}

fn lookup<'a>(doc: &'a Value, setting: &LockdownSetting) -> Option<&'a Value> {
    setting.property_path().into_iter().try_fold(doc, |v, key| v.get(key))
}

/// The settings object changes must go through: the resource's `@Redfish.Settings` object,
/// unless it lists `Immediate` among its `SupportedApplyTimes` (then the resource itself takes
/// the PATCH and runs it at once, as Dell's attribute sets do).
fn settings_object(doc: &Value) -> Option<String> {
    let settings = doc.get("@Redfish.Settings")?;
    let immediate = settings
        .get("SupportedApplyTimes")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|v| v == "Immediate"));
    if immediate {
        return None;
    }
    settings.pointer("/SettingsObject/@odata.id").and_then(Value::as_str).map(str::to_string)
}
