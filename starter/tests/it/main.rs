//! The integration tests of the `hostfw` CLI, one test binary: operator commands end to end
//! through `hostfw_starter::run` on a temporary site (SQLite in a temp directory; no Temporal
//! server: these commands never open a client). One module per concern (each module's doc says
//! what it covers); the shared site and helpers are in [`common`]; the pinned human output of a
//! few commands is in `snapshots/`.
//!
//! Owns the happy paths and the refusals (unknown machines, bad times, conflicting flags, invalid
//! documents) with the check that a refused command wrote nothing. It must not need the network.

mod common;

// Arguments and the way to the site.
mod completion_man;
mod local_or_api;
// Machines and their BMC addresses.
mod machine_add;
mod site_key;
// Per-machine policy and windows.
mod auto_update;
mod maintenance;
mod start_updates;
// The catalog at runtime.
mod catalog_change;
mod catalog_fallback;
mod firmware_config;
mod shipped_config;
// The site config and its reload.
mod config_check;
mod config_reload;
// What the site is doing.
mod audit;
mod host_show;
mod plan_compliance;
// Output formats.
mod json_stdout;
mod json_vocabulary;
// Human output, pinned.
mod snapshots;
// Scout packages.
mod scout_package;
