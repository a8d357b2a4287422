//! The integration tests of `hostfw-activities`, one test binary: one module per concern
//! (each module's doc says what it covers).

mod common;

mod activation;
mod artifacts_confined;
mod backends;
mod catalog_source;
mod crawl;
mod fixtures_images;
mod scout_package;
mod scout_signing;
mod script_lock;
mod site_view_cache;
mod stopping;
