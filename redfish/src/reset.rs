//! Resets: the host (`ComputerSystem.Reset`), the BMC (`Manager.Reset`), and waiting for the BMC
//! to answer again afterwards.
//!
//! Owns `reset_system`, `reset_manager` and `wait_reachable`, including the `ResetType` check
//! against the advertised allowable values and treating a BMC that drops the connection right
//! after a Manager.Reset as "accepted". Action targets come from the resource's `Actions`; this
//! file must never build an action URI, nor follow tasks or read inventory beyond what it needs.

use std::time::Duration;

use serde_json::{json, Value};
use url::Url;

use crate::client::{Auth, RedfishClient};
use crate::error::RedfishError;
use crate::models::{link_target, ActionDef, ActionInfo, Actions};
use crate::timeouts;

/// What a reset action needs: the POST target and the definition for the ResetType check.
pub(crate) struct ResetAction {
    pub target: Url,
    pub def: ActionDef,
}

impl RedfishClient {
    /// Resets the host (`#ComputerSystem.Reset` of the first System) with this `ResetType`.
    pub async fn reset_system(&self, reset_type: &str) -> Result<(), RedfishError> {
        let (system_url, system) = self.first_system().await?;
        let action = self
            .reset_action(
                &system_url,
                system.actions.as_ref(),
                "#ComputerSystem.Reset",
            )
            .await?;
        self.check_reset_type(&action, reset_type).await?;
        let reply = self
            .post_json(&action.target, &json!({ "ResetType": reset_type }))
            .await?;
        self.ensure_success(reply)?;
        tracing::info!(bmc = %self.address(), reset_type, "system reset accepted");
        Ok(())
    }

    /// Resets the BMC (`#Manager.Reset` of the BMC Manager) with this `ResetType`. A connection
    /// that breaks or times out after the request was sent counts as accepted: BMCs often reboot
    /// before answering. Sessions die with the reset; `wait_reachable` logs in again.
    pub async fn reset_manager(&self, reset_type: &str) -> Result<(), RedfishError> {
        let (manager_url, manager) = self.bmc_manager().await?;
        let action = self
            .reset_action(&manager_url, manager.actions.as_ref(), "#Manager.Reset")
            .await?;
        self.check_reset_type(&action, reset_type).await?;
        match self
            .post_json(&action.target, &json!({ "ResetType": reset_type }))
            .await
        {
            Ok(reply) => {
                self.ensure_success(reply)?;
                tracing::info!(bmc = %self.address(), reset_type, "manager reset accepted");
                Ok(())
            }
            Err(e @ (RedfishError::Transport { .. } | RedfishError::Timeout { .. })) => {
                tracing::info!(bmc = %self.address(), reset_type, error = %e, "connection dropped after Manager.Reset; taken as accepted");
                Ok(())
            }
            Err(e) => Err(e),
        }
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

    pub(crate) async fn reset_action(
        &self,
        resource_url: &Url,
        actions: Option<&Actions>,
        name: &str,
    ) -> Result<ResetAction, RedfishError> {
        let def = actions
            .and_then(|a| a.get(name))
            .ok_or_else(|| RedfishError::Unsupported {
                bmc: self.bmc(),
                url: resource_url.to_string(),
                what: format!("no {name} action"),
            })?;
        let target = def.target().ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: resource_url.to_string(),
            what: format!("target of the {name} action"),
        })?;
        let target = self.resolve_from(target, Some(resource_url))?;
        Ok(ResetAction { target, def })
    }

    /// The ResetTypes the BMC lists for this action: `ResetType@Redfish.AllowableValues`, or the
    /// action's `@Redfish.ActionInfo` when that is all there is. `None` (or empty): no list.
    pub(crate) async fn allowed_reset_types(
        &self,
        action: &ResetAction,
    ) -> Result<Option<Vec<String>>, RedfishError> {
        let mut allowed = action.def.allowable_values("ResetType");
        if allowed.as_ref().is_none_or(Vec::is_empty) {
            if let Some(info_link) = action.def.action_info.as_deref().filter(|s| !s.is_empty()) {
                let info_url = self.resolve_from(info_link, Some(&action.target))?;
                match self.get_json::<ActionInfo>(&info_url).await {
                    Ok(info) => allowed = info.allowable_values("ResetType"),
                    Err(e) => {
                        tracing::warn!(bmc = %self.address(), error = %e, "cannot read the reset ActionInfo; not checking ResetType");
                    }
                }
            }
        }
        Ok(allowed)
    }

    /// Refuses a ResetType the BMC does not list (see `allowed_reset_types`). No list: no check.
    pub(crate) async fn check_reset_type(
        &self,
        action: &ResetAction,
        reset_type: &str,
    ) -> Result<(), RedfishError> {
        match self.allowed_reset_types(action).await? {
            Some(allowed) if !allowed.is_empty() && !allowed.iter().any(|a| a == reset_type) => {
                Err(RedfishError::ResetTypeNotAllowed {
                    bmc: self.bmc(),
                    url: action.target.to_string(),
                    reset_type: reset_type.to_string(),
                    allowed,
                })
            }
            _ => Ok(()),
        }
    }
}
