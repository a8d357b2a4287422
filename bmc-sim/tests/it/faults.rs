//! Fault injection: failing tasks, versions that never change, HTTP errors, slow answers, an
//! unreachable BMC, hidden inventory members; set through `RunningFleet::set_fault`, through
//! `PUT /sim/faults`, and from the fleet file; counters going down as they are consumed.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use hostfw_bmc_sim::{firmware_image, ApplyTime, Fault, FleetSpec, HttpErrors, SimError};
use reqwest::StatusCode;
use serde_json::json;

const INVENTORY: &str = "/redfish/v1/UpdateService/FirmwareInventory";

#[tokio::test]
async fn fail_next_tasks_fail_then_recover() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let two = Fault { fail_next_tasks: 2, ..Fault::default() };
    fleet.set_fault("host-001", two).unwrap();
    for left in [1, 0] {
        let r = c.push_multipart(firmware_image("BIOS", "2.2.0", 10), json!({})).await;
        assert_eq!(fleet.fault("host-001").unwrap().fail_next_tasks, left);
        let task = c.wait_task(&r).await;
        assert_eq!(task["TaskState"], "Exception", "{task}");
        assert_eq!(task["TaskStatus"], "Critical");
        assert!(message_ids(&task).contains(&"Update.1.0.ApplyFailed".to_string()));
        assert!(messages_text(&task).contains("injected failure"), "{task}");
        assert_eq!(c.version_of(BIOS_MEMBER).await, "2.1.0");
    }
    let r = c.push_multipart(firmware_image("BIOS", "2.2.0", 10), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.2.0");
    let stats = fleet.stats();
    assert_eq!(stats.per_host["host-001"].uploads, 3);
    assert_eq!(stats.per_host["host-001"].installs[BIOS_MEMBER], 1);
    assert!(fleet.fault("host-001").unwrap().is_empty());
    fleet.shutdown().await;
}

#[tokio::test]
async fn version_never_changes_completes_but_changes_nothing() {
    let mut h = host("host-001");
    h.apply_time = ApplyTime::OnReset;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let stuck = Fault { version_never_changes: true, ..Fault::default() };
    fleet.set_fault("host-001", stuck.clone()).unwrap();
    let r = c
        .push_multipart(firmware_image("BIOS", "2.2.0", 10), json!({"@Redfish.OperationApplyTime": "Immediate"}))
        .await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    let r = c.push_multipart(firmware_image("iDRAC", "7.1", 10), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Completed");
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.1.0");
    assert!(fleet.staged_versions("host-001").is_empty(), "nothing staged either");
    assert!(fleet.stats().per_host["host-001"].installs.is_empty());
    assert_eq!(fleet.fault("host-001"), Some(stuck), "not a counter: it stays");

    fleet.set_fault("host-001", Fault::default()).unwrap();
    let r = c
        .push_multipart(firmware_image("BIOS", "2.2.0", 10), json!({"@Redfish.OperationApplyTime": "Immediate"}))
        .await;
    c.wait_task(&r).await;
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.2.0");
    fleet.shutdown().await;
}

#[tokio::test]
async fn http_errors_answer_then_stop() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let errors = Fault { http_errors: Some(HttpErrors { count: 2, status: 500 }), ..Fault::default() };
    fleet.set_fault("host-001", errors).unwrap();
    let anon = Client::anonymous(&fleet.hosts()[0]);
    assert_eq!(anon.get("/sim/state").await.status, StatusCode::OK, "/sim is never faulted and consumes nothing");
    let r = anon.get("/redfish/v1").await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.raw);
    assert!(r.message_id().ends_with("InternalError"), "{}", r.raw);
    assert_eq!(fleet.fault("host-001").unwrap().http_errors.unwrap().count, 1);
    let r =
        c.push_multipart_to("/redfish/v1/UpdateService/upload", firmware_image("BIOS", "2.2.0", 1000), json!({})).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "uploads too");
    assert_eq!(fleet.fault("host-001").unwrap().http_errors, None);
    assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK);
    assert_eq!(fleet.stats().uploads_started, 0);

    let busy = Fault { http_errors: Some(HttpErrors { count: 1, status: 503 }), ..Fault::default() };
    fleet.set_fault("host-001", busy).unwrap();
    let r = c.get(SYSTEM).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.header("Retry-After"), Some("1"));
    assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK);
    fleet.shutdown().await;
}

