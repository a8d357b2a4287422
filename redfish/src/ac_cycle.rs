//! The AC power cycle (power drain) through the standard `#Chassis.Reset` action with
//! `ResetType` `PowerCycle`: find a chassis that offers it by following the ServiceRoot's
//! `Chassis` collection, and POST it.
//!
//! Owns `ac_power_cycle`. A chassis whose action lists its ResetTypes (AllowableValues or
//! ActionInfo) is used only if `PowerCycle` is among them; one that lists none is a fallback.
//! The POST carries `If-Match` when the chassis served an ETag (see `etag`).
//! Like `reset_manager`, a connection dropped after the POST counts as accepted (an AC cycle
//! may take the BMC's own power with it). It never waits for the host to come back; the
//! caller polls `power_state` or `wait_reachable`.

use serde_json::json;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Fetched;
use crate::models::{link_target, Chassis};
use crate::reset::ResetAction;

const ACTION: &str = "#Chassis.Reset";
const POWER_CYCLE: &str = "PowerCycle";

impl RedfishClient {
    /// AC-power-cycles the host: `#Chassis.Reset` `{"ResetType":"PowerCycle"}` on the first
    /// chassis that allows it. `Unsupported` (naming the BMC and the collection) when no
    /// chassis does, or when the ServiceRoot has no `Chassis` collection.
    pub async fn ac_power_cycle(&self) -> Result<(), RedfishError> {
        let action = self.power_cycle_action().await?;
        match self
            .post_action(
                &action.target,
                &action.owner,
                action.owner_etag.as_deref(),
                &json!({ "ResetType": POWER_CYCLE }),
            )
            .await
        {
            Ok(reply) => {
                self.ensure_success(reply)?;
                tracing::info!(bmc = %self.address(), target = %action.target, "AC power cycle accepted");
                Ok(())
            }
            Err(e @ (RedfishError::Transport { .. } | RedfishError::Timeout { .. })) => {
                tracing::info!(bmc = %self.address(), error = %e, "connection dropped after the AC power cycle; taken as accepted");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The `#Chassis.Reset` action to use for an AC power cycle.
    async fn power_cycle_action(&self) -> Result<ResetAction, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        let link = link_target(&root.chassis).ok_or_else(|| RedfishError::Unsupported {
            bmc: self.bmc(),
            url: root_url.to_string(),
            what: "AC power cycle: the ServiceRoot has no Chassis collection".into(),
        })?;
        let collection_url = self.resolve_from(link, Some(&root_url))?;
        let mut unlisted: Option<ResetAction> = None;
        for (_, url) in self.collection_members(&collection_url).await? {
            let chassis: Fetched<Chassis> = self.get_fetched(&url).await?;
            if chassis
                .doc
                .actions
                .as_ref()
                .and_then(|a| a.get(ACTION))
                .is_none()
            {
                continue;
            }
            let action = self.reset_action(
                &url,
                chassis.etag.as_deref(),
                chassis.doc.actions.as_ref(),
                ACTION,
            )?;
            match self.allowed_reset_types(&action).await? {
                Some(list) if list.iter().any(|t| t == POWER_CYCLE) => return Ok(action),
                Some(list) if !list.is_empty() => {
                    tracing::debug!(bmc = %self.address(), chassis = %url, allowed = ?list, "chassis reset without PowerCycle");
                }
                _ => {
                    unlisted.get_or_insert(action);
                }
            }
        }
        unlisted.ok_or_else(|| RedfishError::Unsupported {
            bmc: self.bmc(),
            url: collection_url.to_string(),
            what: format!(
                "AC power cycle: no chassis offers {ACTION} with ResetType {POWER_CYCLE}"
            ),
        })
    }
}
