//! Lenient serde models of the Redfish documents the client reads.
//!
//! Owns the shapes of ServiceRoot, collections, ComputerSystem (with its `Boot` override),
//! Manager, Chassis, UpdateService, SoftwareInventory, ActionInfo, Task, Message and the error body, decoded so that a BMC's
//! oddities degrade to `None` instead of failing: every property is optional, a property of the
//! wrong JSON type becomes `None` (numbers given as strings are accepted), dates stay `String`,
//! and everything unknown is kept in `extra`. It must not perform I/O or make decisions
//! (routing, task state interpretation); only the documents' shapes and trivial accessors live here.

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Properties a model does not name, kept verbatim.
pub type Extra = Map<String, Value>;

// ----- lenient field decoders ------------------------------------------------------------------

/// Any JSON value, decoded as `T` if it fits, else `None` (never an error).
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

/// A string; numbers and booleans are turned into their text, anything else is `None`.
fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(value_to_string(&Value::deserialize(d)?))
}

/// An unsigned integer; accepts integers, non-negative floats and numeric strings.
fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(value_to_u64(&Value::deserialize(d)?))
}

/// Like `lenient_u64`, for values that must fit a `u32` (e.g. `PercentComplete`).
fn lenient_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Ok(value_to_u64(&Value::deserialize(d)?).and_then(|n| u32::try_from(n).ok()))
}

/// A boolean; accepts `true`/`false` and the strings "true"/"false" (any case).
fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Bool(b) => Some(b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    })
}

/// A list: the elements that decode as `T` are kept, the others dropped; a single object where a
/// list is expected is taken as a one-element list.
fn lenient_vec<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => Some(items.into_iter().filter_map(|v| serde_json::from_value(v).ok()).collect()),
        v @ Value::Object(_) => serde_json::from_value(v).ok().map(|one| vec![one]),
        _ => None,
    })
}

/// A list of strings, each decoded like `lenient_string`.
fn lenient_strings<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    Ok(value_to_strings(&Value::deserialize(d)?))
}

/// Text of a scalar JSON value (string, number, bool); `None` for null, arrays and objects.
pub fn value_to_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An unsigned integer from a number or a numeric string; `None` otherwise.
pub fn value_to_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| float_to_u64(n.as_f64()?)),
        Value::String(s) => {
            let s = s.trim();
            s.parse::<u64>().ok().or_else(|| float_to_u64(s.parse::<f64>().ok()?))
        }
        _ => None,
    }
}

fn float_to_u64(f: f64) -> Option<u64> {
    if f.is_finite() && f >= 0.0 && f <= u64::MAX as f64 {
        Some(f.round() as u64)
    } else {
        None
    }
}

/// A list of scalar texts from an array (non-scalars dropped) or a single scalar.
pub fn value_to_strings(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Array(items) => Some(items.iter().filter_map(value_to_string).collect()),
        Value::Null => None,
        other => value_to_string(other).map(|s| vec![s]),
    }
}

// ----- links -----------------------------------------------------------------------------------

/// A navigation link `{"@odata.id": "..."}`. A bare string is accepted as the link itself; any
/// other shape decodes to a link without a target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ODataLink {
    pub odata_id: Option<String>,
    pub extra: Extra,
}

impl<'de> Deserialize<'de> for ODataLink {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => ODataLink { odata_id: Some(s), extra: Extra::new() },
            Value::Object(mut map) => {
                let odata_id = map.remove("@odata.id").as_ref().and_then(value_to_string);
                ODataLink { odata_id, extra: map }
            }
            _ => ODataLink::default(),
        })
    }
}

impl ODataLink {
    /// The link target, if it is a non-empty string.
    pub fn target(&self) -> Option<&str> {
        self.odata_id.as_deref().filter(|s| !s.trim().is_empty())
    }
}

/// The target of an optional link, if present and non-empty.
pub fn link_target(link: &Option<ODataLink>) -> Option<&str> {
    link.as_ref().and_then(ODataLink::target)
}

