//! The integration tests of `hostfw-model`, one test binary: one module per concern
//! (each module's doc says what it covers).

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
