//! The hostfw test kit: what the end-to-end tests (`tests/e2e/`) and the benchmarks (`bench/`)
//! start, drive and read. One concept per module:
//! - [`tools`]: where the pinned Temporal CLI and the `hostfw-worker` binary are; free ports;
//! - [`temporal`]: a Temporal dev server (the pinned CLI) that can be stopped, restarted, killed;
//! - [`config`]: the typed site-config builder [`SiteToml`] that renders the `site.toml` the site
//!   config parser reads (no test formats that TOML by hand), re-exported from `hostfw-fixtures`;
//! - [`fixtures`]: catalogs (the Dell R760 one and its variants), simulator firmware images,
//!   flash scripts and fleets, re-exported from `hostfw-fixtures`, and the kit's own readers;
//! - [`worker`]: the real worker on a thread of the test process, or the `hostfw-worker` binary
//!   as a child process that can be SIGKILLed and restarted;
//! - [`site`]: a whole site (dev server + bmc-sim fleet + SQLite site database + worker) and the
//!   `hostfw` CLI against it;
//! - [`history`]: reading workflow histories and pending activities (events, activity attempts,
//!   "does this text occur anywhere");
//! - [`metrics_page`]: a worker's `/metrics` page, every sample checked for its site label;
//! - [`wait`]: polling a condition until it holds (never fixed sleeps).
//!
//! The kit writes the site database only through `hostfw-store`.

pub mod config;
pub mod fixtures;
pub mod history;
pub mod metrics_page;
pub mod prometheus;
pub mod site;
pub mod temporal;
pub mod tools;
pub mod wait;
pub mod worker;

pub use config::SiteToml;
pub use fixtures::{write_image, Catalog, Firmware, HostModel};
pub use history::{activity_records, base64_decode, history_contains, history_events, ActivityRecord, PendingActivity};
pub use site::{register_fleet, Site, SiteSpec};
pub use temporal::{DevServer, Persistence};
pub use tools::{free_port, temporal_cli, worker_bin, workspace_root};
pub use wait::wait_for;
pub use worker::{ChildWorker, WorkerThread};
