//! The Systems collection and the FirmwareInventory read with `$expand` where the ServiceRoot
//! advertises it, seen from the server's side (bmc-sim's per-BMC request counters): one request
//! for each collection, the same report as reading each member; a BMC advertising no `ExpandQuery` gets one GET per member
//! with at most `inventory_concurrency` in flight; each captured vendor tree gives every member,
//! whether served by bmc-sim (which expands) or as-is by a static server (which ignores the
//! query: the members that come back as links are read one by one); a BMC that refuses the query
//! it advertises is read member by member. Tests that need
//! `../shared` say "skipped" and pass without it. Must not assert on wall time.

use crate::common;

use common::captured;
use common::mock::MockBmc;
use hostfw_bmc_sim::{FleetSpec, HostSpec, RunningFleet};
use hostfw_model::InventoryReport;
use hostfw_redfish::{AuthMode, ClientOptions, RedfishClient};

const VENDORS: [&str; 4] = ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"];

/// A one-host generic fleet with `n` inventory members; `extra` adds host keys.
fn fleet_toml(n: usize, extra: &str) -> String {
    let members: Vec<String> = (0..n)
        .rev()
        .map(|i| format!("{{ id = \"FW_{i:03}\", version = \"1.{i}\", name = \"Firmware {i}\" }}"))
        .collect();
    format!(
        "[[host]]\nid = \"h1\"\nvendor = \"Supermicro\"\nmodel = \"SYS-821GE-TNHR\"\nbmc_address = \"127.0.0.1:0\"\n{extra}\n\
         firmware = [ {} ]\n",
        members.join(", ")
    )
}

fn client_of(fleet: &RunningFleet, expand: bool, concurrency: usize) -> RedfishClient {
    let host = fleet.hosts().into_iter().next().expect("one host");
    let mut client_opts =
        ClientOptions { expand, inventory_concurrency: concurrency, ..common::options(AuthMode::Basic) };
    client_opts.request_timeout = std::time::Duration::from_secs(30);
    RedfishClient::new(
        hostfw_redfish::BmcEndpoint {
            address: host.base_url.parse().expect("sim base URL"),
            username: host.username.clone(),
            password: host.password.clone(),
        },
        client_opts,
    )
    .expect("client")
}

/// One exploration of a fresh fleet: the report and the BMC's (requests, expanded reads,
/// most requests in flight at once).
async fn explore_counted(spec: FleetSpec, expand: bool, concurrency: usize) -> (InventoryReport, (u64, u64, u64)) {
    let fleet = hostfw_bmc_sim::start(spec).await.expect("fleet starts");
    let report = client_of(&fleet, expand, concurrency).explore().await.expect("explore");
    let stats = fleet.stats().per_host.into_values().next().expect("one host");
    fleet.shutdown().await;
    (report, (stats.requests, stats.expanded_reads, stats.max_requests_in_flight))
}

#[tokio::test]
async fn expand_reads_the_inventory_in_one_request_with_the_same_report() {
    let spec = || FleetSpec::from_toml_str(&fleet_toml(40, "")).expect("fleet TOML");
    let (expanded, (requests, expanded_reads, _)) = explore_counted(spec(), true, 4).await;
    let (plain, (plain_requests, plain_expanded, _)) = explore_counted(spec(), false, 4).await;
    assert_eq!(expanded_reads, 2, "the Systems collection and the FirmwareInventory were read expanded");
    assert_eq!(requests, 4, "root + Systems?$expand + UpdateService + FirmwareInventory?$expand");
    assert_eq!(plain_expanded, 0, "expand = false never asks for $expand");
    assert_eq!(plain_requests, 5 + 40, "without $expand, one GET per member");
    assert_eq!(expanded.members.len(), 40);
    assert_eq!(expanded, plain, "the expanded read gives the same report as reading each member");
    let ids: Vec<&str> = expanded.members.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids.first().copied(), Some("FW_039"), "the collection's order is kept: {ids:?}");
    assert_eq!(ids.last().copied(), Some("FW_000"));
}

