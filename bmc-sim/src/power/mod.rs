//! Host and BMC power: `ComputerSystem.Reset` and `Manager.Reset` (`resets`), the AC power
//! cycle (`ac_cycle`), the reset types a generic BMC allows (`reset_types`), and the boot
//! override with the image a host boots (`boot`). It must not serve resources (the System and
//! Chassis documents are `resources`) nor touch sockets (a BMC going down is `fleet::server`).

pub mod ac_cycle;
pub mod boot;
pub mod reset_types;
pub mod resets;
