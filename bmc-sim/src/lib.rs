//! hostfw bmc-sim: one process serving a FLEET of simulated Redfish BMCs, one HTTP listener
//! per host, for demos and tests of the firmware-update orchestrator. This file only declares
//! the modules and the public API; each module owns one concept.
//!
//! ```no_run
//! # async fn demo() -> Result<(), hostfw_bmc_sim::SimError> {
//! let spec = hostfw_bmc_sim::FleetSpec::load("fleet.toml")?;
//! let fleet = hostfw_bmc_sim::start(spec).await?;
//! for h in fleet.hosts() {
//!     println!("{} at {}", h.id, h.base_url);
//! }
//! fleet.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Layout
//! - `fleet_spec`: the fleet file. `fleet`: start/stop, [`RunningFleet`]. `host_server`: sockets.
//! - `state`: per-BMC state; `stats`: counters; `update_slot`: one update at a time per BMC.
//! - `router`: route table; `auth` + `sessions`: who may call; `service_root`, `inventory_routes`.
//! - `update_service` (advertised URIs), `update_push` (multipart + HttpPushUri),
//!   `update_simple` (SimpleUpdate), `update_params` (Targets, apply time).
//! - `image` (image format), `image_fetch` (SimpleUpdate download), `task` (Task resource),
//!   `task_runner` (progress and apply), `task_style` (vendor monitor profiles), `task_routes`.
//! - `resets`: ComputerSystem.Reset and Manager.Reset. `control_api`: `/sim/*`.
//! - `redfish_error` / `redfish_json`: response shapes. `uris`: fixed URIs. `clock`: time helpers.

mod auth;
mod clock;
mod control_api;
mod error;
mod fleet;
mod fleet_spec;
mod host_server;
mod image;
mod image_fetch;
mod inventory_routes;
mod redfish_error;
mod redfish_json;
mod resets;
mod router;
mod service_root;
mod sessions;
mod state;
mod stats;
mod task;
mod task_routes;
mod task_runner;
mod task_style;
mod update_params;
mod update_push;
mod update_service;
mod update_simple;
mod update_slot;
mod uris;

pub use error::SimError;
pub use fleet::{start, RunningFleet, SimHost};
pub use fleet_spec::{
    ApplyTime, FirmwareSpec, FleetSpec, HostSpec, TaskStyle, UploadStyle,
    DEFAULT_MANAGER_RESET_SECONDS, DEFAULT_PASSWORD, DEFAULT_RESET_SECONDS, DEFAULT_TASK_SECONDS,
    DEFAULT_USERNAME,
};
pub use image::{firmware_image, IMAGE_MAGIC, MAX_IMAGE_BYTES};
pub use stats::{HostStats, SimStats};