#[tokio::test]
async fn a_bmc_without_expand_query_gets_per_member_gets_with_at_most_the_bound_in_flight() {
    // Every answer takes 100 ms, so the member reads overlap up to the bound.
    let extra = "expand_query = false\nfaults = { slow_response_secs = 0.1 }";
    let spec = FleetSpec::from_toml_str(&fleet_toml(24, extra)).expect("fleet TOML");
    let (report, (requests, expanded_reads, max_in_flight)) = explore_counted(spec, true, 3).await;
    assert_eq!(expanded_reads, 0, "not advertised, so not asked for");
    assert_eq!(requests, 5 + 24, "one GET per member");
    assert_eq!(max_in_flight, 3, "the BMC saw {max_in_flight} requests at once; the bound is 3");
    assert_eq!(report.members.len(), 24);
}

#[tokio::test]
async fn a_bmc_without_expand_query_advertises_none_and_refuses_the_query() {
    let spec = FleetSpec::from_toml_str(&fleet_toml(2, "expand_query = false")).expect("fleet TOML");
    let fleet = hostfw_bmc_sim::start(spec).await.expect("fleet starts");
    let host = fleet.hosts().into_iter().next().unwrap();
    let http = reqwest::Client::new();
    let get = |path: &str| {
        http.get(format!("{}{path}", host.base_url)).basic_auth(&host.username, Some(host.password.expose())).send()
    };
    let root: serde_json::Value = get("/redfish/v1/").await.unwrap().json().await.unwrap();
    assert!(root.pointer("/ProtocolFeaturesSupported/ExpandQuery").is_none(), "{root}");
    let r = get("/redfish/v1/UpdateService/FirmwareInventory?$expand=.($levels=1)").await.unwrap();
    assert_eq!(r.status(), 501, "QueryNotSupported");
    fleet.shutdown().await;
}

/// `@odata.id`s of the captured FirmwareInventory members of `tree`, in order, and its number of
/// Systems.
fn captured_inventory(tree: &captured::Tree) -> (Vec<String>, u64) {
    let root = tree.doc("/redfish/v1");
    let us = tree.doc(root["UpdateService"]["@odata.id"].as_str().unwrap());
    let inv = tree.doc(us["FirmwareInventory"]["@odata.id"].as_str().unwrap());
    let members =
        inv["Members"].as_array().unwrap().iter().map(|m| m["@odata.id"].as_str().unwrap().to_string()).collect();
    let systems = tree.doc(root["Systems"]["@odata.id"].as_str().unwrap());
    (members, systems["Members"].as_array().unwrap().len() as u64)
}

#[tokio::test]
async fn every_captured_tree_served_by_bmc_sim_is_read_in_one_request_per_collection() {
    for vendor in VENDORS {
        let Some(tree) = captured::tree(vendor) else { return };
        let (members, systems) = captured_inventory(&tree);
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/redfish/vendor-mockups")
            .join(vendor);
        let spec = || {
            FleetSpec::new(vec![HostSpec::from_profile("p1", "127.0.0.1:0".parse().unwrap(), &dir).expect("profile")])
        };
        let (expanded, (requests, expanded_reads, _)) = explore_counted(spec(), true, 4).await;
        let (plain, (plain_requests, _, _)) = explore_counted(spec(), false, 4).await;
        assert_eq!(expanded_reads, 2, "{vendor}: Systems and FirmwareInventory were read expanded");
        // root, the expanded Systems, UpdateService and the expanded FirmwareInventory.
        assert_eq!(requests, 4, "{vendor}");
        assert_eq!(
            plain_requests,
            2 + systems + 2 + members.len() as u64,
            "{vendor}: without $expand, one GET per System and per member"
        );
        let got: Vec<&str> = expanded.members.iter().map(|m| m.odata_id.as_str()).collect();
        assert_eq!(got, members, "{vendor}: every captured member, in the collection's order");
        assert_eq!(expanded, plain, "{vendor}: same report either way");
    }
}