// ----- ServiceRoot -----------------------------------------------------------------------------

/// `/redfish/v1/`: the entry point every other URI is discovered from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ServiceRoot {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "Id", deserialize_with = "lenient_string")]
    pub id: Option<String>,
    #[serde(rename = "Name", deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(rename = "RedfishVersion", deserialize_with = "lenient_string")]
    pub redfish_version: Option<String>,
    #[serde(rename = "UUID", deserialize_with = "lenient_string")]
    pub uuid: Option<String>,
    #[serde(rename = "Vendor", deserialize_with = "lenient_string")]
    pub vendor: Option<String>,
    #[serde(rename = "Systems", deserialize_with = "lenient")]
    pub systems: Option<ODataLink>,
    #[serde(rename = "Managers", deserialize_with = "lenient")]
    pub managers: Option<ODataLink>,
    #[serde(rename = "Chassis", deserialize_with = "lenient")]
    pub chassis: Option<ODataLink>,
    #[serde(rename = "UpdateService", deserialize_with = "lenient")]
    pub update_service: Option<ODataLink>,
    #[serde(rename = "SessionService", deserialize_with = "lenient")]
    pub session_service: Option<ODataLink>,
    /// The TaskService, linked as `Tasks` (the DMTF name; every captured real root uses it and
    /// none has a `TaskService` key).
    #[serde(rename = "Tasks", deserialize_with = "lenient")]
    pub tasks: Option<ODataLink>,
    /// Absent on some services (sushy-tools), so optional like everything else.
    #[serde(rename = "Links", deserialize_with = "lenient")]
    pub links: Option<ServiceRootLinks>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `ServiceRoot.Links`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ServiceRootLinks {
    #[serde(rename = "Sessions", deserialize_with = "lenient")]
    pub sessions: Option<ODataLink>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `SessionService`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionService {
    #[serde(rename = "Sessions", deserialize_with = "lenient")]
    pub sessions: Option<ODataLink>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `TaskService`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskService {
    #[serde(rename = "Tasks", deserialize_with = "lenient")]
    pub tasks: Option<ODataLink>,
    #[serde(flatten)]
    pub extra: Extra,
}

// ----- collections -----------------------------------------------------------------------------

/// One page of a resource collection.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Collection {
    #[serde(rename = "Members", deserialize_with = "lenient_vec")]
    pub members: Option<Vec<ODataLink>>,
    #[serde(rename = "Members@odata.count", deserialize_with = "lenient_u64")]
    pub members_count: Option<u64>,
    #[serde(rename = "Members@odata.nextLink", deserialize_with = "lenient_string")]
    pub next_link: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

// ----- actions ---------------------------------------------------------------------------------

/// One entry of an `Actions` object, e.g. `"#ComputerSystem.Reset": {"target": ...}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ActionDef {
    #[serde(rename = "target", deserialize_with = "lenient_string")]
    pub target: Option<String>,
    #[serde(rename = "@Redfish.ActionInfo", deserialize_with = "lenient_string")]
    pub action_info: Option<String>,
    /// Holds the `<Parameter>@Redfish.AllowableValues` annotations among others.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ActionDef {
    /// The non-empty target URI.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref().filter(|s| !s.trim().is_empty())
    }

    /// `<parameter>@Redfish.AllowableValues`, when annotated on the action.
    pub fn allowable_values(&self, parameter: &str) -> Option<Vec<String>> {
        self.extra.get(&format!("{parameter}@Redfish.AllowableValues")).and_then(value_to_strings)
    }
}

/// An `Actions` object: action name (`#Type.Action`) to its definition.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct Actions(pub Extra);

