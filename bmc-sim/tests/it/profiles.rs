//! Profiles: a BMC serving a Redfish tree captured from real hardware
//! (`../shared/redfish/vendor-mockups/<name>`). Captured documents come back as captured; the
//! simulated parts (uploads at the tree's own URI, tasks, resets limited to the tree's allowable
//! values, versions that change) follow the tree's shape. Skipped when `../shared` is absent.

use crate::common;

use common::*;
use hostfw_bmc_sim::{firmware_image, FleetSpec, HostSpec, Profile, TaskStyle};
use reqwest::StatusCode;
use serde_json::{json, Value};

fn captured(dir: &std::path::Path, path: &str) -> Value {
    let file = dir.join(path.trim_start_matches('/')).join("index.json");
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

async fn start(id: &str, dir: &std::path::Path) -> (hostfw_bmc_sim::RunningFleet, Client) {
    let spec = HostSpec::from_profile(id, "127.0.0.1:0".parse().unwrap(), dir).unwrap();
    let fleet = start_fleet(vec![spec]).await;
    let c = Client::new(&fleet.hosts()[0]);
    (fleet, c)
}

#[tokio::test]
async fn each_captured_tree_is_served_as_captured() {
    for name in ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"] {
        let Some(dir) = tree(name) else { return };
        let (fleet, c) = start(name, &dir).await;
        let root = c.get("/redfish/v1").await;
        assert_eq!(root.status, StatusCode::OK, "{name}");
        assert_eq!(root.body, captured(&dir, "/redfish/v1"), "{name}: root as captured");
        assert_eq!(root.body["Tasks"]["@odata.id"], "/redfish/v1/TaskService", "{name}");
        // A static resource of the tree, unchanged, with its ETag when it has one.
        let us = c.get("/redfish/v1/UpdateService/").await;
        let want = captured(&dir, "/redfish/v1/UpdateService");
        assert_eq!(us.body, want, "{name}: UpdateService as captured");
        if let Some(etag) = want.get("@odata.etag").and_then(Value::as_str) {
            assert_eq!(us.header("etag"), Some(etag), "{name}");
        }
        // Every inventory member the tree lists is served with its captured version.
        let profile = Profile::load(&dir).unwrap();
        assert!(!profile.shape.members.is_empty(), "{name}");
        for m in &profile.shape.members {
            let got = c.get(&m.uri).await;
            assert_eq!(got.status, StatusCode::OK, "{name} {}", m.uri);
            assert_eq!(got.body, captured(&dir, &m.uri), "{name} {}", m.uri);
        }
        fleet.shutdown().await;
    }
}

#[tokio::test]
async fn identity_and_reset_target_come_from_the_systems_that_have_them() {
    let Some(dir) = tree("nvidia_gb200") else {
        return;
    };
    let p = Profile::load(&dir).unwrap();
    // System_0 is listed first but has no Manufacturer/Model; HGX_Baseboard_0 has no Reset.
    assert_eq!((p.shape.vendor.as_str(), p.shape.model.as_str()), ("NVIDIA", "GB200 NVL"));
    assert_eq!(p.shape.system, "/redfish/v1/Systems/System_0");
    assert!(p.shape.system_reset_types.contains(&"ForceRestart".to_string()), "{:?}", p.shape.system_reset_types);
    assert_eq!(p.shape.multipart_push.as_deref(), Some("/redfish/v1/UpdateService/update-multipart"));
    let Some(dell) = tree("dell") else { return };
    let d = Profile::load(&dell).unwrap();
    assert_eq!((d.shape.vendor.as_str(), d.shape.model.as_str()), ("Dell Inc.", "PowerEdge R750"));
    assert_eq!(d.shape.manager_reset_types, vec!["GracefulRestart".to_string()]);
}

#[tokio::test]
async fn resets_are_limited_to_the_trees_allowable_values() {
    let Some(dir) = tree("dell") else { return };
    let (fleet, c) = start("r750", &dir).await;
    let target = "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Manager.Reset";
    let refused = c.post(target, json!({"ResetType": "ForceRestart"})).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.message_id().ends_with("ActionParameterValueNotInList"), "{}", refused.message_id());
    let accepted = c.post(target, json!({"ResetType": "GracefulRestart"})).await;
    assert!(accepted.status.is_success(), "{:?}", accepted.status);
    assert_eq!(fleet.stats().resets_manager, 1);
    wait_down_and_up(&c).await;
    // The system reset is at the captured System's target; its PowerState changes.
    let sys = "/redfish/v1/Systems/System.Embedded.1";
    let off = c.post(&format!("{sys}/Actions/ComputerSystem.Reset"), json!({"ResetType": "ForceOff"})).await;
    assert!(off.status.is_success());
    eventually("power off", || async { (c.resource(sys).await["PowerState"] == "Off").then_some(()) }).await;
    // Through ActionInfo (GB200): a value outside it is refused.
    let Some(gb) = tree("nvidia_gb200") else {
        return;
    };
    let (fleet2, c2) = start("gb200", &gb).await;
    let r = c2
        .post("/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset", json!({"ResetType": "PushPowerButton"}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "PushPowerButton is not in System_0 ResetActionInfo");
    fleet.shutdown().await;
    fleet2.shutdown().await;
}

