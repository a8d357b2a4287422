//! A *profile*: a Redfish tree captured from real hardware (a folder holding
//! `redfish/v1/**/index.json`, as DMTF's Redfish-Mockup-Creator writes it) that a simulated BMC
//! serves as captured. This file owns loading a tree and reading from it the few facts the
//! dynamic behaviour needs ([`Shape`]): which System carries the identity, which one the Reset
//! action, the BMC Manager and its reset, the UpdateService's advertised routes, the
//! FirmwareInventory members, the task collection. Every fact comes from the tree's own links,
//! names and allowable values (inline or through `@Redfish.ActionInfo`); nothing here knows a
//! vendor. It lives with the fleet file because a host's `profile` key takes vendor, model, serial
//! and members from the tree for every reader of the file. It serves nothing (that is bmc-sim's
//! `profile::routes`) and holds no run-time state.
//!
//! Trees are large (a DGX tree is 4,000 documents, 34 MB): a profile indexes the file paths and
//! reads a document from disk when it is asked for; each folder is loaded once per process and
//! shared by every BMC that uses it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::error::ProfileError;

/// One FirmwareInventory member as captured.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileMember {
    /// SoftwareInventory `Id` (else the last segment of its URI).
    pub id: String,
    /// Its `@odata.id` (the path it is served at).
    pub uri: String,
    pub name: Option<String>,
    /// `Version` as captured; `None` when absent, null or not a string.
    pub version: Option<String>,
    pub updateable: bool,
}

/// What the dynamic behaviour needs to know about a captured tree.
#[derive(Debug, Clone)]
pub struct Shape {
    /// From the System that reports Manufacturer and Model.
    pub vendor: String,
    pub model: String,
    pub serial: Option<String>,
    /// The Systems collection (`ServiceRoot.Systems`).
    pub systems: Option<String>,
    /// The System that carries `#ComputerSystem.Reset` (power state and boot override live here).
    pub system: String,
    pub system_reset_target: Option<String>,
    /// Allowed `ResetType`s (inline or through ActionInfo); empty = the tree lists none.
    pub system_reset_types: Vec<String>,
    /// That System's captured `Boot.BootSourceOverrideTarget` and `BootSourceOverrideEnabled`.
    pub boot: (Option<String>, Option<String>),
    /// True when the tree holds a Task created by that reset: this BMC answers resets with a Task.
    pub system_reset_answers_task: bool,
    /// The BMC's Manager (the first with `ManagerType` BMC, else the first).
    pub manager: Option<String>,
    pub manager_reset_target: Option<String>,
    pub manager_reset_types: Vec<String>,
    pub update_service: Option<String>,
    pub firmware_inventory: Option<String>,
    pub multipart_push: Option<String>,
    pub http_push: Option<String>,
    pub simple_update: Option<String>,
    /// The Task collection (`ServiceRoot.Tasks` → `TaskService.Tasks`).
    pub tasks: Option<String>,
    /// Highest numeric Task id captured: new tasks are numbered after it.
    pub last_captured_task: u64,
    pub sessions: Option<String>,
    pub members: Vec<ProfileMember>,
    /// Chassis actions that cycle the host's AC power: `#Chassis.Reset` of a chassis linked to
    /// the host's System, and OEM chassis reset actions (e.g. a GB200 tray's AuxPowerReset).
    pub ac_cycle_actions: Vec<ChassisAction>,
}

/// One chassis action that cycles the host's AC power.
#[derive(Debug, Clone, PartialEq)]
pub struct ChassisAction {
    pub target: String,
    /// Allowed `ResetType`s; empty = the tree lists none.
    pub reset_types: Vec<String>,
}

/// A loaded tree.
#[derive(Debug)]
pub struct Profile {
    /// The folder that holds `redfish/v1`.
    pub dir: PathBuf,
    /// Resource path (`/redfish/v1/...`, no trailing slash) → its `index.json`.
    files: HashMap<String, PathBuf>,
    pub shape: Shape,
}

/// Why a captured tree cannot serve as a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum ShapeError {
    #[error("redfish/v1/index.json is not JSON")]
    RootNotJson,
    #[error("no ComputerSystem reports both Manufacturer and Model")]
    NoIdentity,
    #[error("the Systems collection has no member")]
    NoSystem,
}

