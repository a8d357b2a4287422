//! hostfw fleet: the one owner of the fleet file, the TOML that lists simulated BMCs
//! (`bmc-sim --fleet`) and that `hostfw machine import --fleet` registers. It parses and
//! validates every key for both consumers: [`FleetSpec`] is the whole fleet as bmc-sim serves
//! it, [`FleetRoster`] what registration takes of the same file. A host's `profile` (a Redfish
//! tree captured from real hardware, [`Profile`]) is read here, since vendor, model and members
//! come from it. Pure data and files: no sockets, no HTTP, no clocks; it must not grow the
//! simulator's behaviour (that is `hostfw-bmc-sim`), so the CLI can read fleet files without
//! linking the simulator.
//!
//! # Layout
//! - `parse`: the TOML form (`[defaults]` merged into `[[host]]`, keys type-checked).
//! - `spec`: one host's keys, defaults and checks. `fleet`: [`FleetSpec`] and fleet-wide rules.
//! - `roster`: [`FleetRoster`], the registration view. `fault`: the `faults` key ([`Fault`]).
//! - `profile`: captured trees. `error`: [`FleetError`], [`ProfileError`].

mod error;
mod fault;
mod fleet;
mod parse;
mod profile;
mod roster;
mod spec;

pub use error::{FleetError, ProfileError};
pub use fault::{Fault, ForeignLinks, HttpErrors, LinkSpelling};
pub use fleet::FleetSpec;
pub use profile::{action, link, normalize, percent_decode, ChassisAction, Profile, ProfileMember, Shape};
pub use roster::{FleetRoster, RosterHost};
pub use spec::{
    ApplyTime, FirmwareSpec, HostSpec, TaskStyle, UploadStyle, DEFAULT_MANAGER_RESET_SECONDS, DEFAULT_PASSWORD,
    DEFAULT_RESET_SECONDS, DEFAULT_TASK_SECONDS, DEFAULT_USERNAME,
};