impl Actions {
    /// The named action (e.g. `"#ComputerSystem.Reset"`), if present and an object.
    pub fn get(&self, name: &str) -> Option<ActionDef> {
        self.0.get(name).filter(|v| v.is_object()).and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}

/// An `ActionInfo` resource describing an action's parameters.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ActionInfo {
    #[serde(rename = "Parameters", deserialize_with = "lenient_vec")]
    pub parameters: Option<Vec<ActionParameter>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One `ActionInfo.Parameters` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ActionParameter {
    #[serde(rename = "Name", deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(rename = "Required", deserialize_with = "lenient_bool")]
    pub required: Option<bool>,
    #[serde(rename = "AllowableValues", deserialize_with = "lenient_strings")]
    pub allowable_values: Option<Vec<String>>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ActionInfo {
    /// `AllowableValues` of the named parameter, when listed.
    pub fn allowable_values(&self, parameter: &str) -> Option<Vec<String>> {
        self.parameters
            .as_ref()?
            .iter()
            .find(|p| p.name.as_deref() == Some(parameter))
            .and_then(|p| p.allowable_values.clone())
    }
}

// ----- systems and managers --------------------------------------------------------------------

/// A `ComputerSystem`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ComputerSystem {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "Id", deserialize_with = "lenient_string")]
    pub id: Option<String>,
    #[serde(rename = "Name", deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(rename = "Manufacturer", deserialize_with = "lenient_string")]
    pub manufacturer: Option<String>,
    #[serde(rename = "Model", deserialize_with = "lenient_string")]
    pub model: Option<String>,
    #[serde(rename = "SerialNumber", deserialize_with = "lenient_string")]
    pub serial_number: Option<String>,
    #[serde(rename = "PowerState", deserialize_with = "lenient_string")]
    pub power_state: Option<String>,
    #[serde(rename = "BiosVersion", deserialize_with = "lenient_string")]
    pub bios_version: Option<String>,
    #[serde(rename = "Actions", deserialize_with = "lenient")]
    pub actions: Option<Actions>,
    /// The boot source override (`Boot`), when the BMC offers one.
    #[serde(rename = "Boot", deserialize_with = "lenient")]
    pub boot: Option<Boot>,
    /// Vendor extensions, verbatim (e.g. `Oem.Hostfw.Lockdown`).
    #[serde(rename = "Oem", deserialize_with = "lenient")]
    pub oem: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ComputerSystem {
    /// `Oem.<vendor>.<property>`, when present and not null.
    pub fn oem_property(&self, vendor: &str, property: &str) -> Option<&Value> {
        self.oem.as_ref()?.get(vendor)?.get(property).filter(|v| !v.is_null())
    }
}

/// A ComputerSystem's `Boot` object (boot source override).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Boot {
    #[serde(rename = "BootSourceOverrideTarget", deserialize_with = "lenient_string")]
    pub boot_source_override_target: Option<String>,
    #[serde(rename = "BootSourceOverrideEnabled", deserialize_with = "lenient_string")]
    pub boot_source_override_enabled: Option<String>,
    #[serde(rename = "BootSourceOverrideMode", deserialize_with = "lenient_string")]
    pub boot_source_override_mode: Option<String>,
    /// Holds the `<Property>@Redfish.AllowableValues` annotations among others.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Boot {
    /// `<property>@Redfish.AllowableValues`, when annotated.
    pub fn allowable_values(&self, property: &str) -> Option<Vec<String>> {
        self.extra.get(&format!("{property}@Redfish.AllowableValues")).and_then(value_to_strings)
    }
}

/// A `Chassis`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Chassis {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "Id", deserialize_with = "lenient_string")]
    pub id: Option<String>,
    #[serde(rename = "Name", deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(rename = "ChassisType", deserialize_with = "lenient_string")]
    pub chassis_type: Option<String>,
    #[serde(rename = "PowerState", deserialize_with = "lenient_string")]
    pub power_state: Option<String>,
    #[serde(rename = "Actions", deserialize_with = "lenient")]
    pub actions: Option<Actions>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `Manager` (the BMC itself, usually).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Manager {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "Id", deserialize_with = "lenient_string")]
    pub id: Option<String>,
    #[serde(rename = "ManagerType", deserialize_with = "lenient_string")]
    pub manager_type: Option<String>,
    #[serde(rename = "FirmwareVersion", deserialize_with = "lenient_string")]
    pub firmware_version: Option<String>,
    #[serde(rename = "Actions", deserialize_with = "lenient")]
    pub actions: Option<Actions>,
    #[serde(flatten)]
    pub extra: Extra,
}

