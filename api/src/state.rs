//! What every handler shares: the serving process's site config and site database.
//!
//! Owns nothing else; it must not cache anything the database is the record of.

use std::sync::Arc;

use hostfw_model::SiteConfig;
use hostfw_store::Store;

/// The API's shared state.
#[derive(Clone)]
pub struct ApiState {
    pub site: Arc<SiteConfig>,
    pub store: Store,
}
