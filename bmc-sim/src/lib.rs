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
//! - `fleet/`: start/stop ([`RunningFleet`]), runtime controls, sockets, TLS, per-BMC state,
//!   counters, the error type.
//! - `http/`: route table, protocol rules, auth and sessions, Redfish answer shapes, OData.
//! - `resources/`: ServiceRoot, Systems/Managers/FirmwareInventory, Chassis, `$expand`, System
//!   PATCH, fixed URIs.
//! - `update/`: UpdateService, upload routes and their parameters, update slot, image format
//!   and fetch, in-band host flash, activation rules.
//! - `tasks/`: the Task resource, running a task, vendor task styles, TaskService routes.
//! - `power/`: system and manager resets, AC power cycle, reset types, boot override.
//! - `profile/`: serving captured trees (routes, current documents, PATCH).
//! - `faults/`: applying injected faults, the `/sim/` control API.
//!
//! The fleet file ([`FleetSpec`], its keys and checks, [`Fault`], captured-tree [`Profile`]s) is
//! the `hostfw-fleet` crate's; this crate re-exports it.

mod faults;
mod fleet;
mod http;
mod power;
mod profile;
mod resources;
mod tasks;
mod update;

pub use fleet::error::SimError;
pub use fleet::running::{start, RunningFleet, SimHost, StatsReader};
pub use fleet::stats::{HostStats, SimStats};
pub use hostfw_fleet::{
    ApplyTime, ChassisAction, Fault, FirmwareSpec, FleetSpec, ForeignLinks, HostSpec, HttpErrors, LinkSpelling,
    Profile, ProfileMember, Shape, TaskStyle, UploadStyle, DEFAULT_MANAGER_RESET_SECONDS, DEFAULT_PASSWORD,
    DEFAULT_RESET_SECONDS, DEFAULT_TASK_SECONDS, DEFAULT_USERNAME,
};
pub use update::activation::Activation;
pub use update::image::{firmware_image, firmware_image_with_activation, IMAGE_MAGIC, MAX_IMAGE_BYTES};
