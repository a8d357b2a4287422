//! [`LiveSite`]: the site config a running worker reads, swappable by a live reload.
//!
//! Owns holding the current config and replacing it whole. Every clone of a `Deps` shares one
//! `LiveSite`, so a reload reaches the scheduler's passes, Site Explorer's crawls, the host
//! activities and `/metrics` at once. It must not decide which keys may change live
//! (`hostfw_model::config::ReloadPlan`, checked by the worker's `live_config` before
//! [`LiveSite::replace`]) nor read files.

use std::sync::{Arc, RwLock};

use hostfw_model::SiteConfig;

/// The running site config; cheap to clone (clones share it).
#[derive(Debug, Clone)]
pub struct LiveSite(Arc<RwLock<Arc<SiteConfig>>>);

impl LiveSite {
    /// Holds `site` until replaced.
    pub fn new(site: Arc<SiteConfig>) -> LiveSite {
        LiveSite(Arc::new(RwLock::new(site)))
    }

    /// The config in effect now. Read it once per pass or activity, so one decision never mixes
    /// two configs.
    pub fn current(&self) -> Arc<SiteConfig> {
        match self.0.read() {
            Ok(site) => site.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Put `site` in effect for every reader from now on.
    pub fn replace(&self, site: SiteConfig) {
        let site = Arc::new(site);
        match self.0.write() {
            Ok(mut current) => *current = site,
            Err(poisoned) => *poisoned.into_inner() = site,
        }
    }
}
