//! The crawl's read of the FirmwareInventory: finding the collection and reading every member
//! document.
//!
//! Owns the two steps `explore` takes for the inventory:
//! - the listing: the collection is found through the link remembered in the client's
//!   `LinkCache` when the ServiceRoot still gives the UpdateService URL it was remembered with
//!   (no UpdateService read), else through the UpdateService (which is then remembered). A
//!   remembered link whose read answers 404 or 410, or a document that is not a collection, is
//!   forgotten and the UpdateService read as if there had been none: a stale link costs requests,
//!   never a crawl. The collection is read with the caller's `$expand` query, if any
//!   (`inventory::collection_listing_with`);
//! - the member documents: expanded ones take no request, bare links are read at most
//!   `ClientOptions::inventory_concurrency` at a time, reported in the collection's order.
//!
//! Every URI comes from a link (the ServiceRoot's, the UpdateService's, or one of those
//! remembered); this file must not build one, and must not perform any action.

use futures::{StreamExt, TryStreamExt};
use url::Url;

use crate::client::RedfishClient;
use crate::error::RedfishError;
use crate::inventory::{Listing, MemberEntry};
use crate::models::{link_target, ServiceRoot, SoftwareInventory, UpdateService};

impl RedfishClient {
    /// The FirmwareInventory's members as listed (see the module docs for how the collection is
    /// found), read with `query` when there is one.
    pub(crate) async fn firmware_listing(
        &self,
        root_url: &Url,
        root: &ServiceRoot,
        query: Option<&str>,
    ) -> Result<Vec<MemberEntry>, RedfishError> {
        let us_url = self.update_service_url(root_url, root)?;
        let cache = self.options().link_cache.as_ref();
        if let Some(inventory_url) = cache.and_then(|c| c.firmware_inventory(self.bmc_text(), &us_url)) {
            match self.collection_listing_with(&inventory_url, query).await {
                Ok(Listing { entries, is_collection: true }) => return Ok(entries),
                Ok(_) => tracing::info!(bmc = %self.address(), collection = %inventory_url,
                    "remembered FirmwareInventory link leads to a document that is not a collection; reading the UpdateService"),
                Err(e) if is_gone(&e) => tracing::info!(bmc = %self.address(), collection = %inventory_url, error = %e,
                    "remembered FirmwareInventory link is stale; reading the UpdateService"),
                Err(e) => return Err(e),
            }
            if let Some(c) = cache {
                c.forget(self.bmc_text());
            }
        }
        let update_service: UpdateService = self.get_json(&us_url).await?;
        let inventory_link = link_target(&update_service.firmware_inventory).ok_or_else(|| RedfishError::Missing {
            bmc: self.bmc(),
            url: us_url.to_string(),
            what: "FirmwareInventory link in the UpdateService".into(),
        })?;
        let inventory_url = self.resolve_from(inventory_link, Some(&us_url))?;
        let listing = self.collection_listing_with(&inventory_url, query).await?;
        if let (Some(c), true) = (cache, listing.is_collection) {
            c.remember(self.bmc_text(), &us_url, &inventory_url);
        }
        Ok(listing.entries)
    }

    /// Every member document of a listing, in its order, with the link the collection gave for
    /// it: an expanded member as listed, a bare link read `inventory_concurrency` at a time.
    pub(crate) async fn firmware_member_docs(
        &self,
        entries: Vec<MemberEntry>,
    ) -> Result<Vec<(String, SoftwareInventory)>, RedfishError> {
        // `buffered` runs up to the bound at once and yields in input order; the first error ends
        // it. An expanded member is ready at once and takes no request.
        futures::stream::iter(entries)
            .map(|entry| async move {
                let doc = match entry.expanded.and_then(|doc| serde_json::from_value::<SoftwareInventory>(doc).ok()) {
                    Some(doc) => doc,
                    None => self.get_json::<SoftwareInventory>(&entry.url).await?,
                };
                Ok::<_, RedfishError>((entry.link, doc))
            })
            .buffered(self.options().inventory_concurrency.max(1))
            .try_collect()
            .await
    }
}

/// Whether a read of a remembered link says the resource is not there any more (404, 410) or
/// not a Redfish document at all.
fn is_gone(e: &RedfishError) -> bool {
    matches!(e.http_status(), Some(404 | 410)) || matches!(e, RedfishError::Parse { .. })
}
