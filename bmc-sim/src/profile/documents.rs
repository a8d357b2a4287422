//! The documents of a profile BMC as they are now: the captured document with what the
//! simulation changes laid over it (power state and boot override of the System, inventory
//! versions, staged images, tasks, a root without `ExpandQuery`), the accepted PATCHes merged in,
//! and a fresh ETag for a changed document. Shared by the dispatcher (`routes`) and the answer to
//! a System PATCH (`resources::system_patch`). Builds documents only: it answers no request.

use std::hash::{DefaultHasher, Hash, Hasher};

use hostfw_fleet::Profile;
use serde_json::{json, Value};

use crate::fleet::state::{Host, HostData};
use crate::http::json::link;
use crate::tasks::task::TASKS_URI;

/// The changing resources: `Some(doc)` laid over the capture, `Some(None)` gone (a hidden
/// member), `None` = not a changing resource (serve the capture).
pub fn overlay(host: &Host, profile: &Profile, d: &HostData, path: &str) -> Option<Option<Value>> {
    let shape = &profile.shape;
    if path == "/redfish/v1" && !host.spec.expand_query {
        // A BMC without `$expand`: the captured root less its ExpandQuery.
        let mut doc = profile.doc(path)?;
        if let Some(features) = doc.get_mut("ProtocolFeaturesSupported").and_then(Value::as_object_mut) {
            features.remove("ExpandQuery");
        }
        return Some(Some(doc));
    }
    if path == shape.system {
        let mut doc = profile.doc(path)?;
        doc["PowerState"] = json!(d.power.as_str());
        if let Some(boot) = doc.get_mut("Boot").and_then(Value::as_object_mut) {
            boot.insert("BootSourceOverrideTarget".into(), json!(d.boot.target));
            boot.insert("BootSourceOverrideEnabled".into(), json!(d.boot.enabled));
        }
        return Some(Some(doc));
    }
    if shape.firmware_inventory.as_deref() == Some(path) {
        let mut doc = profile.doc(path)?;
        let mut members: Vec<Value> = d.visible_members().map(|m| link(&m.uri)).collect();
        members.extend(d.visible_members().filter(|m| m.staged.is_some()).map(|m| link(&staged_uri(&m.uri))));
        doc["Members@odata.count"] = json!(members.len());
        doc["Members"] = Value::Array(members);
        return Some(Some(doc));
    }
    if let Some(m) = d.members.iter().find(|m| m.uri == path) {
        if !d.visible_members().any(|v| v.uri == path) {
            return Some(None);
        }
        let mut doc = profile.doc(path)?;
        let captured = doc.get("Version").and_then(Value::as_str).map(str::to_string);
        // A placeholder (null) version stays as captured until something is installed.
        if captured.is_some() || !m.version.is_empty() {
            doc["Version"] = json!(m.version);
        }
        return Some(Some(doc));
    }
    if let Some(m) = d.members.iter().find(|m| staged_uri(&m.uri) == path) {
        let staged = m.staged.as_ref()?;
        return Some(Some(json!({
            "@odata.type": "#SoftwareInventory.v1_12_0.SoftwareInventory",
            "@odata.id": path,
            "Id": format!("{}-Staged", m.id),
            "Name": format!("{} (staged)", m.name),
            "Version": staged.version,
            "Updateable": false,
            "Active": false,
            "Staged": true,
            "Status": {"State": "StandbyOffline", "Health": "OK"},
            "Links": { "StagedTargets": [link(&m.uri)] },
        })));
    }
    if shape.tasks.as_deref() == Some(path) {
        let mut doc = profile.doc(path)?;
        let mut members = doc.get("Members").and_then(Value::as_array).cloned().unwrap_or_default();
        members.extend(d.tasks.keys().map(|id| link(&format!("{TASKS_URI}/{id}"))));
        doc["Members@odata.count"] = json!(members.len());
        doc["Members"] = Value::Array(members);
        return Some(Some(doc));
    }
    None
}

/// Lay the accepted PATCHes of `path` over its document.
pub fn with_patches(profile: &Profile, d: &HostData, path: &str, doc: Option<Option<Value>>) -> Option<Option<Value>> {
    let Some(changes) = d.patched.get(path) else {
        return doc;
    };
    let mut base = match doc {
        Some(Some(doc)) => doc,
        Some(None) => return Some(None),
        None => profile.doc(path)?,
    };
    crate::http::json::merge(&mut base, changes);
    Some(Some(base))
}

/// The document a GET of `path` would answer now, if any.
pub fn current(host: &Host, profile: &Profile, path: &str) -> Option<Value> {
    current_in(host, profile, &host.data(), path)
}

/// [`current`] with the state already locked.
pub fn current_in(host: &Host, profile: &Profile, d: &HostData, path: &str) -> Option<Value> {
    match with_patches(profile, d, path, overlay(host, profile, d, path)) {
        Some(doc) => doc.map(|doc| with_fresh_etag(profile, path, doc)),
        None => profile.doc(path),
    }
}

/// A changed document's ETag is one of its content; an unchanged one keeps the captured ETag.
pub fn with_fresh_etag(profile: &Profile, path: &str, mut doc: Value) -> Value {
    if Some(&doc) == profile.doc(path).as_ref() || doc.get("@odata.etag").is_none() {
        return doc;
    }
    if let Some(o) = doc.as_object_mut() {
        o.remove("@odata.etag");
    }
    let mut h = DefaultHasher::new();
    doc.to_string().hash(&mut h);
    doc["@odata.etag"] = json!(format!("\"{:016x}\"", h.finish()));
    doc
}

pub fn etag_of(doc: &Value) -> Option<String> {
    doc.get("@odata.etag").and_then(Value::as_str).map(str::to_string)
}

/// Where the entry of an image staged for the member at `uri` is served.
pub fn staged_uri(uri: &str) -> String {
    format!("{uri}-Staged")
}

/// The last segment of `path` when it is a direct child of `parent`.
pub fn child_of(path: &str, parent: Option<&str>) -> Option<String> {
    let rest = path.strip_prefix(parent?)?.strip_prefix('/')?;
    (!rest.is_empty() && !rest.contains('/')).then(|| rest.to_string())
}

/// The System document of a profile host as it is now (for answers to PATCH).
pub fn system_doc(host: &Host, d: &HostData) -> Option<Value> {
    let profile = host.profile.as_ref()?;
    let path = &profile.shape.system;
    with_patches(profile, d, path, overlay(host, profile, d, path))
        .flatten()
        .map(|doc| with_fresh_etag(profile, path, doc))
}
