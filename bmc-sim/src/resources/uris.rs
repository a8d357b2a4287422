//! Every fixed URI of a simulated BMC, in one place so resources and routes agree.
//! Constants only.

pub const SERVICE_ROOT: &str = "/redfish/v1/";
pub const SYSTEMS: &str = "/redfish/v1/Systems";
pub const SYSTEM: &str = "/redfish/v1/Systems/System.Embedded.1";
pub const SYSTEM_RESET: &str = "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset";
pub const CHASSIS_COLLECTION: &str = "/redfish/v1/Chassis";
pub const CHASSIS: &str = "/redfish/v1/Chassis/1";
pub const CHASSIS_RESET: &str = "/redfish/v1/Chassis/1/Actions/Chassis.Reset";
pub const MANAGERS: &str = "/redfish/v1/Managers";
pub const MANAGER: &str = "/redfish/v1/Managers/BMC";
pub const MANAGER_RESET: &str = "/redfish/v1/Managers/BMC/Actions/Manager.Reset";
pub const UPDATE_SERVICE: &str = "/redfish/v1/UpdateService";
pub const FIRMWARE_INVENTORY: &str = "/redfish/v1/UpdateService/FirmwareInventory";
pub const MULTIPART_PUSH: &str = "/redfish/v1/UpdateService/upload";
pub const HTTP_PUSH: &str = "/redfish/v1/UpdateService/push";
pub const SIMPLE_UPDATE: &str = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate";
pub const SESSION_SERVICE: &str = "/redfish/v1/SessionService";
pub const SESSIONS: &str = "/redfish/v1/SessionService/Sessions";
pub const SESSIONS_MEMBERS: &str = "/redfish/v1/SessionService/Sessions/Members";

/// URI of one firmware inventory member.
pub fn firmware_member(id: &str) -> String {
    format!("{FIRMWARE_INVENTORY}/{id}")
}

/// URI of one session.
pub fn session(id: u64) -> String {
    format!("{SESSIONS}/{id}")
}