// ----- update service and inventory ------------------------------------------------------------

/// The `UpdateService`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UpdateService {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "ServiceEnabled", deserialize_with = "lenient_bool")]
    pub service_enabled: Option<bool>,
    #[serde(rename = "MultipartHttpPushUri", deserialize_with = "lenient_string")]
    pub multipart_http_push_uri: Option<String>,
    /// Deprecated since UpdateService v1_15_0, still common.
    #[serde(rename = "HttpPushUri", deserialize_with = "lenient_string")]
    pub http_push_uri: Option<String>,
    #[serde(rename = "HttpPushUriTargets", deserialize_with = "lenient_strings")]
    pub http_push_uri_targets: Option<Vec<String>>,
    #[serde(rename = "HttpPushUriOptions", deserialize_with = "lenient")]
    pub http_push_uri_options: Option<Value>,
    /// May be `null`; accepted as a number or a numeric string.
    #[serde(rename = "MaxImageSizeBytes", deserialize_with = "lenient_u64")]
    pub max_image_size_bytes: Option<u64>,
    #[serde(rename = "FirmwareInventory", deserialize_with = "lenient")]
    pub firmware_inventory: Option<ODataLink>,
    #[serde(rename = "SoftwareInventory", deserialize_with = "lenient")]
    pub software_inventory: Option<ODataLink>,
    #[serde(rename = "Actions", deserialize_with = "lenient")]
    pub actions: Option<Actions>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `SoftwareInventory` (a FirmwareInventory member).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SoftwareInventory {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "Id", deserialize_with = "lenient_string")]
    pub id: Option<String>,
    #[serde(rename = "Name", deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(rename = "Version", deserialize_with = "lenient_string")]
    pub version: Option<String>,
    #[serde(rename = "Updateable", deserialize_with = "lenient_bool")]
    pub updateable: Option<bool>,
    /// Kept as text: BMCs send dates with and without offsets.
    #[serde(rename = "ReleaseDate", deserialize_with = "lenient_string")]
    pub release_date: Option<String>,
    #[serde(rename = "SoftwareId", deserialize_with = "lenient_string")]
    pub software_id: Option<String>,
    #[serde(rename = "RelatedItem", deserialize_with = "lenient_vec")]
    pub related_item: Option<Vec<ODataLink>>,
    #[serde(rename = "Active", deserialize_with = "lenient_bool")]
    pub active: Option<bool>,
    #[serde(rename = "Staged", deserialize_with = "lenient_bool")]
    pub staged: Option<bool>,
    /// `Status` (its `State` says whether the member is there at all, e.g. `Absent`).
    #[serde(rename = "Status", deserialize_with = "lenient")]
    pub status: Option<ResourceStatus>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A resource's `Status` (`Resource.Status`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResourceStatus {
    #[serde(rename = "State", deserialize_with = "lenient_string")]
    pub state: Option<String>,
    #[serde(rename = "Health", deserialize_with = "lenient_string")]
    pub health: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

// ----- tasks and messages ----------------------------------------------------------------------

