//! What the service says its reset actions allow, read without sending anything: the host
//! System's `#ComputerSystem.Reset`, the BMC Manager's `#Manager.Reset`, and the model's AC-cycle
//! action (catalog `ac_cycle`). An activation reads them before its first power action, so that a
//! plan the BMC would refuse halfway is refused before anything is powered off.
//!
//! Owns reading each action and its `ResetType` list (`ResetType@Redfish.AllowableValues` inline,
//! else the action's `@Redfish.ActionInfo`); [`ResetsAllowed`] says whether a list of preferences
//! would be sent, with the same rule the resets themselves use (`reset::choose_reset_type`).
//! It must never POST, and never decide which steps a plan has.

use hostfw_model::AcCycleSetting;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::reset::{choose_reset_type, ResetAction};
use crate::systems::RESET_ACTION;

/// One reset action as the service describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetsAllowed {
    /// The action's target (for messages).
    pub target: String,
    /// Its `ResetType` list; `None` when the service lists none (every value is allowed: the
    /// standard's default, not a guess).
    pub allowed: Option<Vec<String>>,
}

impl ResetsAllowed {
    /// The ResetType a reset with these `preferences` would send: the first one listed, or the
    /// first of all when nothing is listed; `None` when the list names none of them.
    pub fn choose<'a>(&self, preferences: &[&'a str]) -> Option<&'a str> {
        choose_reset_type(preferences, self.allowed.as_deref())
    }
}

impl RedfishClient {
    /// The host System's `#ComputerSystem.Reset` (the System `reset_system` posts to).
    /// `Unsupported` when it has none.
    pub async fn system_resets_allowed(&self) -> Result<ResetsAllowed, RedfishError> {
        let system = self.host_system().await?;
        let action =
            self.reset_action(&system.url, system.etag.as_deref(), system.doc.actions.as_ref(), RESET_ACTION)?;
        self.resets_allowed(action).await
    }

    /// The BMC Manager's `#Manager.Reset` (the one `reset_manager` posts to). `Unsupported` when
    /// it has none.
    pub async fn manager_resets_allowed(&self) -> Result<ResetsAllowed, RedfishError> {
        let manager = self.bmc_manager().await?;
        let action =
            self.reset_action(&manager.url, manager.etag.as_deref(), manager.doc.actions.as_ref(), "#Manager.Reset")?;
        self.resets_allowed(action).await
    }

    /// The model's AC-cycle action (see `ac_cycle`): the resource's own error when it cannot be
    /// read (a 404 for one that does not exist), `Unsupported` when it has no such action.
    pub async fn ac_cycle_resets_allowed(&self, setting: &AcCycleSetting) -> Result<ResetsAllowed, RedfishError> {
        let action = self.ac_cycle_action(setting).await?;
        self.resets_allowed(action).await
    }

    async fn resets_allowed(&self, action: ResetAction) -> Result<ResetsAllowed, RedfishError> {
        let allowed = self.allowed_reset_types(&action).await?.filter(|l| !l.is_empty());
        Ok(ResetsAllowed { target: action.target.to_string(), allowed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(list: Option<&[&str]>) -> ResetsAllowed {
        ResetsAllowed {
            target: "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset".into(),
            allowed: list.map(|l| l.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn a_listed_preference_is_chosen_an_unlisted_one_refused_and_no_list_allows_all() {
        // The captured Dell Chassis.Reset: On and ForceOff only.
        let dell_chassis = allowed(Some(&["On", "ForceOff"]));
        assert_eq!(dell_chassis.choose(&["PowerCycle"]), None);
        assert_eq!(dell_chassis.choose(&["ForceOff"]), Some("ForceOff"));
        assert_eq!(dell_chassis.choose(&["ForceOn", "On"]), Some("On"), "the first listed preference");
        assert_eq!(allowed(None).choose(&["PowerCycle", "On"]), Some("PowerCycle"), "no list: the first");
    }
}
