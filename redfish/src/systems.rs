//! Which ComputerSystem is which on a BMC that lists several.
//!
//! Owns reading every member of the ServiceRoot's `Systems` collection (one by one with their
//! ETags for the reset, power and boot paths; inline from one `$expand`ed read where the crawl
//! asks for it) and the two choices made from them (pure functions, unit-tested here):
//! - **identity** (vendor, model, serial): the System with both `Manufacturer` and `Model`,
//!   preferring one that also has the `#ComputerSystem.Reset` action, the first such; else the
//!   first with a `Manufacturer`; else the first member.
//! - **host** (the reset, power-state and boot-override target): the System with the
//!   `#ComputerSystem.Reset` action, preferring one that also has `Manufacturer` and `Model`,
//!   the first such. With several Systems and none offering Reset it is an `Unsupported`
//!   error rather than a guess.
//!
//! A one-member collection gives that member for both. Real shapes: a GB200 lists `System_0`
//! (Reset, boot override, no Manufacturer/Model) before `HGX_Baseboard_0` (NVIDIA "GB200 NVL", no
//! Reset); a DGX lists `DGX` (both) and `HGX_Baseboard_0`. It must not perform actions, and it
//! never builds a URI: members come from the collection.

use serde_json::Value;
use url::Url;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Fetched;
use crate::models::{link_target, ComputerSystem, ServiceRoot};

/// The reset action's name on a ComputerSystem.
pub(crate) const RESET_ACTION: &str = "#ComputerSystem.Reset";

fn non_empty(s: &Option<String>) -> bool {
    s.as_deref().is_some_and(|s| !s.trim().is_empty())
}

/// Has both `Manufacturer` and `Model`.
fn has_identity(s: &ComputerSystem) -> bool {
    non_empty(&s.manufacturer) && non_empty(&s.model)
}

/// Offers `#ComputerSystem.Reset` with a target.
fn has_reset(s: &ComputerSystem) -> bool {
    s.actions.as_ref().and_then(|a| a.get(RESET_ACTION)).is_some_and(|d| d.target().is_some())
}

/// The index of the System that names the machine (see the module docs); `None` only when
/// there are no Systems.
pub(crate) fn identity_index(systems: &[&ComputerSystem]) -> Option<usize> {
    let find = |pred: &dyn Fn(&ComputerSystem) -> bool| systems.iter().position(|s| pred(s));
    find(&|s| has_identity(s) && has_reset(s))
        .or_else(|| find(&has_identity))
        .or_else(|| find(&|s| non_empty(&s.manufacturer)))
        .or_else(|| (!systems.is_empty()).then_some(0))
}

/// The index of the System that is the host to reset, power and boot (see the module docs);
/// `None` when there are several and none offers Reset (or none at all).
pub(crate) fn host_index(systems: &[&ComputerSystem]) -> Option<usize> {
    if systems.len() == 1 {
        return Some(0);
    }
    let find = |pred: &dyn Fn(&ComputerSystem) -> bool| systems.iter().position(|s| pred(s));
    find(&|s| has_reset(s) && has_identity(s)).or_else(|| find(&has_reset))
}

/// Every System of a BMC, in collection order, each with its ETag.
pub(crate) struct Systems {
    /// The Systems collection (for errors).
    pub collection: Url,
    pub members: Vec<Fetched<ComputerSystem>>,
}

impl Systems {
    fn docs(&self) -> Vec<&ComputerSystem> {
        self.members.iter().map(|m| &m.doc).collect()
    }

    /// The System naming the machine (vendor, model, serial).
    pub fn identity(&self) -> Option<&Fetched<ComputerSystem>> {
        identity_index(&self.docs()).map(|i| &self.members[i])
    }

    /// The host System (reset, power state, boot override), if one can be told.
    pub fn host(&self) -> Option<&Fetched<ComputerSystem>> {
        host_index(&self.docs()).map(|i| &self.members[i])
    }