impl Profile {
    /// Load (once per process) the tree in `dir`: the folder holding `redfish/v1`, or
    /// `redfish/v1` itself.
    pub fn load(dir: &Path) -> Result<Arc<Profile>, ProfileError> {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Profile>>>> = OnceLock::new();
        let bad = |message: String| ProfileError { dir: dir.to_path_buf(), message };
        let mut root = dir.canonicalize().map_err(|e| bad(format!("cannot open the folder: {e}")))?;
        if root.ends_with("redfish/v1") {
            root.pop();
            root.pop();
        }
        let cache = CACHE.get_or_init(Default::default);
        if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&root) {
            return Ok(p.clone());
        }
        if !root.join("redfish/v1/index.json").is_file() {
            return Err(bad("not a Redfish tree: no redfish/v1/index.json in it".into()));
        }
        let mut files = HashMap::new();
        index(&root.join("redfish/v1"), "/redfish/v1", &mut files)
            .map_err(|e| bad(format!("cannot read the tree: {e}")))?;
        if !files.contains_key("/redfish/v1") {
            return Err(bad("not a Redfish tree: no redfish/v1/index.json in it".into()));
        }
        let mut profile = Profile { dir: root.clone(), files, shape: Shape::empty() };
        profile.shape = profile.read_shape().map_err(|e| bad(e.to_string()))?;
        let profile = Arc::new(profile);
        cache.lock().unwrap_or_else(|e| e.into_inner()).insert(root, profile.clone());
        Ok(profile)
    }

    /// Whether the tree has a document at `path` (normalised by [`normalize`]).
    pub fn has(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// The document at `path` as captured (bytes), if any.
    pub fn raw(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.files.get(path)?).ok()
    }

    /// The document at `path`, parsed.
    pub fn doc(&self, path: &str) -> Option<Value> {
        serde_json::from_slice(&self.raw(path)?).ok()
    }

    fn read_shape(&self) -> Result<Shape, ShapeError> {
        let root = self.doc("/redfish/v1").ok_or(ShapeError::RootNotJson)?;
        let mut shape = Shape::empty();
        shape.systems = link(&root, "Systems");
        let systems: Vec<(String, Value)> = shape.systems.as_ref().map(|c| self.members_of(c)).unwrap_or_default();
        let has_identity = |d: &Value| text(d, "Manufacturer").is_some() && text(d, "Model").is_some();
        let has_reset = |d: &Value| action(d, "#ComputerSystem.Reset").is_some();
        let pick = |first: &dyn Fn(&Value) -> bool, then: &dyn Fn(&Value) -> bool| {
            systems.iter().find(|(_, d)| first(d) && then(d)).or_else(|| systems.iter().find(|(_, d)| first(d)))
        };
        let (_, identity) = pick(&has_identity, &has_reset).ok_or(ShapeError::NoIdentity)?;
        shape.vendor = text(identity, "Manufacturer").unwrap_or_default();
        shape.model = text(identity, "Model").unwrap_or_default();
        shape.serial = text(identity, "SerialNumber");
        let (system, sys_doc) =
            pick(&has_reset, &has_identity).or_else(|| systems.first()).ok_or(ShapeError::NoSystem)?;
        shape.system = system.clone();
        if let Some(boot) = sys_doc.get("Boot") {
            shape.boot = (text(boot, "BootSourceOverrideTarget"), text(boot, "BootSourceOverrideEnabled"));
        }
        if let Some(a) = action(sys_doc, "#ComputerSystem.Reset") {
            shape.system_reset_target = text(a, "target").map(|t| normalize(&t));
            shape.system_reset_types = self.allowable(a, "ResetType");
        }

        let managers: Vec<(String, Value)> = link(&root, "Managers").map(|c| self.members_of(&c)).unwrap_or_default();
        let manager =
            managers.iter().find(|(_, d)| text(d, "ManagerType").as_deref() == Some("BMC")).or(managers.first());
        if let Some((uri, doc)) = manager {
            shape.manager = Some(uri.clone());
            if let Some(a) = action(doc, "#Manager.Reset") {
                shape.manager_reset_target = text(a, "target").map(|t| normalize(&t));
                shape.manager_reset_types = self.allowable(a, "ResetType");
            }
        }

        if let Some(us_uri) = link(&root, "UpdateService") {
            if let Some(us) = self.doc(&us_uri) {
                shape.firmware_inventory = link(&us, "FirmwareInventory");
                shape.multipart_push = text(&us, "MultipartHttpPushUri").map(|t| normalize(&t));
                shape.http_push = text(&us, "HttpPushUri").map(|t| normalize(&t));
                shape.simple_update =
                    action(&us, "#UpdateService.SimpleUpdate").and_then(|a| text(a, "target")).map(|t| normalize(&t));
            }
            shape.update_service = Some(us_uri);
        }
        if let Some(inv) = &shape.firmware_inventory {
            shape.members = self
                .members_of(inv)
                .into_iter()
                .map(|(uri, d)| ProfileMember {
                    id: text(&d, "Id").unwrap_or_else(|| last_segment(&uri).to_string()),
                    name: text(&d, "Name"),
                    version: text(&d, "Version"),
                    updateable: d.get("Updateable").and_then(Value::as_bool).unwrap_or(true),
                    uri,
                })
                .collect();
        }

        let task_service = link(&root, "Tasks").and_then(|u| self.doc(&u));
        shape.tasks = task_service.as_ref().and_then(|ts| link(ts, "Tasks"));
        if let Some(tasks) = &shape.tasks {
            for (uri, task) in self.members_of(tasks) {
                if let Ok(n) = last_segment(&uri).parse::<u64>() {
                    shape.last_captured_task = shape.last_captured_task.max(n);
                }
                let target = task.pointer("/Payload/TargetUri").and_then(Value::as_str).map(normalize);
                if target.is_some() && target == shape.system_reset_target {
                    shape.system_reset_answers_task = true;
                }
            }
        }
        for (_, chassis) in link(&root, "Chassis").map(|c| self.members_of(&c)).unwrap_or_default() {
            let hosts_system = chassis.pointer("/Links/ComputerSystems").and_then(Value::as_array).is_some_and(|l| {
                l.iter()
                    .any(|s| s.get("@odata.id").and_then(Value::as_str).map(normalize) == Some(shape.system.clone()))
            });
            let Some(actions) = chassis.get("Actions") else { continue };
            let oem = actions.get("Oem").and_then(Value::as_object).into_iter().flatten();
            let standard = actions.get("#Chassis.Reset").filter(|_| hosts_system).map(|a| ("#Chassis.Reset", a));
            let oem_resets = oem.filter(|(k, _)| k.contains("Reset")).map(|(k, a)| (k.as_str(), a));
            for (_, a) in standard.into_iter().chain(oem_resets) {
                if let Some(target) = text(a, "target") {
                    shape.ac_cycle_actions.push(ChassisAction {
                        target: normalize(&target),
                        reset_types: self.allowable(a, "ResetType"),
                    });
                }
            }
        }
        shape.sessions = link(&root, "SessionService").and_then(|u| self.doc(&u)).and_then(|ss| link(&ss, "Sessions"));
        Ok(shape)
    }

    /// `(uri, document)` of every member of a collection that the tree holds.
    fn members_of(&self, collection: &str) -> Vec<(String, Value)> {
        let Some(doc) = self.doc(collection) else {
            return Vec::new();
        };
        let links = doc.get("Members").and_then(Value::as_array).cloned().unwrap_or_default();
        links
            .iter()
            .filter_map(|m| m.get("@odata.id").and_then(Value::as_str).map(normalize))
            .filter_map(|uri| Some((uri.clone(), self.doc(&uri)?)))
            .collect()
    }

    /// An action's allowed values for `parameter`: inline, else from its ActionInfo document.
    pub fn allowable(&self, action: &Value, parameter: &str) -> Vec<String> {
        let inline = action.get(format!("{parameter}@Redfish.AllowableValues"));
        if let Some(list) = inline.and_then(Value::as_array) {
            return strings(list);
        }
        let Some(info) = text(action, "@Redfish.ActionInfo").and_then(|u| self.doc(&normalize(&u))) else {
            return Vec::new();
        };
        info.get("Parameters")
            .and_then(Value::as_array)
            .and_then(|ps| ps.iter().find(|p| text(p, "Name").as_deref() == Some(parameter)))
            .and_then(|p| p.get("AllowableValues"))
            .and_then(Value::as_array)
            .map(|l| strings(l))
            .unwrap_or_default()
    }
}

