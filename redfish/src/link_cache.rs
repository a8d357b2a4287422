//! `LinkCache`: the UpdateService → FirmwareInventory link of each BMC, remembered between
//! crawls so a repeat crawl reads the FirmwareInventory without reading the UpdateService first.
//!
//! Owns the map and its bound only: one entry per BMC (keyed by the BMC's address), holding the
//! UpdateService URL the ServiceRoot gave when the entry was made and the FirmwareInventory URL
//! that UpdateService linked to. An entry is used only while the ServiceRoot still gives the same
//! UpdateService URL. Deciding when an entry is stale (the FirmwareInventory read answers
//! 404/410 or is not a collection) and what to read instead is the crawl's
//! (`firmware_inventory`); this file makes no request and never builds a URI: it only hands back
//! what it was given.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use url::Url;

use crate::timeouts;

/// Remembered FirmwareInventory links, shared by every client given a clone (cheap to clone:
/// one map behind a lock). A worker keeps one for its life and hands it to each client it opens
/// through `ClientOptions::link_cache`.
#[derive(Clone)]
pub struct LinkCache {
    inner: Arc<Mutex<HashMap<String, Entry>>>,
    /// Most entries held (one per BMC); see `timeouts::MAX_LINK_CACHE_ENTRIES`.
    capacity: usize,
}

/// What one BMC's entry holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// The UpdateService URL the ServiceRoot gave (the entry's key beside the BMC).
    update_service: Url,
    /// The FirmwareInventory URL that UpdateService linked to.
    firmware_inventory: Url,
}

impl Default for LinkCache {
    fn default() -> Self {
        LinkCache::with_capacity(timeouts::MAX_LINK_CACHE_ENTRIES)
    }
}

impl fmt::Debug for LinkCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkCache").field("entries", &self.len()).field("capacity", &self.capacity).finish()
    }
}

impl LinkCache {
    /// An empty cache holding at most `capacity` BMCs (at least one).
    pub fn with_capacity(capacity: usize) -> LinkCache {
        LinkCache { inner: Arc::default(), capacity: capacity.max(1) }
    }

    /// How many BMCs have an entry.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no BMC has an entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The FirmwareInventory URL remembered for `bmc`, if its entry was made with the same
    /// UpdateService URL.
    pub(crate) fn firmware_inventory(&self, bmc: &str, update_service: &Url) -> Option<Url> {
        self.lock().get(bmc).filter(|e| e.update_service == *update_service).map(|e| e.firmware_inventory.clone())
    }

    /// Remembers `bmc`'s link, replacing its earlier entry. When the cache is full and `bmc` has
    /// no entry, one other entry is dropped first (a fleet larger than the bound costs those
    /// BMCs one UpdateService read per crawl, nothing more).
    pub(crate) fn remember(&self, bmc: &str, update_service: &Url, firmware_inventory: &Url) {
        let mut map = self.lock();
        if !map.contains_key(bmc) && map.len() >= self.capacity {
            if let Some(victim) = map.keys().next().cloned() {
                map.remove(&victim);
            }
        }
        map.insert(
            bmc.to_string(),
            Entry { update_service: update_service.clone(), firmware_inventory: firmware_inventory.clone() },
        );
    }

    /// Forgets `bmc`'s entry (it led to a FirmwareInventory that is gone).
    pub(crate) fn forget(&self, bmc: &str) {
        self.lock().remove(bmc);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock cannot leave the map half-written (every change is one
        // insert or remove), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn an_entry_is_used_only_with_the_same_update_service() {
        let cache = LinkCache::default();
        let us = url("http://bmc/redfish/v1/UpdateService");
        let inv = url("http://bmc/redfish/v1/UpdateService/FirmwareInventory");
        assert_eq!(cache.firmware_inventory("http://bmc:80", &us), None);
        cache.remember("http://bmc:80", &us, &inv);
        assert_eq!(cache.firmware_inventory("http://bmc:80", &us), Some(inv.clone()));
        assert_eq!(cache.firmware_inventory("http://other:80", &us), None, "another BMC");
        let moved = url("http://bmc/redfish/v1/UpdateService2");
        assert_eq!(cache.firmware_inventory("http://bmc:80", &moved), None, "the root names another UpdateService");
        cache.forget("http://bmc:80");
        assert_eq!(cache.firmware_inventory("http://bmc:80", &us), None);
        assert!(cache.is_empty());
    }

    #[test]
    fn clones_share_one_map_with_one_entry_per_bmc_and_a_bound() {
        let cache = LinkCache::with_capacity(2);
        let other = cache.clone();
        let us = url("http://bmc/redfish/v1/UpdateService");
        for (bmc, inv) in [("a", "http://a/inv1"), ("a", "http://a/inv2"), ("b", "http://b/inv")] {
            cache.remember(bmc, &us, &url(inv));
        }
        assert_eq!(other.len(), 2, "one entry per BMC, seen through a clone");
        assert_eq!(
            other.firmware_inventory("a", &us),
            Some(url("http://a/inv2")),
            "the later link replaced the earlier"
        );
        cache.remember("c", &us, &url("http://c/inv"));
        assert_eq!(cache.len(), 2, "full: one entry made room for the new BMC");
        assert_eq!(cache.firmware_inventory("c", &us), Some(url("http://c/inv")));
    }
}