/// A `Task` (or whatever a task monitor returned that looks like one).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Task {
    #[serde(rename = "@odata.id", deserialize_with = "lenient_string")]
    pub odata_id: Option<String>,
    #[serde(rename = "@odata.type", deserialize_with = "lenient_string")]
    pub odata_type: Option<String>,
    #[serde(rename = "Id", deserialize_with = "lenient_string")]
    pub id: Option<String>,
    #[serde(rename = "Name", deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(rename = "TaskState", deserialize_with = "lenient_string")]
    pub task_state: Option<String>,
    #[serde(rename = "TaskStatus", deserialize_with = "lenient_string")]
    pub task_status: Option<String>,
    #[serde(rename = "PercentComplete", deserialize_with = "lenient_u32")]
    pub percent_complete: Option<u32>,
    #[serde(rename = "Messages", deserialize_with = "lenient_vec")]
    pub messages: Option<Vec<Message>>,
    /// Kept as text (dates without offsets are common).
    #[serde(rename = "StartTime", deserialize_with = "lenient_string")]
    pub start_time: Option<String>,
    #[serde(rename = "EndTime", deserialize_with = "lenient_string")]
    pub end_time: Option<String>,
    #[serde(rename = "TaskMonitor", deserialize_with = "lenient_string")]
    pub task_monitor: Option<String>,
    #[serde(rename = "Oem", deserialize_with = "lenient")]
    pub oem: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Task {
    /// Whether the document is a Task: typed `#Task.` or carrying a `TaskState`.
    pub fn looks_like_task(&self) -> bool {
        self.task_state.is_some() || self.odata_type.as_deref().is_some_and(|t| t.contains("#Task."))
    }

    /// The Dell job state (`Oem.Dell.JobState`), used when `TaskState` is absent.
    pub fn dell_job_state(&self) -> Option<String> {
        self.oem.as_ref()?.get("Dell")?.get("JobState").and_then(value_to_string)
    }
}

/// A Redfish `Message` (Task.Messages, `@Message.ExtendedInfo`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Message {
    #[serde(rename = "MessageId", deserialize_with = "lenient_string")]
    pub message_id: Option<String>,
    #[serde(rename = "Message", deserialize_with = "lenient_string")]
    pub message: Option<String>,
    #[serde(rename = "Severity", deserialize_with = "lenient_string")]
    pub severity: Option<String>,
    #[serde(rename = "MessageSeverity", deserialize_with = "lenient_string")]
    pub message_severity: Option<String>,
    #[serde(rename = "MessageArgs", deserialize_with = "lenient_strings")]
    pub message_args: Option<Vec<String>>,
    #[serde(rename = "Resolution", deserialize_with = "lenient_string")]
    pub resolution: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Message {
    /// `"MessageId: Message"`, or whichever of the two is present; `None` if neither.
    pub fn summary(&self) -> Option<String> {
        let id = self.message_id.as_deref().filter(|s| !s.is_empty());
        let text = self.message.as_deref().filter(|s| !s.is_empty());
        match (id, text) {
            (Some(id), Some(text)) => Some(format!("{id}: {text}")),
            (Some(one), None) | (None, Some(one)) => Some(one.to_string()),
            (None, None) => None,
        }
    }
}

