//! hostfw bmc-sim: one process serving a FLEET of simulated Redfish BMCs, one HTTP listener
//! per host (HTTPS with the fleet key `tls = true`), for demos and tests of the firmware-update
//! orchestrator. This file only declares the modules and the public API; each module owns one
//! concept.
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
//! # What a simulated BMC offers
//! - ServiceRoot, one System, one Manager (BMC), one Chassis, UpdateService with three upload
//!   styles, TaskService with four monitor styles, SessionService; `/sim/*` control API.
//! - Resets: `ComputerSystem.Reset` (host power over `reset_seconds`), `Manager.Reset` (BMC off
//!   the network for `manager_reset_seconds`, sessions die), `Chassis.Reset` `PowerCycle` (AC
//!   power cycle: host off and back on over `reset_seconds`, BMC stays up).
//! - Activation: a finished update applies or stages its version per the image's
//!   `activation=immediate|reset|ac_cycle|manager_reset` header key, else per the apply time
//!   (Immediate / OnReset = `reset`). Staged versions run after their event ([`Activation`]).
//! - Platform lockdown and discovery boot on the System: `Oem.Hostfw.Lockdown`
//!   (Enabled/Disabled, fleet key `lockdown`), `Boot.BootSourceOverrideTarget`/`Enabled`
//!   (PATCH), and `Oem.Hostfw.BootedImage` ("discovery" after powering on with a Pxe override,
//!   else "os"; a Once override is consumed).
//! - Faults ([`Fault`]): failing tasks, versions that never change, HTTP errors, slow answers,
//!   an unreachable BMC, hidden inventory members; from the fleet file (`faults`), from
//!   [`RunningFleet::set_fault`] or from `PUT /sim/faults`.
//! - Counters ([`SimStats`]): uploads, resets, AC cycles, installs per member.
//!
//! # Layout
//! - `fleet_spec`: the fleet file. `fleet`: start/stop, [`RunningFleet`]; `fleet_controls`:
//!   runtime faults and probes. `host_server`: sockets. `tls`: fleet CA and BMC certificates.
//! - `state`: per-BMC state; `stats`: counters; `update_slot`: one update at a time per BMC.
//! - `router`: route table; `auth` + `sessions`: who may call; `service_root`, `inventory_routes`.
//!   `expand`: `$expand` (advertised features, parsing, expanded collections).
//!   `protocol`: request-wide DSP0266 rules (OData-Version, query parameters, Link and Allow
//!   headers); `odata`: the OData service and `$metadata` documents.
//! - `update_service` (advertised URIs), `update_push` (multipart + HttpPushUri),
//!   `update_simple` (SimpleUpdate), `update_params` (Targets, apply time).
//! - `image` (image format), `image_fetch` (SimpleUpdate download), `task` (Task resource),
//!   `task_runner` (progress and apply), `task_style` (vendor monitor profiles), `task_routes`.
//! - `resets`: ComputerSystem.Reset and Manager.Reset. `ac_cycle`: Chassis.Reset PowerCycle.
//!   `chassis`: Chassis resources. `activation`: which event activates which staged version.
//! - `boot`: boot override and booted image. `system_patch`: PATCH of the System (lockdown, boot).
//! - `fault`: the fault set type. `fault_inject`: applying faults. `control_api`: `/sim/*`.
//! - `redfish_error` / `redfish_json`: response shapes. `uris`: fixed URIs. `clock`: time helpers.

mod ac_cycle;
mod activation;
mod auth;
mod boot;
mod chassis;
mod clock;
mod control_api;
mod error;
mod expand;
mod fault;
mod fault_inject;
mod fleet;
mod fleet_controls;
mod fleet_spec;
mod host_flash;
mod host_server;
mod image;
mod image_fetch;
mod inventory_routes;
mod odata;
mod profile;
mod profile_patch;
mod profile_routes;
mod protocol;
mod redfish_error;
mod redfish_json;
mod resets;
mod router;
mod service_root;
mod sessions;
mod state;
mod stats;
mod system_patch;
mod task;
mod task_routes;
mod task_runner;
mod task_style;
mod tls;
mod update_params;
mod update_push;
mod update_service;
mod update_simple;
mod update_slot;
mod uris;

pub use activation::Activation;
pub use error::SimError;
pub use fault::{Fault, ForeignLinks, HttpErrors, LinkSpelling};
pub use fleet::{start, RunningFleet, SimHost, StatsReader};
pub use fleet_spec::{
    ApplyTime, FirmwareSpec, FleetSpec, HostSpec, TaskStyle, UploadStyle, DEFAULT_MANAGER_RESET_SECONDS,
    DEFAULT_PASSWORD, DEFAULT_RESET_SECONDS, DEFAULT_TASK_SECONDS, DEFAULT_USERNAME,
};
pub use image::{firmware_image, firmware_image_with_activation, IMAGE_MAGIC, MAX_IMAGE_BYTES};
pub use profile::{ChassisAction, Profile, ProfileMember, Shape};
pub use stats::{HostStats, SimStats};