impl Shape {
    fn empty() -> Self {
        Shape {
            vendor: String::new(),
            model: String::new(),
            serial: None,
            systems: None,
            system: String::new(),
            system_reset_target: None,
            system_reset_types: Vec::new(),
            system_reset_answers_task: false,
            boot: (None, None),
            manager: None,
            manager_reset_target: None,
            manager_reset_types: Vec::new(),
            update_service: None,
            firmware_inventory: None,
            multipart_push: None,
            http_push: None,
            simple_update: None,
            tasks: None,
            last_captured_task: 0,
            sessions: None,
            members: Vec::new(),
            ac_cycle_actions: Vec::new(),
        }
    }
}

/// A request or link path as the index keys it: percent-decoded, no query, no trailing slash.
pub fn normalize(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let decoded = percent_decode(path);
    let trimmed = decoded.trim_end_matches('/');
    if trimmed.is_empty() {
        "/".into()
    } else {
        trimmed.to_string()
    }
}

pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Walk `dir`, recording `<path>/index.json` files under their resource path.
fn index(dir: &Path, path: &str, out: &mut HashMap<String, PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() {
            index(&entry.path(), &format!("{path}/{name}"), out)?;
        } else if name == "index.json" {
            out.insert(path.to_string(), entry.path());
        }
    }
    Ok(())
}

/// `doc[key]["@odata.id"]`, normalised.
pub fn link(doc: &Value, key: &str) -> Option<String> {
    doc.get(key)?.get("@odata.id")?.as_str().map(normalize)
}

/// A non-empty string property.
fn text(doc: &Value, key: &str) -> Option<String> {
    doc.get(key)?.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// `Actions[name]`, also under `Actions.Oem`.
pub fn action<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    let actions = doc.get("Actions")?;
    actions.get(name).or_else(|| actions.get("Oem").and_then(|o| o.get(name)))
}

fn strings(list: &[Value]) -> Vec<String> {
    list.iter().filter_map(Value::as_str).map(str::to_string).collect()
}

fn last_segment(uri: &str) -> &str {
    uri.trim_end_matches('/').rsplit('/').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_paths() {
        assert_eq!(normalize("/redfish/v1/"), "/redfish/v1");
        assert_eq!(normalize("/redfish/v1/Systems?$expand=.($levels=1)"), "/redfish/v1/Systems");
        assert_eq!(normalize("/a%20b/%3A"), "/a b/:");
        assert_eq!(normalize("/"), "/");
        assert_eq!(normalize("/bad%2"), "/bad%2");
    }
}
