//! The integration tests of `hostfw-bmc-sim`, one test binary: one module per concern
//! (each module's doc says what it covers).

mod common;
mod validators;

mod ac_cycle;
mod auth;
mod binary;
mod conformance;
mod expand;
mod faults;
mod lockdown_boot;
mod profiles;
mod protocol;
mod protocol_conformance;
mod resets;
mod service;
mod stats;
mod task_styles;
mod tls;
mod update_errors;
mod update_matrix;
