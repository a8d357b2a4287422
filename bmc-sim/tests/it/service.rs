//! The read side of a 2-host fleet: version document, ServiceRoot, Systems, Managers,
//! UpdateService per upload style, FirmwareInventory, Redfish error bodies, `/sim/state`.

use crate::common;

use common::*;
use hostfw_bmc_sim::UploadStyle;
use reqwest::StatusCode;

#[tokio::test]
async fn two_hosts_have_their_own_listeners_and_identity() {
    let mut b = host("host-002");
    b.vendor = "Supermicro".into();
    b.model = "SYS-621C".into();
    let fleet = start_fleet(vec![host("host-001"), b]).await;
    let hosts = fleet.hosts();
    assert_eq!(hosts.len(), 2);
    assert_ne!(hosts[0].addr, hosts[1].addr);
    assert_eq!(hosts[0].base_url, format!("http://{}", hosts[0].addr));
    assert_eq!(fleet.host("host-002").unwrap().vendor, "Supermicro");
    assert!(fleet.host("nope").is_none());

    for h in &hosts {
        let c = Client::new(h);
        let sys = c.resource("/redfish/v1/Systems/System.Embedded.1").await;
        assert_eq!(sys["Manufacturer"], h.vendor.as_str());
        assert_eq!(sys["Model"], h.model.as_str());
        assert_eq!(sys["SerialNumber"], format!("SN-{}", h.id).as_str());
    }
    assert_eq!(
        fleet.versions("host-001"),
        vec![(BMC_MEMBER.to_string(), "7.00.00.00".to_string()), (BIOS_MEMBER.to_string(), "2.1.0".to_string())]
    );
    assert!(fleet.versions("nope").is_empty());
    fleet.shutdown().await;
}

#[tokio::test]
async fn service_root_is_open_and_links_everything() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let anon = Client::anonymous(&fleet.hosts()[0]);
    let v = anon.get("/redfish").await;
    assert_eq!(v.status, StatusCode::OK);
    assert_eq!(v.body["v1"], "/redfish/v1/");
    assert_eq!(v.header("OData-Version"), Some("4.0"));
    for path in ["/redfish/v1", "/redfish/v1/"] {
        let root = anon.get(path).await;
        assert_eq!(root.status, StatusCode::OK, "{path}");
        for key in ["Systems", "Managers", "UpdateService", "Tasks", "SessionService"] {
            assert!(root.body[key]["@odata.id"].is_string(), "{key} in {}", root.raw);
        }
        // The TaskService is linked as `Tasks`, as on every real BMC; no root has `TaskService`.
        assert_eq!(root.body["Tasks"]["@odata.id"], "/redfish/v1/TaskService");
        assert!(root.body.get("TaskService").is_none(), "{}", root.raw);
        assert_eq!(root.body["Links"]["Sessions"]["@odata.id"], "/redfish/v1/SessionService/Sessions");
    }
    fleet.shutdown().await;
}

#[tokio::test]
async fn systems_managers_and_inventory() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let systems = c.resource("/redfish/v1/Systems/").await;
    assert_eq!(systems["Members"][0]["@odata.id"], "/redfish/v1/Systems/System.Embedded.1");
    let sys = c.resource("/redfish/v1/Systems/System.Embedded.1").await;
    assert_eq!(sys["PowerState"], "On");
    assert_eq!(sys["BiosVersion"], "2.1.0");
    let reset = &sys["Actions"]["#ComputerSystem.Reset"];
    assert_eq!(reset["target"], "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset");
    assert_eq!(
        reset["ResetType@Redfish.AllowableValues"],
        serde_json::json!(["On", "ForceOff", "ForceRestart", "GracefulRestart", "PowerCycle"])
    );

    let managers = c.resource("/redfish/v1/Managers").await;
    assert_eq!(managers["Members"][0]["@odata.id"], "/redfish/v1/Managers/BMC");
    let mgr = c.resource("/redfish/v1/Managers/BMC").await;
    assert_eq!(mgr["FirmwareVersion"], "7.00.00.00");
    assert_eq!(
        mgr["Actions"]["#Manager.Reset"]["ResetType@Redfish.AllowableValues"],
        serde_json::json!(["ForceRestart", "GracefulRestart"])
    );

    let svc = c.resource("/redfish/v1/UpdateService").await;
    let inv_uri = svc["FirmwareInventory"]["@odata.id"].as_str().unwrap();
    let inv = c.resource(inv_uri).await;
    assert_eq!(inv["Members@odata.count"], 2);
    let bios_uri = inv["Members"][1]["@odata.id"].as_str().unwrap();
    let bios = c.resource(bios_uri).await;
    assert_eq!(bios["Id"], BIOS_MEMBER);
    assert_eq!(bios["Name"], "BIOS");
    assert_eq!(bios["Version"], "2.1.0");
    assert_eq!(bios["Updateable"], true);
    assert_eq!(bios["Status"]["Health"], "OK");
    fleet.shutdown().await;
}

