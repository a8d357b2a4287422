//! The integration tests of `hostfw-activities`, one test binary: one module per concern
//! (each module's doc says what it covers).

mod artifacts_confined;
mod backends;
mod catalog_source;
mod scout_package;
mod scout_signing;
mod script_lock;
mod site_view_cache;
