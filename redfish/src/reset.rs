//! Resets: the host (`ComputerSystem.Reset`), the BMC (`Manager.Reset`), and waiting for the BMC
//! to answer again afterwards.
//!
//! Owns `reset_system`, `reset_manager`, `wait_reachable` and `wait_unreachable`, including:
//! - choosing the `ResetType` from the caller's ordered preferences and the values the BMC
//!   advertises (`ResetType@Redfish.AllowableValues` inline, or the action's
//!   `@Redfish.ActionInfo`, fetched): the first preference allowed, the first preference when
//!   nothing is advertised, `ResetTypeNotAllowed` (naming the allowed values) when none is;
//! - `If-Match` with the owning resource's ETag (see `etag`);
//! - following a host reset that answers with a Task (202 + Location, or 200/201 with a Task body)
//!   to its final state, bounded by `ClientOptions::reset_task_wait`: `Exception`, `Killed`,
//!   `Cancelled`, `Interrupted` (or Completed with a Critical status) are a failed reset;
//! - treating a BMC that drops the connection right after a Manager.Reset as "accepted".
//!
//! Action targets come from the resource's `Actions`; this file must never build an action URI,
//! nor read inventory beyond what it needs.

use std::time::Duration;

use serde_json::{json, Value};
use url::Url;

use crate::client::{Auth, RedfishClient};
use crate::error::RedfishError;
use crate::models::{link_target, ActionDef, ActionInfo, Actions};
use crate::systems::RESET_ACTION;
use crate::task::{TaskFinal, TaskOutcome};
use crate::timeouts;

/// What a reset action needs: the POST target, the definition for the ResetType choice, and
/// the resource owning it with its ETag (for `If-Match`).
pub(crate) struct ResetAction {
    pub target: Url,
    pub def: ActionDef,
    pub owner: Url,
    pub owner_etag: Option<String>,
}

/// A reset the BMC took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetDone {
    /// The ResetType sent: the first of the caller's preferences the BMC allows.
    pub reset_type: String,
    /// How the reset's Task ended, when the BMC answered with one and it was followed.
    pub task: Option<TaskOutcome>,
}

/// The first of `preferences` among `allowed`; with no list (or an empty one), the first
/// preference. `None` when the list names none of them (or there are no preferences).
pub(crate) fn choose_reset_type<'a>(preferences: &[&'a str], allowed: Option<&[String]>) -> Option<&'a str> {
    match allowed {
        Some(list) if !list.is_empty() => preferences.iter().copied().find(|p| list.iter().any(|a| a == p)),
        _ => preferences.first().copied(),
    }
}

impl RedfishClient {
    /// Resets the host System (the one offering `#ComputerSystem.Reset`, see `systems`) with the
    /// first of `preferences` the BMC allows. When the BMC answers with a Task, waits for it
    /// (bounded by `ClientOptions::reset_task_wait`) and turns a failed Task into
    /// `ResetTaskFailed` carrying the Task's messages.
    pub async fn reset_system(&self, preferences: &[&str]) -> Result<ResetDone, RedfishError> {
        let system = self.host_system().await?;
        let action =
            self.reset_action(&system.url, system.etag.as_deref(), system.doc.actions.as_ref(), RESET_ACTION)?;
        let reset_type = self.pick_reset_type(&action, preferences).await?;
        let body = json!({ "ResetType": reset_type });
        let redecide = |fresh: &Value| self.still_offered(&action, fresh, &body);
        let reply =
            self.post_action(&action.target, &action.owner, action.owner_etag.as_deref(), &body, &redecide).await?;
        let reply = self.ensure_success(reply)?;
        let Some(task) = self.task_of_answer(&reply).await else {
            tracing::info!(bmc = %self.address(), reset_type, "system reset accepted");
            return Ok(ResetDone { reset_type, task: None });
        };
        tracing::info!(bmc = %self.address(), reset_type, monitor = %task.monitor_uri, "system reset answered with a task; following it");
        let outcome = self.wait_task(&task, self.options().reset_task_wait, |_| {}).await?;
        match &outcome.state {
            _ if outcome.succeeded() => {
                tracing::info!(bmc = %self.address(), reset_type, "system reset task completed");
            }
            TaskFinal::Vanished | TaskFinal::Unknown(_) => {
                // Vanished, or a state we do not know: the caller still waits for the power
                // state, which tells whether the reset happened.
                tracing::warn!(bmc = %self.address(), reset_type, state = %outcome.state, messages = ?outcome.messages, "system reset task ended without a known final state; taken as accepted");
            }
            _ => {
                return Err(RedfishError::ResetTaskFailed {
                    bmc: self.bmc(),
                    url: self.resolve(&task.monitor_uri).map_or_else(|_| task.monitor_uri.clone(), |u| u.to_string()),
                    reset_type,
                    state: outcome.state.clone(),
                    status: outcome.status.clone(),
                    messages: outcome.messages.clone(),
                })
            }
        }
        Ok(ResetDone { reset_type, task: Some(outcome) })
    }