#[tokio::test]
async fn slow_responses_are_held_back_except_on_sim() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let slow = Fault { slow_response_secs: 1.0, ..Fault::default() };
    fleet.set_fault("host-001", slow).unwrap();
    let started = Instant::now();
    assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(950), "{:?}", started.elapsed());
    let started = Instant::now();
    assert_eq!(c.get("/sim/faults").await.status, StatusCode::OK);
    assert!(started.elapsed() < Duration::from_millis(900), "{:?}", started.elapsed());
    fleet.shutdown().await;
}

#[tokio::test]
async fn unreachable_drops_connections_and_comes_back_with_sessions() {
    let fleet = start_fleet(vec![host("host-001"), host("host-002")]).await;
    let mut c = Client::new(&fleet.host("host-001").unwrap());
    assert_eq!(c.login().await.status, StatusCode::CREATED);
    assert!(c.reachable().await);
    let outage = Fault { unreachable_for_secs: 1.0, ..Fault::default() };
    fleet.set_fault("host-001", outage).unwrap();
    eventually("BMC unreachable", || async { (!c.reachable().await).then_some(()) }).await;
    let other = Client::new(&fleet.host("host-002").unwrap());
    assert_eq!(other.get(SYSTEM).await.status, StatusCode::OK, "only host-001 is gone");
    eventually("BMC back", || async { c.reachable().await.then_some(()) }).await;
    assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK, "a network outage is not a reboot: the session survives");
    eventually("outage consumed", || async { fleet.fault("host-001").filter(|f| f.unreachable_for_secs == 0.0) }).await;
    assert_eq!(fleet.stats().resets_manager, 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn clearing_faults_ends_an_outage_early() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let long = Fault { unreachable_for_secs: 3600.0, ..Fault::default() };
    fleet.set_fault("host-001", long).unwrap();
    eventually("BMC unreachable", || async { (!c.reachable().await).then_some(()) }).await;
    fleet.set_fault("host-001", Fault::default()).unwrap();
    eventually("BMC back", || async { c.reachable().await.then_some(()) }).await;
    assert_eq!(c.get(SYSTEM).await.status, StatusCode::OK);
    fleet.shutdown().await;
}

#[tokio::test]
async fn hide_members_hides_inventory_entries() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let hidden = Fault { hide_members: vec![BIOS_MEMBER.to_string()], ..Fault::default() };
    fleet.set_fault("host-001", hidden).unwrap();
    let coll = c.resource(INVENTORY).await;
    assert_eq!(coll["Members@odata.count"], 1);
    assert!(!coll.to_string().contains(BIOS_MEMBER), "{coll}");
    let r = c.get(&format!("{INVENTORY}/{BIOS_MEMBER}")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(fleet.versions("host-001").len(), 2, "still there underneath");

    fleet.set_fault("host-001", Fault::default()).unwrap();
    assert_eq!(c.resource(INVENTORY).await["Members@odata.count"], 2);
    assert_eq!(c.version_of(BIOS_MEMBER).await, "2.1.0");
    fleet.shutdown().await;
}

#[tokio::test]
async fn faults_over_http() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let anon = Client::anonymous(&fleet.hosts()[0]);
    let r = anon.get("/sim/faults").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["fail_next_tasks"], 0);
    assert_eq!(r.body["hide_members"], json!([]));

    let body = json!({"fail_next_tasks": 1, "http_errors": {"count": 1, "status": 502}});
    let r = anon.put("/sim/faults", body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.raw);
    assert_eq!(r.body["fail_next_tasks"], 1);
    let f = fleet.fault("host-001").unwrap();
    assert_eq!(f.fail_next_tasks, 1);
    assert_eq!(f.http_errors, Some(HttpErrors { count: 1, status: 502 }));
    assert_eq!(anon.get("/redfish/v1").await.status, StatusCode::BAD_GATEWAY);
    assert_eq!(anon.get("/sim/faults").await.body["http_errors"], serde_json::Value::Null, "used up");

    for bad in [
        json!({"fail_next_task": 1}),
        json!({"hide_members": ["NOPE"]}),
        json!({"http_errors": {"count": 1, "status": 200}}),
        json!({"slow_response_secs": -1}),
        json!([1]),
    ] {
        let r = anon.put("/sim/faults", bad.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.raw);
    }
    assert_eq!(fleet.fault("host-001").unwrap().fail_next_tasks, 1, "unchanged");

    // An outage requested over HTTP still answers first.
    let r = anon.put("/sim/faults", json!({"unreachable_for_secs": 0.5})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.raw);
    wait_down_and_up(&anon).await;
    assert!(fleet.fault("host-001").unwrap().is_empty());
    fleet.shutdown().await;
}