#[tokio::test]
async fn update_service_advertises_per_upload_style() {
    let mut a = host("multipart");
    a.upload_style = UploadStyle::Multipart;
    let mut b = host("httppush");
    b.upload_style = UploadStyle::HttpPush;
    let mut c = host("simple");
    c.upload_style = UploadStyle::SimpleUpdate;
    let fleet = start_fleet(vec![a, b, c]).await;
    let expect = [("multipart", true, false), ("httppush", false, true), ("simple", false, false)];
    for (id, multipart, push) in expect {
        let svc = Client::new(&fleet.host(id).unwrap()).resource("/redfish/v1/UpdateService").await;
        assert_eq!(svc["MultipartHttpPushUri"].is_string(), multipart, "{id}: {svc}");
        assert_eq!(svc["HttpPushUri"].is_string(), push, "{id}: {svc}");
        assert_eq!(
            svc["Actions"]["#UpdateService.SimpleUpdate"]["target"],
            "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
        );
    }
    fleet.shutdown().await;
}

#[tokio::test]
async fn errors_are_redfish_bodies() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.get("/redfish/v1/Nothing/Here").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.body["error"]["code"].as_str().unwrap().contains("GeneralError"), "{}", r.raw);
    assert!(r.message_id().ends_with("ResourceNotFound"));
    let r = c.get("/redfish/v1/UpdateService/FirmwareInventory/NoSuchMember").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = c.get("/redfish/v1/TaskService/Tasks/notanumber").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = c.send(c.request(reqwest::Method::DELETE, "/redfish/v1/Systems")).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(r.body["error"]["@Message.ExtendedInfo"].is_array(), "{}", r.raw);
    let r = c
        .send(
            c.request(reqwest::Method::POST, "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset")
                .body("{nope"),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.message_id().ends_with("MalformedJSON"), "{}", r.raw);
    fleet.shutdown().await;
}

#[tokio::test]
async fn sim_state_shows_versions_power_and_counters() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let anon = Client::anonymous(&fleet.hosts()[0]);
    let s = anon.get("/sim/state").await;
    assert_eq!(s.status, StatusCode::OK);
    assert_eq!(s.body["id"], "host-001");
    assert_eq!(s.body["power_state"], "On");
    assert_eq!(s.body["versions"][BIOS_MEMBER], "2.1.0");
    assert_eq!(s.body["counters"]["uploads"], 0);
    fleet.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_the_listeners() {
    let fleet = start_fleet(vec![host("host-001")]).await;
    let h = fleet.hosts()[0].clone();
    assert_eq!(Client::anonymous(&h).get("/redfish/v1").await.status, StatusCode::OK);
    fleet.shutdown().await;
    assert!(tokio::net::TcpStream::connect(h.addr).await.is_err());
}

#[tokio::test]
async fn bind_conflict_names_the_host() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut h = host("host-009");
    h.bmc_address = taken.local_addr().unwrap();
    let err = hostfw_bmc_sim::start(hostfw_bmc_sim::FleetSpec::new(vec![h])).await.err().expect("bind fails");
    assert!(err.to_string().contains("host-009"), "{err}");
}