#[tokio::test]
async fn every_captured_tree_served_as_is_gives_every_member_although_expand_is_ignored() {
    for vendor in VENDORS {
        let Some(tree) = captured::tree(vendor) else { return };
        let (members, _) = captured_inventory(&tree);
        let root = tree.doc("/redfish/v1");
        assert!(root.pointer("/ProtocolFeaturesSupported/ExpandQuery/NoLinks") == Some(&serde_json::json!(true)));
        let mock = MockBmc::start().await;
        tree.serve(&mock, &["/redfish/v1"]);
        let systems = root["Systems"]["@odata.id"].as_str().unwrap();
        tree.serve_collection(&mock, systems);
        let us = root["UpdateService"]["@odata.id"].as_str().unwrap();
        tree.serve(&mock, &[us]);
        let inv = tree.doc(us)["FirmwareInventory"]["@odata.id"].as_str().unwrap().to_string();
        tree.serve_collection(&mock, &inv);
        let client = common::mock_client(&mock, common::options(AuthMode::Basic));
        let report = client.explore().await.unwrap_or_else(|e| panic!("{vendor}: {e}"));
        let got: Vec<&str> = report.members.iter().map(|m| m.odata_id.as_str()).collect();
        assert_eq!(got, members, "{vendor}: every member, in the collection's order");
        let log = mock.log();
        let asked = format!("{}?$expand=.($levels=1)", inv.trim_end_matches('/'));
        assert_eq!(log.iter().filter(|l| l.path == asked).count(), 1, "{vendor}: $expand was asked for once");
        for m in &members {
            assert_eq!(mock.hits("GET", m), 1, "{vendor}: {m} came back as a link and was read by itself");
        }
    }
}

#[tokio::test]
async fn a_bmc_that_advertises_expand_but_refuses_it_is_read_member_by_member() {
    use common::mock::json;
    use serde_json::json as j;
    let inv = "/redfish/v1/UpdateService/FirmwareInventory";
    let mock = MockBmc::start().await;
    let root = j!({"Systems": {"@odata.id": "/redfish/v1/Systems"}, "UpdateService": {"@odata.id": "/redfish/v1/UpdateService"},
        "ProtocolFeaturesSupported": {"ExpandQuery": {"ExpandAll": true, "Levels": true, "MaxLevels": 1, "NoLinks": false}}});
    mock.on("GET", "/redfish/v1/", vec![json(200, root)]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))]);
    mock.on("GET", "/redfish/v1/Systems/1", vec![json(200, j!({"Id": "1", "Manufacturer": "X", "Model": "Y"}))]);
    mock.on("GET", "/redfish/v1/UpdateService", vec![json(200, j!({"FirmwareInventory": {"@odata.id": inv}}))]);
    let asked = format!("{inv}?$expand=*($levels=1)");
    mock.on("GET", &asked, vec![json(400, j!({"error": {"message": "QueryParameterValueFormatError"}}))]);
    mock.on(
        "GET",
        inv,
        vec![json(200, j!({"Members": [{"@odata.id": format!("{inv}/A")}, {"@odata.id": format!("{inv}/B")}]}))],
    );
    mock.on("GET", &format!("{inv}/A"), vec![json(200, j!({"Id": "A", "Version": "1"}))]);
    mock.on("GET", &format!("{inv}/B"), vec![json(200, j!({"Id": "B", "Version": "2"}))]);
    let report = common::mock_client(&mock, common::options(AuthMode::Basic)).explore().await.expect("explore");
    let got: Vec<(&str, &str)> = report.members.iter().map(|m| (m.id.as_str(), m.version.as_str())).collect();
    assert_eq!(got, vec![("A", "1"), ("B", "2")]);
    assert_eq!(mock.hits("GET", &asked), 1, "the advertised form (* with one level) was asked for");
    assert_eq!(mock.hits("GET", inv), 1, "then the plain collection");
}
