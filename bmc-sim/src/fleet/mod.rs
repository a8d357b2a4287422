//! Running a fleet of simulated BMCs: starting and stopping it ([`running`]: the
//! `RunningFleet` handle), what tests change or probe on it at run time (`controls`), one BMC's
//! sockets (`server`) and certificates (`tls`), the state a BMC keeps and the fleet shares
//! (`state`), its counters (`stats`), time helpers (`clock`) and the library's error
//! (`error`). Owns no request handling: Redfish resources, updates, tasks and resets are
//! answered in their own folders, which read and change `state`; reading the fleet file is the
//! `hostfw-fleet` crate's.

pub mod clock;
pub mod controls;
pub mod error;
pub mod running;
pub mod server;
pub mod state;
pub mod stats;
pub mod tls;
