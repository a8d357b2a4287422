//! The AC power cycle (power drain) through the action the model's catalog entry names
//! ([`AcCycleSetting`]: a resource, an action under its `Actions` or `Actions.Oem`, the
//! `ResetType` to send). Which device cycles the host's AC power differs by vendor and is often
//! an OEM action (a GB200 tray: `#NvidiaChassis.AuxPowerReset` on `Chassis/BMC_0`, whose own
//! `#Chassis.Reset` `PowerCycle` cycles only the BMC), so nothing here searches or guesses.
//!
//! Owns `ac_power_cycle_at` and finding the configured action (`ac_cycle_action`, which the
//! preflight of `reset_allowed` reads too). The `ResetType` is checked against the action's
//! allowable values (inline or ActionInfo) when it lists them; the POST carries `If-Match` when
//! the resource served an ETag. Like `reset_manager`, a connection dropped after the POST counts as accepted
//! (an AC cycle may take the BMC's own power with it). It never waits, and never powers the
//! host off or on (the caller does, for `power_off_first`).

use hostfw_model::AcCycleSetting;
use serde_json::{json, Value};

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Fetched;
use crate::models::{Actions, Extra};
use crate::reset::ResetAction;

impl RedfishClient {
    /// The model's AC-cycle action: the configured resource read (with its ETag) and the named
    /// action under its `Actions` or `Actions.Oem`. `Unsupported` when the resource has no such
    /// action; the resource's own error (a 404 for a resource that does not exist) otherwise.
    pub(crate) async fn ac_cycle_action(&self, setting: &AcCycleSetting) -> Result<ResetAction, RedfishError> {
        let url = self.resolve_from(&setting.resource, None)?;
        let resource: Fetched<Value> = self.get_fetched(&url).await?;
        let actions = resource.doc.get("Actions");
        // OEM actions sit under `Actions.Oem`; both levels are searched by name.
        let mut all = Extra::new();
        for level in [actions, actions.and_then(|a| a.get("Oem"))].into_iter().flatten() {
            if let Some(map) = level.as_object() {
                all.extend(map.iter().filter(|(k, _)| k.starts_with('#')).map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        self.reset_action(&url, resource.etag.as_deref(), Some(&Actions(all)), &setting.action)
    }

    /// POST the model's AC-cycle action. `Unsupported` when the resource has no such action,
    /// `ResetTypeNotAllowed` when its allowable values exclude the configured `reset_type`.
    pub async fn ac_power_cycle_at(&self, setting: &AcCycleSetting) -> Result<(), RedfishError> {
        let action = self.ac_cycle_action(setting).await?;
        let body = match &setting.reset_type {
            Some(t) => {
                if let Some(allowed) = self.allowed_reset_types(&action).await? {
                    if !allowed.is_empty() && !allowed.iter().any(|a| a == t) {
                        return Err(RedfishError::ResetTypeNotAllowed {
                            bmc: self.bmc(),
                            url: action.target.to_string(),
                            wanted: vec![t.clone()],
                            allowed,
                        });
                    }
                }
                json!({ "ResetType": t })
            }
            None => json!({}),
        };
        let redecide = |fresh: &Value| self.still_offered(&action, fresh, &body);
        match self.post_action(&action.target, &action.owner, action.owner_etag.as_deref(), &body, &redecide).await {
            Ok(reply) => {
                self.ensure_success(reply)?;
                tracing::info!(bmc = %self.address(), action = %action.target, "AC power cycle accepted");
                Ok(())
            }
            Err(e @ (RedfishError::Transport { .. } | RedfishError::Timeout { .. })) => {
                tracing::info!(bmc = %self.address(), error = %e, "connection dropped after the AC power cycle; taken as accepted");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}