/// The body of a Redfish error answer: `{"error": {"code", "message", "@Message.ExtendedInfo"}}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    #[serde(rename = "error", deserialize_with = "lenient")]
    pub error: Option<ErrorInfo>,
    /// Some services put `@Message.ExtendedInfo` at the top level.
    #[serde(rename = "@Message.ExtendedInfo", deserialize_with = "lenient_vec")]
    pub extended_info: Option<Vec<Message>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `ErrorBody.error`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ErrorInfo {
    #[serde(rename = "code", deserialize_with = "lenient_string")]
    pub code: Option<String>,
    #[serde(rename = "message", deserialize_with = "lenient_string")]
    pub message: Option<String>,
    #[serde(rename = "@Message.ExtendedInfo", deserialize_with = "lenient_vec")]
    pub extended_info: Option<Vec<Message>>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ErrorBody {
    /// Every message in the body as `"MessageId: Message"` strings, the generic `message` first.
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(info) = &self.error {
            if let Some(m) = info.message.as_deref().filter(|m| !m.is_empty()) {
                out.push(m.to_string());
            }
            out.extend(info.extended_info.iter().flatten().filter_map(Message::summary));
        }
        out.extend(self.extended_info.iter().flatten().filter_map(Message::summary));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_inventory_tolerates_odd_json() {
        // Date without offset, Version as a number, Updateable as a string, RelatedItem as one
        // object, unknown properties kept.
        let doc = r##"{
            "@odata.id": "/redfish/v1/UpdateService/FirmwareInventory/BMC",
            "Id": "BMC", "Version": 1.45, "Updateable": "true",
            "ReleaseDate": "2017-08-22T12:00:00",
            "RelatedItem": {"@odata.id": "/redfish/v1/Managers/BMC"},
            "AdditionalVersions": {"Kernel": "Linux"}
        }"##;
        let m: SoftwareInventory = serde_json::from_str(doc).unwrap();
        assert_eq!(m.id.as_deref(), Some("BMC"));
        assert_eq!(m.version.as_deref(), Some("1.45"));
        assert_eq!(m.updateable, Some(true));
        assert_eq!(m.release_date.as_deref(), Some("2017-08-22T12:00:00"));
        assert_eq!(m.related_item.unwrap()[0].target(), Some("/redfish/v1/Managers/BMC"));
        assert!(m.extra.contains_key("AdditionalVersions"));
    }

    #[test]
    fn missing_and_null_fields_are_none() {
        let m: SoftwareInventory = serde_json::from_str(r##"{"Id": "BIOS", "Version": null}"##).unwrap();
        assert_eq!(m.version, None);
        assert_eq!(m.name, None);
        assert!(m.status.is_none());
        let m: SoftwareInventory = serde_json::from_str(r##"{"Status": {"State": "Absent", "Health": 3}}"##).unwrap();
        let status = m.status.unwrap();
        assert_eq!(status.state.as_deref(), Some("Absent"));
        assert_eq!(status.health.as_deref(), Some("3"));
        let m: SoftwareInventory = serde_json::from_str(r##"{"Status": "Enabled"}"##).unwrap();
        assert!(m.status.is_none(), "a Status of the wrong type is ignored");
        let m: SoftwareInventory = serde_json::from_str("{}").unwrap();
        assert_eq!(m.id, None);
    }

    #[test]
    fn service_root_without_links() {
        let doc = r##"{"@odata.type":"#ServiceRoot.v1_5_0.ServiceRoot","RedfishVersion":"1.5.0",
            "Systems":{"@odata.id":"/redfish/v1/Systems"},"UpdateService":"/redfish/v1/UpdateService",
            "Managers": 42}"##;
        let r: ServiceRoot = serde_json::from_str(doc).unwrap();
        assert!(r.links.is_none());
        assert_eq!(link_target(&r.systems), Some("/redfish/v1/Systems"));
        // a bare string link is accepted
        assert_eq!(link_target(&r.update_service), Some("/redfish/v1/UpdateService"));
        // a link of the wrong type is just absent
        assert_eq!(link_target(&r.managers), None);
    }

    #[test]
    fn update_service_null_max_size_and_string_numbers() {
        let u: UpdateService = serde_json::from_str(
            r##"{"HttpPushUri":"/FWUpdate","MaxImageSizeBytes":null,
                "Actions":{"#UpdateService.SimpleUpdate":{"target":"/redfish/v1/UpdateService/Actions/SimpleUpdate",
                "TransferProtocol@Redfish.AllowableValues":["HTTP","HTTPS"]}}}"##,
        )
        .unwrap();
        assert_eq!(u.max_image_size_bytes, None);
        assert_eq!(u.multipart_http_push_uri, None);
        let a = u.actions.unwrap().get("#UpdateService.SimpleUpdate").unwrap();
        assert_eq!(a.target(), Some("/redfish/v1/UpdateService/Actions/SimpleUpdate"));
        assert_eq!(a.allowable_values("TransferProtocol"), Some(vec!["HTTP".to_string(), "HTTPS".to_string()]));
        let u: UpdateService = serde_json::from_str(r##"{"MaxImageSizeBytes":"1048576"}"##).unwrap();
        assert_eq!(u.max_image_size_bytes, Some(1_048_576));
    }

    #[test]
    fn task_tolerates_odd_json() {
        let t: Task = serde_json::from_str(
            r##"{"@odata.type":"#Task.v1_4_3.Task","Id":"7","TaskState":"Running",
                "PercentComplete":"40","StartTime":"2024-01-01T00:00:00",
                "Messages":[{"MessageId":"Update.1.0.ApplyFailed","Message":"boom"}, 17, {"Message":"plain"}]}"##,
        )
        .unwrap();
        assert!(t.looks_like_task());
        assert_eq!(t.percent_complete, Some(40));
        let msgs: Vec<String> = t.messages.unwrap().iter().filter_map(Message::summary).collect();
        assert_eq!(msgs, vec!["Update.1.0.ApplyFailed: boom", "plain"]);
        let t: Task = serde_json::from_str(r##"{"PercentComplete": 33.6, "Messages": "nope"}"##).unwrap();
        assert_eq!(t.percent_complete, Some(34));
        assert!(t.messages.is_none());
        assert!(!t.looks_like_task());
    }

    #[test]
    fn collection_members_and_next_link() {
        let c: Collection = serde_json::from_str(
            r##"{"Members":[{"@odata.id":"/a"},{"bogus":1},"/b"],"Members@odata.count":"3",
                "Members@odata.nextLink":"/redfish/v1/X?$skip=2"}"##,
        )
        .unwrap();
        let targets: Vec<_> = c.members.as_ref().unwrap().iter().filter_map(|m| m.target()).collect();
        assert_eq!(targets, vec!["/a", "/b"]);
        assert_eq!(c.members_count, Some(3));
        assert_eq!(c.next_link.as_deref(), Some("/redfish/v1/X?$skip=2"));
    }

    #[test]
    fn error_body_messages() {
        let e: ErrorBody = serde_json::from_str(
            r##"{"error":{"code":"Base.1.8.GeneralError","message":"A general error has occurred.",
                "@Message.ExtendedInfo":[{"MessageId":"Base.1.8.ResourceAtUriUnauthorized","Message":"nope"}]}}"##,
        )
        .unwrap();
        assert_eq!(
            e.messages(),
            vec!["A general error has occurred.".to_string(), "Base.1.8.ResourceAtUriUnauthorized: nope".to_string()]
        );
    }

    #[test]
    fn action_info_allowable_values() {
        let a: ActionInfo = serde_json::from_str(
            r##"{"Parameters":[{"Name":"ResetType","Required":true,"AllowableValues":["On","ForceOff"]}]}"##,
        )
        .unwrap();
        assert_eq!(a.allowable_values("ResetType"), Some(vec!["On".to_string(), "ForceOff".to_string()]));
        assert_eq!(a.allowable_values("Other"), None);
    }

    #[test]
    fn system_boot_and_oem() {
        let s: ComputerSystem = serde_json::from_str(
            r##"{"Boot":{"BootSourceOverrideTarget":"None","BootSourceOverrideEnabled":"Disabled",
                "BootSourceOverrideTarget@Redfish.AllowableValues":["None","Pxe"]},
                "Oem":{"Hostfw":{"Lockdown":"Enabled","BootedImage":null}}}"##,
        )
        .unwrap();
        let boot = s.boot.as_ref().unwrap();
        assert_eq!(boot.boot_source_override_target.as_deref(), Some("None"));
        assert_eq!(
            boot.allowable_values("BootSourceOverrideTarget"),
            Some(vec!["None".to_string(), "Pxe".to_string()])
        );
        assert_eq!(boot.allowable_values("BootSourceOverrideEnabled"), None);
        assert_eq!(s.oem_property("Hostfw", "Lockdown"), Some(&Value::String("Enabled".into())));
        assert_eq!(s.oem_property("Hostfw", "BootedImage"), None);
        assert_eq!(s.oem_property("Dell", "Lockdown"), None);
        let s: ComputerSystem = serde_json::from_str(r##"{"Boot":"odd","Oem":7}"##).unwrap();
        assert!(s.boot.is_none());
        assert_eq!(s.oem_property("Hostfw", "Lockdown"), None);
    }
}