    /// Resets the BMC (`#Manager.Reset` of the BMC Manager) with the first of `preferences` the
    /// BMC allows. A connection that breaks or times out after the request was sent counts as
    /// accepted: BMCs often reboot before answering. A Task in the answer is not followed (the
    /// BMC restarts and forgets it; `wait_unreachable` and `wait_reachable` tell the rest).
    /// Sessions die with the reset; `wait_reachable` logs in again.
    pub async fn reset_manager(&self, preferences: &[&str]) -> Result<ResetDone, RedfishError> {
        let manager = self.bmc_manager().await?;
        let action =
            self.reset_action(&manager.url, manager.etag.as_deref(), manager.doc.actions.as_ref(), "#Manager.Reset")?;
        let reset_type = self.pick_reset_type(&action, preferences).await?;
        let body = json!({ "ResetType": reset_type });
        let redecide = |fresh: &Value| self.still_offered(&action, fresh, &body);
        match self.post_action(&action.target, &action.owner, action.owner_etag.as_deref(), &body, &redecide).await {
            Ok(reply) => {
                self.ensure_success(reply)?;
                tracing::info!(bmc = %self.address(), reset_type, "manager reset accepted");
            }
            Err(e @ (RedfishError::Transport { .. } | RedfishError::Timeout { .. })) => {
                tracing::info!(bmc = %self.address(), reset_type, error = %e, "connection dropped after Manager.Reset; taken as accepted");
            }
            Err(e) => return Err(e),
        }
        Ok(ResetDone { reset_type, task: None })
    }

