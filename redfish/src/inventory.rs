//! Walking the resource tree: the inventory crawl, power state, and the "BMC Manager /
//! UpdateService" lookups other operations start from (which System is which is `systems`).
//!
//! Owns `explore`, `power_state` and collection paging (`Members@odata.nextLink`). Every URI comes
//! from an `@odata.id` link in a document already read; this file must never build a resource
//! URI by itself, and must not perform any action (uploads, resets).

use std::collections::HashSet;

use futures::{StreamExt, TryStreamExt};
use hostfw_model::{InventoryMember, InventoryReport};
use url::Url;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Fetched;
use crate::models::{link_target, Collection, Manager, ServiceRoot, SoftwareInventory, UpdateService};
use crate::timeouts;

impl RedfishClient {
    /// Crawls the BMC: ServiceRoot → Systems (Manufacturer, Model, SerialNumber of the identity
    /// System; PowerState of the host System, see `systems`) and UpdateService →
    /// FirmwareInventory → every member (Id, Name, Version, `Status.State`, `@odata.id`). Each
    /// member's version is classified known or unknown by `InventoryMember::reported` (absent,
    /// null, blank, placeholder text or a not-present state: "version not reported") with
    /// surrounding whitespace removed; a member without `Id` takes the last segment of its
    /// `@odata.id`.
    ///
    /// The members are read at most `ClientOptions::inventory_concurrency` at a time (real BMCs
    /// throttle; a captured Supermicro lists 111 members), and reported in the collection's order.
    pub async fn explore(&self) -> Result<InventoryReport, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        let systems = self.systems_from(&root_url, &root).await?;
        let identity = systems.identity().map(|s| s.doc.clone()).unwrap_or_default();
        // The host's power state; the identity System's when the host cannot be told.
        let power_state = systems.host().map_or_else(|| identity.power_state.clone(), |h| h.doc.power_state.clone());
        let Fetched { url: us_url, doc: update_service, .. } = self.update_service_doc_from(&root_url, &root).await?;
        let inventory_link = link_target(&update_service.firmware_inventory).ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: us_url.to_string(),
            what: "FirmwareInventory link in the UpdateService".into(),
        })?;
        let inventory_url = self.resolve_from(inventory_link, Some(&us_url))?;
        let member_urls = self.collection_members(&inventory_url).await?;
        let mut members = Vec::with_capacity(member_urls.len());
        // `buffered` runs up to the bound at once and yields in input order; the first error ends it.
        let docs: Vec<(String, SoftwareInventory)> = futures::stream::iter(member_urls)
            .map(|(link, url)| async move { self.get_json::<SoftwareInventory>(&url).await.map(|doc| (link, doc)) })
            .buffered(self.options().inventory_concurrency.max(1))
            .try_collect()
            .await?;
        // Images staged until their activation: (running member's @odata.id, staged version).
        let mut staged: Vec<(String, String)> = Vec::new();
        for (link, doc) in docs {
            let odata_id = doc.odata_id.clone().filter(|s| !s.trim().is_empty()).unwrap_or(link);
            if doc.staged == Some(true) {
                // Not a running version: remember it for the members it is staged for.
                let version = doc.version.as_deref().unwrap_or_default().trim().to_string();
                for target in staged_targets(&doc) {
                    staged.push((target, version.clone()));
                }
                continue;
            }
            let id =
                doc.id.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| {
                    odata_id.trim_end_matches('/').rsplit('/').next().unwrap_or_default().to_string()
                });
            let state = doc.status.as_ref().and_then(|s| s.state.as_deref());
            let member = InventoryMember {
                name: doc.name.clone(),
                ..InventoryMember::reported(id, odata_id, doc.version.as_deref(), state)
            };
            if let Some(why) = &member.version_unknown {
                tracing::debug!(bmc = %self.address(), member = %member.odata_id, version = ?doc.version, %why,
                    "firmware inventory member: version not reported");
            }
            members.push(member);
        }
        for (target, version) in staged {
            let target = target.trim_end_matches('/');
            if let Some(m) = members.iter_mut().find(|m| m.odata_id.trim_end_matches('/') == target) {
                m.staged_version = Some(version);
            }
        }
        Ok(InventoryReport {
            vendor: identity.manufacturer.unwrap_or_default(),
            model: identity.model.unwrap_or_default(),
            serial: identity.serial_number,
            power_state,
            members,
        })
    }

    /// The host System's `PowerState` (`None` when the BMC does not report one); see `systems`
    /// for which System that is.
    pub async fn power_state(&self) -> Result<Option<String>, RedfishError> {
        Ok(self.host_system().await?.doc.power_state)
    }

    /// The BMC's Manager (with its ETag): the first Managers member whose `ManagerType` is
    /// `BMC`, else the first member.
    pub(crate) async fn bmc_manager(&self) -> Result<Fetched<Manager>, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        let link = link_target(&root.managers).ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: root_url.to_string(),
            what: "Managers link in the ServiceRoot".into(),
        })?;
        let managers_url = self.resolve_from(link, Some(&root_url))?;
        let members = self.collection_members(&managers_url).await?;
        let mut first: Option<Fetched<Manager>> = None;
        for (_, url) in members {
            let manager: Fetched<Manager> = self.get_fetched(&url).await?;
            if manager.doc.manager_type.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("BMC")) {
                return Ok(manager);
            }
            if first.is_none() {
                first = Some(manager);
            }
        }
        first.ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: managers_url.to_string(),
            what: "any member in the Managers collection".into(),
        })
    }

    /// The UpdateService document, its URL and its ETag.
    pub(crate) async fn update_service_doc(&self) -> Result<Fetched<UpdateService>, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        self.update_service_doc_from(&root_url, &root).await
    }

    async fn update_service_doc_from(
        &self,
        root_url: &Url,
        root: &ServiceRoot,
    ) -> Result<Fetched<UpdateService>, RedfishError> {
        let link = link_target(&root.update_service).ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: root_url.to_string(),
            what: "UpdateService link in the ServiceRoot".into(),
        })?;
        let url = self.resolve_from(link, Some(root_url))?;
        self.get_fetched(&url).await
    }

    /// Every member link of a collection, following `Members@odata.nextLink` pages, in order and
    /// without duplicates, as (link as written by the BMC, resolved URL).
    pub(crate) async fn collection_members(&self, collection: &Url) -> Result<Vec<(String, Url)>, RedfishError> {
        let mut out = Vec::new();
        let mut seen_members = HashSet::new();
        let mut seen_pages = HashSet::new();
        let mut page_url = collection.clone();
        for _ in 0..timeouts::MAX_COLLECTION_PAGES {
            seen_pages.insert(page_url.to_string());
            let page: Collection = self.get_json(&page_url).await?;
            for member in page.members.iter().flatten() {
                let Some(link) = member.target() else {
                    tracing::warn!(bmc = %self.address(), collection = %page_url, "collection member without @odata.id ignored");
                    continue;
                };
                let url = self.resolve_from(link, Some(&page_url))?;
                if seen_members.insert(url.to_string()) {
                    out.push((link.to_string(), url));
                }
            }
            let Some(next) = page.next_link.as_deref().filter(|s| !s.trim().is_empty()) else {
                return Ok(out);
            };
            let next_url = self.resolve_from(next, Some(&page_url))?;
            if seen_pages.contains(next_url.as_str()) {
                tracing::warn!(bmc = %self.address(), collection = %collection, next = %next_url, "collection nextLink loops; stopping");
                return Ok(out);
            }
            page_url = next_url;
        }
        tracing::warn!(bmc = %self.address(), collection = %collection, "collection has too many pages; truncated");
        Ok(out)
    }
}

/// The `@odata.id`s a staged SoftwareInventory entry is staged for (`Links.StagedTargets`).
fn staged_targets(doc: &SoftwareInventory) -> Vec<String> {
    doc.extra
        .get("Links")
        .and_then(|l| l.get("StagedTargets"))
        .and_then(|t| t.as_array())
        .map(|targets| {
            targets.iter().filter_map(|t| t.get("@odata.id").and_then(|v| v.as_str()).map(str::to_string)).collect()
        })
        .unwrap_or_default()
}
