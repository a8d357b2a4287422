//! The DSP0266 protocol rules every BMC follows (`protocol`, `odata`, the profile's read-only
//! root, array PATCH and captured pages), checked directly, so they hold even where DMTF's
//! validators are not installed (`protocol_conformance.rs` runs those). The profile cases are
//! skipped when `../shared` is absent.

use crate::common;

use common::*;
use hostfw_bmc_sim::HostSpec;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test]
async fn odata_documents_are_open_and_headers_follow_the_specification() {
    let fleet = start_fleet(vec![host("h1")]).await;
    let h = &fleet.hosts()[0];
    let (c, anonymous) = (Client::new(h), Client::anonymous(h));

    let odata = anonymous.get("/redfish/v1/odata").await;
    assert_eq!(odata.status, StatusCode::OK, "{}", odata.raw);
    assert_eq!(odata.body["@odata.context"], "/redfish/v1/$metadata");
    let urls: Vec<&str> = odata.body["value"].as_array().unwrap().iter().filter_map(|v| v["url"].as_str()).collect();
    assert!(urls.contains(&"/redfish/v1/Systems"), "{urls:?}");
    let metadata = anonymous.get("/redfish/v1/$metadata").await;
    assert_eq!(metadata.status, StatusCode::OK);
    assert_eq!(metadata.header("content-type"), Some("application/xml"));
    assert!(metadata.raw.contains("<EntityContainer Name=\"Service\""));

    let sys = c.get(SYSTEM).await;
    assert_eq!(
        sys.header("link"),
        Some("<https://redfish.dmtf.org/schemas/v1/ComputerSystem.v1_20_0.json>; rel=describedby")
    );
    let head = c.send(c.request(Method::HEAD, "/redfish/v1/")).await;
    assert_eq!(head.status, StatusCode::OK);
    assert!(head.raw.is_empty(), "HEAD has no body");
    assert_eq!(head.header("allow"), Some("GET, HEAD"));
    assert!(head.header("link").is_some_and(|l| l.contains("ServiceRoot.v1_15_0")));

    let odata_41 = c.request(Method::GET, SYSTEM).header("OData-Version", "4.1");
    assert_eq!(c.send(odata_41).await.status, StatusCode::PRECONDITION_FAILED);
    let odata_40 = c.request(Method::GET, SYSTEM).header("OData-Version", "4.0");
    assert_eq!(c.send(odata_40).await.status, StatusCode::OK);
    assert_eq!(c.get("/redfish/v1/?$bogus").await.status, StatusCode::NOT_IMPLEMENTED);
    assert_eq!(c.get("/redfish/v1/?only=x").await.status, StatusCode::BAD_REQUEST);
    assert_eq!(c.get("/redfish/v1/Systems?$skip=0").await.status, StatusCode::OK);

    let body = json!({"UserName": h.username, "Password": h.password.expose()});
    let members = "/redfish/v1/SessionService/Sessions/Members";
    let login = anonymous.send(anonymous.request(Method::POST, members).json(&body)).await;
    assert_eq!(login.status, StatusCode::CREATED, "{}", login.raw);
    assert!(login.header("x-auth-token").is_some());
    fleet.shutdown().await;
}

#[tokio::test]
async fn a_profile_serves_captured_pages_a_read_only_root_and_dsp0266_array_patches() {
    let Some(dir) = tree("dell") else { return };
    let spec = HostSpec::from_profile("r750", "127.0.0.1:0".parse().unwrap(), &dir).unwrap();
    let fleet = start_fleet(vec![spec]).await;
    let c = Client::new(&fleet.hosts()[0]);

    // The second page of a collection is the captured second page, not the first again.
    let sensors = "/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellSensors";
    let first = c.resource(sensors).await;
    let next = first["Members@odata.nextLink"].as_str().unwrap().to_string();
    let second = c.resource(&next).await;
    assert_ne!(first["Members"], second["Members"]);
    assert_eq!(
        first["Members"].as_array().unwrap().len() + second["Members"].as_array().unwrap().len(),
        first["Members@odata.count"].as_u64().unwrap() as usize
    );

    let root = c.patch("/redfish/v1", json!({})).await;
    assert_eq!(root.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(root.header("allow"), Some("GET, HEAD"));
    let metadata = Client::anonymous(&fleet.hosts()[0]).get("/redfish/v1/$metadata").await;
    assert_eq!(metadata.status, StatusCode::OK);
    assert!(metadata.raw.contains("Dell"), "the captured CSDL");

    let ntp = "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol";
    let servers = |v: Value| v["NTP"]["NTPServers"].clone();
    let set = |list: Value| json!({"NTP": {"NTPServers": list}});
    assert!(c.patch(ntp, set(json!(["a", "b", "c"]))).await.status.is_success());
    assert!(c.patch(ntp, set(json!([{}, "d"]))).await.status.is_success());
    assert_eq!(servers(c.resource(ntp).await), json!(["a", "d"]), "{{}} keeps, shorter truncates");
    assert!(c.patch(ntp, set(json!([null, {}]))).await.status.is_success());
    assert_eq!(servers(c.resource(ntp).await), json!(["d"]), "null removes");

    let role = "/redfish/v1/AccountService/Roles/ReadOnly";
    let r = c.patch(role, json!({"AssignedPrivileges": ["Login", "ConfigureUsers"]})).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "a predefined role is fixed");
    fleet.shutdown().await;
}