    /// The host System, or the error saying why there is none.
    pub fn into_host(mut self, bmc: String) -> Result<Fetched<ComputerSystem>, RedfishError> {
        match host_index(&self.docs()) {
            Some(i) => Ok(self.members.swap_remove(i)),
            None if self.members.is_empty() => Err(RedfishError::Missing {
                bmc,
                url: self.collection.to_string(),
                what: "any member in the Systems collection".into(),
            }),
            None => Err(RedfishError::Unsupported {
                bmc,
                url: self.collection.to_string(),
                what: format!(
                    "none of the {} ComputerSystems ({}) offers {RESET_ACTION}, so which one is the host to reset, power and boot cannot be told",
                    self.members.len(),
                    self.members
                        .iter()
                        .map(|m| RedfishClient::path_of(&m.url))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }
}

impl RedfishClient {
    /// Every member of the Systems collection the ServiceRoot links to, each read by itself
    /// (with its ETag, which the reset, power and boot-override writes send back).
    pub(crate) async fn systems_from(&self, root_url: &Url, root: &ServiceRoot) -> Result<Systems, RedfishError> {
        self.systems_read(root_url, root, None).await
    }

    /// [`systems_from`](Self::systems_from) with the collection read with `query` (the crawl's
    /// `$expand`) when there is one: a member the reply lists expanded takes no request of its
    /// own (its ETag is the document's `@odata.etag`, if any), one left as a link is read as
    /// without the query. The same documents either way, so the same identity and host.
    pub(crate) async fn systems_read(
        &self,
        root_url: &Url,
        root: &ServiceRoot,
        query: Option<&str>,
    ) -> Result<Systems, RedfishError> {
        let link = link_target(&root.systems).ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: root_url.to_string(),
            what: "Systems link in the ServiceRoot".into(),
        })?;
        let collection = self.resolve_from(link, Some(root_url))?;
        let mut members = Vec::new();
        for entry in self.collection_listing_with(&collection, query).await?.entries {
            let inline = entry.expanded.and_then(|doc| {
                let etag = doc.get("@odata.etag").and_then(Value::as_str).map(str::trim).map(str::to_string);
                let doc = serde_json::from_value::<ComputerSystem>(doc).ok()?;
                Some(Fetched { url: entry.url.clone(), doc, etag: etag.filter(|e| !e.is_empty()) })
            });
            members.push(match inline {
                Some(fetched) => fetched,
                None => self.get_fetched(&entry.url).await?,
            });
        }
        if members.is_empty() {
            return Err(RedfishError::Missing {
                bmc: self.bmc(),
                url: collection.to_string(),
                what: "any member in the Systems collection".into(),
            });
        }
        Ok(Systems { collection, members })
    }

    /// The host System: the reset, power-state and boot-override target (see the module docs).
    pub(crate) async fn host_system(&self) -> Result<Fetched<ComputerSystem>, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        self.systems_from(&root_url, &root).await?.into_host(self.bmc())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sys(json: &str) -> ComputerSystem {
        serde_json::from_str(json).unwrap()
    }

    const RESET: &str =
        r##""Actions":{"#ComputerSystem.Reset":{"target":"/redfish/v1/Systems/X/Actions/ComputerSystem.Reset"}}"##;

    #[test]
    fn gb200_identity_and_host_are_different_systems() {
        let system_0 = sys(&format!(r##"{{"Id":"System_0",{RESET}}}"##));
        let baseboard = sys(r##"{"Id":"HGX_Baseboard_0","Manufacturer":"NVIDIA","Model":"GB200 NVL"}"##);
        let all = [&system_0, &baseboard];
        assert_eq!(identity_index(&all), Some(1));
        assert_eq!(host_index(&all), Some(0));
    }

    #[test]
    fn dgx_uses_the_system_with_both() {
        let dgx = sys(&format!(r##"{{"Id":"DGX","Manufacturer":"NVIDIA","Model":"DGXH100",{RESET}}}"##));
        let baseboard = sys(r##"{"Id":"HGX_Baseboard_0","Manufacturer":"NVIDIA"}"##);
        assert_eq!(identity_index(&[&dgx, &baseboard]), Some(0));
        assert_eq!(host_index(&[&dgx, &baseboard]), Some(0));
        // Order does not matter.
        assert_eq!(identity_index(&[&baseboard, &dgx]), Some(1));
        assert_eq!(host_index(&[&baseboard, &dgx]), Some(1));
    }

    #[test]
    fn preferences_among_several_candidates() {
        let named = sys(r##"{"Manufacturer":"A","Model":"M1"}"##);
        let named_reset = sys(&format!(r##"{{"Manufacturer":"B","Model":"M2",{RESET}}}"##));
        let bare_reset = sys(&format!(r##"{{{RESET}}}"##));
        // identity prefers both + Reset; the host prefers Reset + both.
        let all = [&named, &bare_reset, &named_reset];
        assert_eq!(identity_index(&all), Some(2));
        assert_eq!(host_index(&all), Some(2));
        // several with both and no Reset: the first.
        let other = sys(r##"{"Manufacturer":"C","Model":"M3"}"##);
        assert_eq!(identity_index(&[&named, &other]), Some(0));
    }

    #[test]
    fn one_member_is_both_whatever_it_lacks() {
        let bare = sys(r##"{"PowerState":"Off"}"##);
        assert_eq!(identity_index(&[&bare]), Some(0));
        assert_eq!(host_index(&[&bare]), Some(0));
    }

    #[test]
    fn several_without_reset_have_no_host() {
        let a = sys(r##"{"Manufacturer":"A","Model":"M"}"##);
        let b = sys(r##"{"Id":"B"}"##);
        assert_eq!(host_index(&[&a, &b]), None);
        assert_eq!(identity_index(&[&b, &a]), Some(1));
        // an action without a target does not count
        let no_target = sys(r##"{"Actions":{"#ComputerSystem.Reset":{}}}"##);
        assert_eq!(host_index(&[&a, &no_target]), None);
        assert_eq!(host_index(&[]), None);
        assert_eq!(identity_index(&[]), None);
    }
}