#[tokio::test]
async fn an_upload_at_the_trees_own_uri_changes_the_member_version() {
    let Some(dir) = tree("supermicro") else {
        return;
    };
    let mut spec = HostSpec::from_profile("smc", "127.0.0.1:0".parse().unwrap(), &dir).unwrap();
    spec.task_style = TaskStyle::Spec;
    spec.task_seconds = 0.2;
    let fleet = start_fleet(vec![spec]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let before = c.version_of("BMC").await;
    let image = firmware_image("^BMC$", "01.05.99", 4096);
    // The generic shape's upload URI does not exist on this tree... but the tree's own does.
    let accepted = c
        .push_multipart_to(
            "/redfish/v1/UpdateService/upload",
            image,
            json!({"Targets": ["/redfish/v1/UpdateService/FirmwareInventory/BMC"]}),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{:?}", accepted.body);
    let task = c.wait_task(&accepted).await;
    assert_eq!(task["TaskState"], "Completed", "{task}");
    assert_ne!(before, "01.05.99");
    assert_eq!(c.version_of("BMC").await, "01.05.99");
    // The member keeps its captured shape around the new version; its ETag changed.
    let member = c.get("/redfish/v1/UpdateService/FirmwareInventory/BMC").await;
    let mut want = captured(&dir, "/redfish/v1/UpdateService/FirmwareInventory/BMC");
    want["Version"] = json!("01.05.99");
    let (mut got, old_etag) = (member.body.clone(), want["@odata.etag"].clone());
    if let (Some(g), Some(w)) = (got.as_object_mut(), want.as_object_mut()) {
        g.remove("@odata.etag");
        w.remove("@odata.etag");
    }
    assert_eq!(got, want);
    if !old_etag.is_null() {
        assert_ne!(member.body["@odata.etag"], old_etag);
    }
    // The task shows in the tree's Task collection.
    let tasks = c.get("/redfish/v1/TaskService/Tasks").await;
    assert!(tasks.body["Members"].as_array().unwrap().iter().any(|m| m["@odata.id"] == task["@odata.id"]));
    fleet.shutdown().await;
}

/// The simulator's `/sim/` API works on a profile host as on the generic shape: the in-band
/// flash a Scout script calls changes a member of the tree, and `/sim/state` shows it.
#[tokio::test]
async fn the_sim_api_and_the_in_band_flash_work_on_a_captured_tree() {
    let Some(dir) = tree("nvidia_viking") else {
        return;
    };
    let (fleet, c) = start("dgx", &dir).await;
    assert_eq!(c.version_of("CPLDMB_0").await, "0.2.1.8");
    let image = firmware_image("^CPLDMB_0$", "0.2.1.9", 64);
    let flashed = c.send(c.request(reqwest::Method::POST, "/sim/host-flash").body(image)).await;
    assert_eq!(flashed.status, StatusCode::OK, "{}", flashed.raw);
    assert_eq!(flashed.body["flashed"], json!(["CPLDMB_0"]));
    assert_eq!(c.version_of("CPLDMB_0").await, "0.2.1.9");
    let state = c.resource("/sim/state").await;
    assert!(state.to_string().contains("0.2.1.9"), "{state}");
    let faults = c.get("/sim/faults").await;
    assert_eq!(faults.status, StatusCode::OK, "{}", faults.raw);
    fleet.shutdown().await;
}

#[tokio::test]
async fn a_fleet_file_profile_is_relative_to_the_file_and_overrides_versions() {
    let Some(dir) = tree("nvidia_viking") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let rel = pathdiff(&dir, tmp.path());
    let text = format!(
        "[[host]]\nid = \"dgx-01\"\nbmc_address = \"127.0.0.1:0\"\nprofile = {rel:?}\n\
         firmware = [ {{ id = \"HostBMC_0\", version = \"0.1\" }} ]\n"
    );
    let file = tmp.path().join("fleet.toml");
    std::fs::write(&file, &text).unwrap();
    let spec = FleetSpec::load(&file).unwrap();
    let h = &spec.hosts[0];
    assert_eq!((h.vendor.as_str(), h.model.as_str()), ("NVIDIA", "DGXH100"));
    assert_eq!(h.firmware.iter().find(|f| f.id == "HostBMC_0").unwrap().version, "0.1");
    // A member the tree does not have is refused, naming it.
    std::fs::write(&file, text.replace("HostBMC_0", "NoSuchMember")).unwrap();
    let err = FleetSpec::load(&file).unwrap_err().to_string();
    assert!(err.contains("NoSuchMember") && err.contains("firmware[0].id"), "{err}");
    // A folder that is not a tree is refused, naming it.
    std::fs::write(&file, "[[host]]\nid = \"x\"\nbmc_address = \"127.0.0.1:0\"\nprofile = \".\"\n").unwrap();
    let err = FleetSpec::load(&file).unwrap_err().to_string();
    assert!(err.contains("not a Redfish tree"), "{err}");
}

/// `to` relative to `from` (both absolute), e.g. `../../x`.
fn pathdiff(to: &std::path::Path, from: &std::path::Path) -> String {
    let to = to.canonicalize().unwrap();
    let from = from.canonicalize().unwrap();
    let common = to.components().zip(from.components()).take_while(|(a, b)| a == b).count();
    let ups = from.components().count() - common;
    let mut out: Vec<String> = std::iter::repeat_n("..".to_string(), ups).collect();
    out.extend(to.components().skip(common).map(|c| c.as_os_str().to_string_lossy().into_owned()));
    out.join("/")
}

#[tokio::test]
async fn vendor_attributes_are_patched_where_the_tree_has_them() {
    let Some(dir) = tree("dell") else { return };
    let (fleet, c) = start("r750-attrs", &dir).await;
    let attrs = "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes";
    assert_eq!(c.resource(attrs).await["Attributes"]["Lockdown.1.SystemLockdown"], "Disabled");
    let r = c.patch(attrs, json!({"Attributes": {"Lockdown.1.SystemLockdown": "Enabled"}})).await;
    assert!(r.status.is_success(), "{:?} {}", r.status, r.body);
    assert_eq!(c.resource(attrs).await["Attributes"]["Lockdown.1.SystemLockdown"], "Enabled");
    // A property the resource does not have, or of another type, is refused and changes nothing.
    let r = c.patch(attrs, json!({"Attributes": {"NoSuch.1.Thing": "x"}})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.message_id().ends_with("PropertyUnknown"), "{}", r.message_id());
    let r = c.patch(attrs, json!({"Attributes": {"Lockdown.1.SystemLockdown": 1}})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    // The generic shape's Oem.Hostfw does not exist on a real tree.
    let r = c.patch("/redfish/v1/Systems/System.Embedded.1", json!({"Oem": {"Hostfw": {"Lockdown": "Enabled"}}})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    fleet.shutdown().await;
}

#[tokio::test]
async fn etags_guard_patches_and_settings_objects_apply_at_the_next_power_on() {
    let Some(dir) = tree("supermicro") else {
        return;
    };
    let (fleet, c) = start("smc-attrs", &dir).await;
    let lock = "/redfish/v1/Managers/1/Oem/Supermicro/SysLockdown";
    let before = c.get(lock).await;
    let etag = before.header("etag").expect("captured ETag").to_string();
    let stale = c
        .send(
            c.request(reqwest::Method::PATCH, lock)
                .header("If-Match", "\"not-it\"")
                .json(&json!({"SysLockdownEnabled": true})),
        )
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let ok = c
        .send(
            c.request(reqwest::Method::PATCH, lock)
                .header("If-Match", etag.as_str())
                .json(&json!({"SysLockdownEnabled": true})),
        )
        .await;
    assert!(ok.status.is_success(), "{:?}", ok.status);
    let after = c.get(lock).await;
    assert_eq!(after.body["SysLockdownEnabled"], true);
    assert_ne!(after.header("etag"), Some(etag.as_str()), "the ETag follows the content");
    // The old ETag no longer matches.
    let again = c
        .send(
            c.request(reqwest::Method::PATCH, lock)
                .header("If-Match", etag.as_str())
                .json(&json!({"SysLockdownEnabled": false})),
        )
        .await;
    assert_eq!(again.status, StatusCode::PRECONDITION_FAILED);
    fleet.shutdown().await;

    // DGX BIOS attributes: PATCHed through the settings object, running after a power-on.
    let Some(dgx) = tree("nvidia_viking") else {
        return;
    };
    let (fleet, c) = start("dgx-attrs", &dgx).await;
    let (bios, sd) = ("/redfish/v1/Systems/DGX/Bios", "/redfish/v1/Systems/DGX/Bios/SD");
    let r = c.patch(sd, json!({"Attributes": {"KcsInterfaceDisable": "Deny All"}})).await;
    assert!(r.status.is_success(), "{:?} {}", r.status, r.body);
    assert_eq!(c.resource(sd).await["Attributes"]["KcsInterfaceDisable"], "Deny All", "pending");
    assert_eq!(c.resource(bios).await["Attributes"]["KcsInterfaceDisable"], "Allow All", "not yet running");
    let r = c.post("/redfish/v1/Systems/DGX/Actions/ComputerSystem.Reset", json!({"ResetType": "ForceRestart"})).await;
    assert!(r.status.is_success());
    eventually("BIOS setting applied", || async {
        (c.resource(bios).await["Attributes"]["KcsInterfaceDisable"] == "Deny All").then_some(())
    })
    .await;
    fleet.shutdown().await;
}
