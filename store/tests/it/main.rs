//! The integration tests of `hostfw-store`, one test binary: one module per concern
//! (each module's doc says what it covers).

#[macro_use]
mod common;

mod activation_marks;
mod api_tokens;
mod approval;
mod audit;
mod audit_target;
mod brakes;
mod config_reloads;
mod connect;
mod counters;
mod credentials;
mod error_budget;
mod file_modes;
mod firmware_config;
mod gate_fence;
mod health;
mod label_caps;
mod legacy_addresses;
mod machines;
mod notifications;
mod removal;
mod reports;
mod requests;
mod script_locks;
mod site_key;
mod update_runs;
mod upload_slots;
mod windows;
mod write_burst;
