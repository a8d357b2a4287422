//! Walking the resource tree: the inventory crawl, power state, and the "BMC Manager /
//! UpdateService" lookups other operations start from (which System is which is `systems`).
//!
//! Owns `explore`, `power_state` and collection paging (`Members@odata.nextLink`), including a
//! page whose members came back expanded and the fallback to a plain read when a service refuses
//! the query (the query itself is `expand`'s; finding and reading the FirmwareInventory is
//! `firmware_inventory`'s). Every URI comes
//! from an `@odata.id` link in a document already read; this file must never build a resource
//! URI by itself, and must not perform any action (uploads, resets).

use std::collections::HashSet;

use hostfw_model::{InventoryMember, InventoryReport};
use serde_json::Value;
use url::Url;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::etag::Fetched;
use crate::expand::{self, ExpandSupport};
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
    /// When the ServiceRoot advertises `$expand` (and `ClientOptions::expand` is on), the Systems
    /// collection and the FirmwareInventory are each read with their members inline (`expand`):
    /// one request each instead of one per member. With a `ClientOptions::link_cache`, the
    /// FirmwareInventory link found in the UpdateService is remembered for this BMC, and a later
    /// crawl whose ServiceRoot gives the same UpdateService reads the FirmwareInventory directly
    /// (a remembered link that is gone is forgotten and the UpdateService read instead; see
    /// `firmware_inventory`). The Systems read and the UpdateService/FirmwareInventory reads go at
    /// once when `inventory_concurrency` allows two requests at a time. So a BMC that expands
    /// takes 4 requests on the first crawl (ServiceRoot; Systems and UpdateService at once; then
    /// the FirmwareInventory) and 3 on every later one with the same cache.
    ///
    /// Members that still come back as bare links (a service that ignores the query) and every
    /// member of a service without `$expand` are read one by one: Systems members in order,
    /// FirmwareInventory members at most `ClientOptions::inventory_concurrency` at a time (real
    /// BMCs throttle; a captured Supermicro lists 106 members). Either way they are reported in
    /// the collection's order.
    pub async fn explore(&self) -> Result<InventoryReport, RedfishError> {
        let (root_url, root) = self.service_root().await?;
        let query = if self.options().expand { ExpandSupport::of(&root).members_query() } else { None };
        let systems = self.systems_read(&root_url, &root, query.as_deref());
        let listing = self.firmware_listing(&root_url, &root, query.as_deref());
        // Two reads at once only where the bound allows two requests at once to this BMC.
        let (systems, entries) = if self.options().inventory_concurrency >= 2 {
            futures::try_join!(systems, listing)?
        } else {
            (systems.await?, listing.await?)
        };
        let identity = systems.identity().map(|s| s.doc.clone()).unwrap_or_default();
        // The host's power state; the identity System's when the host cannot be told.
        let power_state = systems.host().map_or_else(|| identity.power_state.clone(), |h| h.doc.power_state.clone());
        let docs = self.firmware_member_docs(entries).await?;
        // Images staged until their activation: (running member's @odata.id, staged version).
        let mut staged: Vec<(String, String)> = Vec::new();
        let mut members = Vec::with_capacity(docs.len());
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
        let url = self.update_service_url(root_url, root)?;
        self.get_fetched(&url).await
    }

    /// The UpdateService URL the ServiceRoot links to.
    pub(crate) fn update_service_url(&self, root_url: &Url, root: &ServiceRoot) -> Result<Url, RedfishError> {
        let link = link_target(&root.update_service).ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: root_url.to_string(),
            what: "UpdateService link in the ServiceRoot".into(),
        })?;
        self.resolve_from(link, Some(root_url))
    }

    /// Every member link of a collection, following `Members@odata.nextLink` pages, in order and
    /// without duplicates, as (link as written by the BMC, resolved URL).
    pub(crate) async fn collection_members(&self, collection: &Url) -> Result<Vec<(String, Url)>, RedfishError> {
        Ok(self.collection_listing(collection).await?.entries.into_iter().map(|e| (e.link, e.url)).collect())
    }

    /// The collection's members as [`collection_listing`](Self::collection_listing) gives them,
    /// read with `query` (an `$expand` from `expand`) when there is one. A query the service
    /// refuses or garbles (or whose answer is too large to read whole) is dropped and the
    /// collection read plainly; its members are then bare links for the caller to read.
    pub(crate) async fn collection_listing_with(
        &self,
        collection: &Url,
        query: Option<&str>,
    ) -> Result<Listing, RedfishError> {
        let Some(q) = query else {
            return self.collection_listing(collection).await;
        };
        match self.collection_listing(&expand::with_query(collection, q)).await {
            Ok(listing) => Ok(listing),
            Err(e @ (RedfishError::Http { .. } | RedfishError::Parse { .. } | RedfishError::BodyTooLarge { .. })) => {
                tracing::debug!(bmc = %self.address(), %collection, error = %e,
                    "$expand refused; reading the collection plainly and its members one by one");
                self.collection_listing(collection).await
            }
            Err(e) => Err(e),
        }
    }

    /// Every member of a collection, as [`collection_members`](Self::collection_members), each
    /// with its whole document when the page listed it expanded, and whether the first page was
    /// a collection at all (had `Members`). A later page is read at the `nextLink` the BMC wrote
    /// (which carries the query, if the BMC kept it).
    async fn collection_listing(&self, collection: &Url) -> Result<Listing, RedfishError> {
        let mut out = Vec::new();
        let mut seen_members = HashSet::new();
        let mut seen_pages = HashSet::new();
        let mut page_url = collection.clone();
        let mut is_collection = None;
        for _ in 0..timeouts::MAX_COLLECTION_PAGES {
            seen_pages.insert(page_url.to_string());
            let page: Collection = self.get_json(&page_url).await?;
            is_collection.get_or_insert(page.members.is_some());
            for member in page.members.iter().flatten() {
                let Some(link) = member.target() else {
                    tracing::warn!(bmc = %self.address(), collection = %page_url, "collection member without @odata.id ignored");
                    continue;
                };
                let url = self.resolve_from(link, Some(&page_url))?;
                if seen_members.insert(url.to_string()) {
                    let expanded = expand::is_expanded(&member.extra).then(|| {
                        let mut doc = member.extra.clone();
                        doc.insert("@odata.id".into(), Value::String(link.to_string()));
                        Value::Object(doc)
                    });
                    out.push(MemberEntry { link: link.to_string(), url, expanded });
                }
            }
            let Some(next) = page.next_link.as_deref().filter(|s| !s.trim().is_empty()) else {
                return Ok(Listing { entries: out, is_collection: is_collection.unwrap_or(false) });
            };
            let next_url = self.resolve_from(next, Some(&page_url))?;
            if seen_pages.contains(next_url.as_str()) {
                tracing::warn!(bmc = %self.address(), collection = %collection, next = %next_url, "collection nextLink loops; stopping");
                return Ok(Listing { entries: out, is_collection: is_collection.unwrap_or(false) });
            }
            page_url = next_url;
        }
        tracing::warn!(bmc = %self.address(), collection = %collection, "collection has too many pages; truncated");
        Ok(Listing { entries: out, is_collection: is_collection.unwrap_or(false) })
    }
}

/// A collection as read: its members, and whether it was a collection at all.
pub(crate) struct Listing {
    pub entries: Vec<MemberEntry>,
    /// The first page had a `Members` array (a document without one is not a collection).
    pub is_collection: bool,
}

/// One collection member as a page listed it.
pub(crate) struct MemberEntry {
    /// The link as written by the BMC.
    pub link: String,
    /// The link resolved on this BMC.
    pub url: Url,
    /// The member's document, when the page listed it expanded (`$expand`).
    pub expanded: Option<Value>,
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
