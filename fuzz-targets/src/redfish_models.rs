//! Target `redfish_models`: one Redfish document decoded as every model type the client reads.
//!
//! Owns feeding one reply body to `hostfw_redfish::models` (ServiceRoot, collections with
//! `Members@odata.nextLink` and `$expand`ed members, ComputerSystem, Chassis, Manager,
//! UpdateService, SoftwareInventory, ActionInfo, Task, the error body) and to the accessors the
//! client calls on them. The property is the models' promise: decoding is lenient, so any JSON
//! object decodes as every model (a BMC's oddity becomes `None`, never an error), and nothing
//! panics. It must not talk HTTP (that is `redfish_replies`).

use hostfw_redfish::models::{
    value_to_string, value_to_strings, value_to_u64, ActionInfo, Chassis, Collection, ComputerSystem, ErrorBody,
    Manager, ServiceRoot, SessionService, SoftwareInventory, Task, TaskService, UpdateService,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Decodes `doc` as `T`; an object must always decode (the models are lenient).
fn decode<T: DeserializeOwned>(doc: &Value, what: &str) -> T {
    match serde_json::from_value::<T>(doc.clone()) {
        Ok(t) => t,
        Err(e) => panic!("redfish model {what}: a JSON object was refused (the models promise lenience): {e}"),
    }
}

pub fn run(data: &[u8]) {
    // The client reads a body with `serde_json::from_slice` (client.rs `Reply::json`); a body that
    // is not JSON is a `Parse` error there, with the BMC and URL (see `redfish_replies`).
    let Ok(doc) = serde_json::from_slice::<Value>(data) else { return };
    for v in [&doc, doc.get("Members").unwrap_or(&Value::Null)] {
        let _ = value_to_string(v);
        let _ = value_to_u64(v);
        let _ = value_to_strings(v);
    }
    if !doc.is_object() {
        return;
    }
    let root: ServiceRoot = decode(&doc, "ServiceRoot");
    let _ = hostfw_redfish::models::link_target(&root.systems);
    let _: SessionService = decode(&doc, "SessionService");
    let _: TaskService = decode(&doc, "TaskService");
    let page: Collection = decode(&doc, "Collection");
    // `$expand`: every member object is itself a document the client decodes.
    for member in doc.get("Members").and_then(Value::as_array).into_iter().flatten() {
        if member.is_object() {
            let _: SoftwareInventory = decode(member, "expanded SoftwareInventory member");
            let _: ComputerSystem = decode(member, "expanded ComputerSystem member");
            let _: Task = decode(member, "expanded Task member");
        }
    }
    for link in page.members.iter().flatten() {
        let _ = link.target();
    }
    let system: ComputerSystem = decode(&doc, "ComputerSystem");
    let _ = system.oem_property("Dell", "BootOrder");
    if let Some(actions) = &system.actions {
        if let Some(reset) = actions.get("#ComputerSystem.Reset") {
            let _ = reset.target();
            let _ = reset.allowable_values("ResetType");
        }
    }
    if let Some(boot) = &system.boot {
        let _ = boot.allowable_values("BootSourceOverrideTarget");
    }
    let chassis: Chassis = decode(&doc, "Chassis");
    if let Some(actions) = &chassis.actions {
        let _ = actions.get("#Chassis.Reset").map(|a| a.allowable_values("ResetType"));
    }
    let _: Manager = decode(&doc, "Manager");
    let _: UpdateService = decode(&doc, "UpdateService");
    let _: SoftwareInventory = decode(&doc, "SoftwareInventory");
    let info: ActionInfo = decode(&doc, "ActionInfo");
    let _ = info.allowable_values("ResetType");
    let task: Task = decode(&doc, "Task");
    let _ = task.looks_like_task();
    let _ = task.dell_job_state();
    for m in task.messages.iter().flatten() {
        let _ = m.summary();
    }
    let error: ErrorBody = decode(&doc, "ErrorBody");
    let _ = error.messages();
    let _ = decode::<Map<String, Value>>(&doc, "object");
}
