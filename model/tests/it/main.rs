//! The integration tests of `hostfw-model`, one test binary: one module per concern
//! (each module's doc says what it covers).
//!
//! Site and catalog TOML stays literal here: these tests are about the text the parser reads, and
//! `hostfw-fixtures` (the `SiteToml` builder) depends on this crate, so it cannot be used here.

mod common;

mod approval_deadline;
mod bmc_address;
mod brakes;
mod catalog_errors;
mod compliance;
mod config;
mod config_reference;
mod config_waits;
mod drift;
mod error_budget;
mod gates;
mod overlay;
mod properties;
mod repair;
mod selection;
mod serde_and_names;
mod version_not_reported;
mod version_order;
mod waves;
mod window_fit;