    /// Waits until the BMC answers again: the ServiceRoot, then (after a fresh login in session
    /// mode) an authenticated GET of a resource the root links to. Polls with a short, growing
    /// interval; gives up with `NotReachable` (carrying the last error) after `timeout`.
    pub async fn wait_reachable(&self, timeout: Duration) -> Result<(), RedfishError> {
        let start = tokio::time::Instant::now();
        let deadline = start + timeout;
        let mut interval = timeouts::REACHABLE_FIRST_INTERVAL;
        loop {
            let error = match self.probe().await {
                Ok(()) => return Ok(()),
                // Waiting cannot fix trust: say so now rather than "not reachable" later.
                Err(e @ RedfishError::Certificate { .. }) => return Err(e),
                Err(e) => e,
            };
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(RedfishError::NotReachable {
                    bmc: self.bmc(),
                    url: self.base_url(),
                    waited: now - start,
                    last_error: error.to_string(),
                });
            }
            tracing::debug!(bmc = %self.address(), error = %error, "BMC not reachable yet");
            tokio::time::sleep(interval.min(deadline - now)).await;
            interval = (interval * 2).min(timeouts::REACHABLE_MAX_INTERVAL);
        }
    }

    /// Waits until the BMC stops answering its ServiceRoot (connection refused/reset, timeout or
    /// 5xx), as it does some time after accepting a Manager.Reset. `Ok(true)` once seen down,
    /// `Ok(false)` if it kept answering for `timeout` (it may have rebooted between two polls).
    /// Call it between `reset_manager` and `wait_reachable` so that the latter does not succeed
    /// against the BMC *before* it went down.
    pub async fn wait_unreachable(&self, timeout: Duration) -> Result<bool, RedfishError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match self.service_root_with(Auth::Anonymous).await {
                Err(e) if e.is_transient() => return Ok(true),
                Ok(_) | Err(_) => {}
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(timeouts::UNREACHABLE_POLL_INTERVAL.min(deadline - now)).await;
        }
    }

    /// One reachability probe (see `wait_reachable`).
    async fn probe(&self) -> Result<(), RedfishError> {
        let (root_url, root) = self.service_root_with(Auth::Anonymous).await?;
        self.relogin().await?;
        let link = link_target(&root.systems)
            .or_else(|| link_target(&root.managers))
            .or_else(|| link_target(&root.update_service))
            .ok_or_else(|| RedfishError::Missing {
                bmc: self.bmc(),
                url: root_url.to_string(),
                what: "any of Systems, Managers, UpdateService in the ServiceRoot".into(),
            })?;
        let url = self.resolve_from(link, Some(&root_url))?;
        let _: Value = self.get_json(&url).await?;
        Ok(())
    }

    /// The named reset action of a resource read at `owner` (with its ETag, if it served one).
    pub(crate) fn reset_action(
        &self,
        owner: &Url,
        owner_etag: Option<&str>,
        actions: Option<&Actions>,
        name: &str,
    ) -> Result<ResetAction, RedfishError> {
        let def = actions.and_then(|a| a.get(name)).ok_or_else(|| RedfishError::Unsupported {
            bmc: self.bmc(),
            url: owner.to_string(),
            what: format!("no {name} action"),
        })?;
        let target = def.target().ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: owner.to_string(),
            what: format!("target of the {name} action"),
        })?;
        let target = self.resolve_from(target, Some(owner))?;
        Ok(ResetAction { target, def, owner: owner.clone(), owner_etag: owner_etag.map(str::to_string) })
    }

    /// After a 412 on `action`: its owner read again (`fresh`) must still offer an action with
    /// the same target (under `Actions` or `Actions.Oem`); then `body` is sent again, else the
    /// reset is refused rather than posted to an action the resource no longer lists.
    pub(crate) fn still_offered(
        &self,
        action: &ResetAction,
        fresh: &Value,
        body: &Value,
    ) -> Result<Value, RedfishError> {
        let actions = fresh.get("Actions");
        let offered = [actions, actions.and_then(|a| a.get("Oem"))]
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .flat_map(|m| m.values())
            .filter_map(|a| a.get("target").and_then(Value::as_str))
            .any(|t| self.resolve_from(t, Some(&action.owner)).is_ok_and(|u| u == action.target));
        if offered {
            Ok(body.clone())
        } else {
            Err(RedfishError::Unsupported {
                bmc: self.bmc(),
                url: action.owner.to_string(),
                what: format!("the resource read again after a 412 no longer offers the action {}", action.target),
            })
        }
    }

    /// The ResetTypes the BMC lists for this action: `ResetType@Redfish.AllowableValues`, or the
    /// action's `@Redfish.ActionInfo` when that is all there is. `None` (or empty): no list.
    pub(crate) async fn allowed_reset_types(&self, action: &ResetAction) -> Result<Option<Vec<String>>, RedfishError> {
        let mut allowed = action.def.allowable_values("ResetType");
        if allowed.as_ref().is_none_or(Vec::is_empty) {
            if let Some(info_link) = action.def.action_info.as_deref().filter(|s| !s.is_empty()) {
                let info_url = self.resolve_from(info_link, Some(&action.target))?;
                match self.get_json::<ActionInfo>(&info_url).await {
                    Ok(info) => allowed = info.allowable_values("ResetType"),
                    Err(e) => {
                        tracing::warn!(bmc = %self.address(), error = %e, "cannot read the reset ActionInfo; using the first preferred ResetType unchecked");
                    }
                }
            }
        }
        Ok(allowed)
    }

    /// The ResetType to send: the first of `preferences` the BMC allows (see
    /// `choose_reset_type`), logged; `ResetTypeNotAllowed` naming the allowed values otherwise.
    async fn pick_reset_type(&self, action: &ResetAction, preferences: &[&str]) -> Result<String, RedfishError> {
        let allowed = self.allowed_reset_types(action).await?;
        match choose_reset_type(preferences, allowed.as_deref()) {
            Some(chosen) => {
                tracing::info!(bmc = %self.address(), action = %action.target, chosen, ?preferences, ?allowed, "ResetType chosen");
                Ok(chosen.to_string())
            }
            None => Err(RedfishError::ResetTypeNotAllowed {
                bmc: self.bmc(),
                url: action.target.to_string(),
                wanted: preferences.iter().map(|p| p.to_string()).collect(),
                allowed: allowed.unwrap_or_default(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn first_allowed_preference_wins() {
        let bmc = ["ForceRestart", "GracefulRestart"];
        // Dell and Supermicro managers: GracefulRestart only.
        assert_eq!(choose_reset_type(&bmc, Some(&list(&["GracefulRestart"]))), Some("GracefulRestart"));
        // DGX manager: ForceRestart only; GB200: both, in another order.
        assert_eq!(choose_reset_type(&bmc, Some(&list(&["ForceRestart"]))), Some("ForceRestart"));
        assert_eq!(
            choose_reset_type(&bmc, Some(&list(&["GracefulRestart", "ForceRestart", "GracefulShutdown"]))),
            Some("ForceRestart"),
            "the caller's order decides, not the BMC's"
        );
    }

    #[test]
    fn no_list_means_the_first_preference() {
        let prefs = ["ForceRestart", "GracefulRestart", "PowerCycle"];
        assert_eq!(choose_reset_type(&prefs, None), Some("ForceRestart"));
        assert_eq!(choose_reset_type(&prefs, Some(&[])), Some("ForceRestart"));
    }

    #[test]
    fn none_allowed_or_none_wanted() {
        assert_eq!(choose_reset_type(&["ForceRestart"], Some(&list(&["On", "ForceOff"]))), None);
        assert_eq!(choose_reset_type(&[], None), None);
        assert_eq!(choose_reset_type(&[], Some(&list(&["On"]))), None);
    }
}
