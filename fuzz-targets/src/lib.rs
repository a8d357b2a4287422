//! hostfw-fuzz-targets: the fuzz targets of every parser that reads untrusted input.
//!
//! Owns the table of targets (`TARGETS`: name → `run`), shared by the cargo-fuzz binaries in
//! `fuzz/fuzz_targets/` and by the corpus replay test (`tests/replay.rs`), so both feed bytes to
//! exactly the same code. Each target module feeds its bytes to the functions production calls
//! (never copies of them) and asserts the properties: no panic, every refusal is a typed error
//! whose text names where (file, key, line, field, BMC and URL), and the body limits hold. It
//! must not hold parser logic of its own beyond splitting one input into several parts.

pub mod api_bodies;
pub mod captured_trees;
pub mod catalog_files;
pub mod fleet_file;
pub mod input;
pub mod redfish_models;
pub mod redfish_replies;
pub mod scout_package;
pub mod scripted_bmc;
pub mod site_config;
pub mod time_args;

/// One fuzz target: its name (the cargo-fuzz binary, the seed and regression folder) and entry.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
}

/// Every target, in the order `make fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target { name: "redfish_models", run: redfish_models::run },
    Target { name: "redfish_replies", run: redfish_replies::run },
    Target { name: "catalog_files", run: catalog_files::run },
    Target { name: "site_config", run: site_config::run },
    Target { name: "fleet_file", run: fleet_file::run },
    Target { name: "scout_package", run: scout_package::run },
    Target { name: "time_args", run: time_args::run },
    Target { name: "api_bodies", run: api_bodies::run },
];

/// The target named `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}