#[tokio::test]
async fn faults_from_the_fleet_file() {
    let toml = format!(
        r#"
[defaults]
task_seconds = 0.3
firmware = [ {{ id = "{BMC_MEMBER}", version = "7.0" }}, {{ id = "{BIOS_MEMBER}", version = "2.1.0" }} ]
[defaults.faults]
fail_next_tasks = 1

[[host]]
id = "host-001"
vendor = "Dell"
model = "R760"
bmc_address = "127.0.0.1:0"

[[host]]
id = "host-002"
vendor = "Dell"
model = "R760"
bmc_address = "127.0.0.1:0"
faults = {{ unreachable_for_secs = 0.5 }}

[[host]]
id = "host-003"
vendor = "Dell"
model = "R760"
bmc_address = "127.0.0.1:0"
[host.faults]
hide_members = ["{BIOS_MEMBER}"]
"#
    );
    let spec = FleetSpec::from_toml_str(&toml).expect("fleet file");
    let fleet = hostfw_bmc_sim::start(spec).await.unwrap();
    assert_eq!(fleet.fault("host-001").unwrap().fail_next_tasks, 1);
    assert_eq!(fleet.fault("host-003").unwrap().fail_next_tasks, 0);
    let c = Client::new(&fleet.host("host-001").unwrap());
    let r = c.push_multipart(firmware_image("BIOS", "2.2.0", 10), json!({})).await;
    assert_eq!(c.wait_task(&r).await["TaskState"], "Exception");

    let c2 = Client::new(&fleet.host("host-002").unwrap());
    eventually("host-002's start-up outage over", || async { fleet.fault("host-002").filter(Fault::is_empty) }).await;
    eventually("host-002 back", || async { c2.reachable().await.then_some(()) }).await;

    let c3 = Client::new(&fleet.host("host-003").unwrap());
    assert_eq!(c3.resource(INVENTORY).await["Members@odata.count"], 1);
    fleet.shutdown().await;
}

#[tokio::test]
async fn set_fault_rejects_unknown_hosts_and_bad_values() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let e = fleet.set_fault("nope", Fault::default()).unwrap_err();
    assert!(matches!(e, SimError::UnknownHost { .. }), "{e:?}");
    assert!(e.to_string().contains("nope"), "{e}");
    let bad = Fault { hide_members: vec!["CPLD".into()], ..Fault::default() };
    let e = fleet.set_fault("host-001", bad).unwrap_err();
    assert!(e.to_string().contains("host-001") && e.to_string().contains("hide_members[0]"), "{e}");
    assert_eq!(fleet.fault("nope"), None);
    assert!(fleet.fault("host-001").unwrap().is_empty());
    fleet.shutdown().await;
}

#[tokio::test]
async fn malformed_json_answers_gets_then_stops() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    fleet.set_fault("host-001", Fault { malformed_json_next: 2, ..Fault::default() }).unwrap();
    for _ in 0..2 {
        let r = c.get(SYSTEM).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(serde_json::from_str::<serde_json::Value>(&r.raw).is_err(), "not JSON: {}", r.raw);
    }
    assert_eq!(fleet.fault("host-001").unwrap().malformed_json_next, 0);
    let r = c.get(SYSTEM).await;
    assert!(serde_json::from_str::<serde_json::Value>(&r.raw).is_ok(), "JSON again: {}", r.raw);
    fleet.shutdown().await;
}

#[tokio::test]
async fn failing_actions_answer_500_every_time_and_change_nothing() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let fault = Fault { failing_actions: vec!["Chassis.Reset".into()], ..Fault::default() };
    fleet.set_fault("host-001", fault).unwrap();
    for _ in 0..2 {
        let r = c.post(CHASSIS_RESET, json!({"ResetType": "PowerCycle"})).await;
        assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.raw);
        assert!(r.message_id().ends_with("InternalError"), "{}", r.raw);
    }
    assert_eq!(c.get("/redfish/v1/Chassis/1").await.status, StatusCode::OK, "reading the resource is not faulted");
    let r = c.post(SYSTEM_RESET, json!({"ResetType": "ForceOff"})).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "other actions are carried out");
    let stats = &fleet.stats().per_host["host-001"];
    assert_eq!((stats.ac_cycles, stats.system_resets), (0, 1));
    fleet.shutdown().await;
}
