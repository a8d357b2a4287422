//! Faults injected into a running BMC and the simulator's own `/sim/` control API through
//! which tests set them: applying a fault set and the request middleware that injects it
//! (`inject`), and `/sim/state` + `/sim/faults` (`control_api`). What a fault set IS (its keys
//! and checks) is `hostfw_fleet::Fault`; this folder must not define fault keys.

pub mod control_api;
pub mod inject;
