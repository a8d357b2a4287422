//! The reset types a generic (non-profile) BMC allows: the `ResetType@Redfish.AllowableValues`
//! of its ComputerSystem, Manager and Chassis. Constants only, read by the host state (what a
//! host allows), the resources that advertise them and the reset handlers; a profile BMC's
//! come from its captured tree. Depends on nothing in the crate.

/// `ResetType@Redfish.AllowableValues` of the ComputerSystem.
pub const SYSTEM_RESET_TYPES: [&str; 5] = ["On", "ForceOff", "ForceRestart", "GracefulRestart", "PowerCycle"];
/// `ResetType@Redfish.AllowableValues` of the Manager.
pub const MANAGER_RESET_TYPES: [&str; 2] = ["ForceRestart", "GracefulRestart"];
/// `ResetType@Redfish.AllowableValues` of the Chassis.
pub const CHASSIS_RESET_TYPES: [&str; 1] = ["PowerCycle"];
