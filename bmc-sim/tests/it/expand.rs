//! `$expand` on the FirmwareInventory and the Systems collection: the generic shape advertises the `ExpandQuery` of its
//! vendor's captured tree and a profile its tree's own; `.`/`*` put each member's document (the
//! same one a GET of the member answers) in the collection, `~` leaves links, `$levels` beyond
//! `MaxLevels` gets 400 and a host with `expand_query = false` advertises nothing and gets 501.
//! Profile cases are skipped when `../shared` is absent.

use crate::common;

use common::*;
use hostfw_bmc_sim::HostSpec;
use reqwest::StatusCode;

const INVENTORY: &str = "/redfish/v1/UpdateService/FirmwareInventory";
const SYSTEMS: &str = "/redfish/v1/Systems";

/// The expanded collection's members equal the documents their own GETs answer, in order.
async fn expanded_members_are_the_member_documents(c: &Client, query: &str, what: &str) -> usize {
    expanded_collection_is_its_member_documents(c, INVENTORY, query, what).await
}

/// The collection at `path` read with `query` lists, in order, the documents its members' own
/// GETs answer.
async fn expanded_collection_is_its_member_documents(c: &Client, path: &str, query: &str, what: &str) -> usize {
    let plain = c.get(path).await.body;
    let expanded = c.get(&format!("{path}?{query}")).await;
    assert_eq!(expanded.status, StatusCode::OK, "{what}: {}", expanded.raw);
    let links = plain["Members"].as_array().expect("members");
    let docs = expanded.body["Members"].as_array().expect("expanded members");
    assert_eq!(docs.len(), links.len(), "{what}");
    for (link, doc) in links.iter().zip(docs) {
        let uri = link["@odata.id"].as_str().unwrap();
        assert_eq!(doc, &c.get(uri).await.body, "{what}: {uri}");
    }
    docs.len()
}

#[tokio::test]
async fn the_generic_shape_expands_its_inventory_as_its_vendor_advertises() {
    let fleet = start_fleet(vec![host("h1")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let root = c.get("/redfish/v1").await.body;
    let q = &root["ProtocolFeaturesSupported"]["ExpandQuery"];
    assert_eq!(
        (q["NoLinks"].as_bool(), q["ExpandAll"].as_bool(), q["MaxLevels"].as_u64()),
        (Some(true), Some(true), Some(1)),
        "a Dell advertises what the captured iDRAC does: {root}"
    );
    assert_eq!(expanded_members_are_the_member_documents(&c, "$expand=.($levels=1)", "dot").await, 2);
    assert_eq!(expanded_members_are_the_member_documents(&c, "$expand=*", "star").await, 2);
    let links = c.get(&format!("{INVENTORY}?$expand=~")).await.body;
    assert_eq!(links["Members"][0].as_object().map(|o| o.len()), Some(1), "~ leaves the members as links: {links}");
    let too_deep = c.get(&format!("{INVENTORY}?$expand=.($levels=2)")).await;
    assert_eq!(too_deep.status, StatusCode::BAD_REQUEST, "the iDRAC's MaxLevels is 1");
    assert_eq!(too_deep.message_id().rsplit('.').next(), Some("QueryParameterValueFormatError"));
    let stats = fleet.stats().per_host.remove("h1").unwrap();
    assert_eq!(stats.expanded_reads, 2, "the . and * reads");
    fleet.shutdown().await;
}

#[tokio::test]
async fn the_generic_shape_expands_its_systems_collection() {
    let fleet = start_fleet(vec![host("h1")]).await;
    let c = Client::new(&fleet.hosts()[0]);
    assert_eq!(expanded_collection_is_its_member_documents(&c, SYSTEMS, "$expand=.($levels=1)", "systems").await, 1);
    let links = c.get(&format!("{SYSTEMS}?$expand=~")).await.body;
    assert_eq!(links["Members"][0].as_object().map(|o| o.len()), Some(1), "~ leaves the members as links: {links}");
    assert_eq!(c.get(&format!("{SYSTEMS}?$expand=.($levels=2)")).await.status, StatusCode::BAD_REQUEST);
    assert_eq!(fleet.stats().per_host.remove("h1").unwrap().expanded_reads, 1);
    fleet.shutdown().await;

    let mut h = host("h1");
    h.expand_query = false;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let r = c.get(&format!("{SYSTEMS}?$expand=.")).await;
    assert_eq!(r.status, StatusCode::NOT_IMPLEMENTED, "no ExpandQuery advertised: {}", r.raw);
    assert_eq!(c.get(SYSTEMS).await.status, StatusCode::OK, "the plain read still works");
    fleet.shutdown().await;
}

#[tokio::test]
async fn a_host_without_expand_query_advertises_none_and_refuses_it() {
    let mut h = host("h1");
    h.expand_query = false;
    let fleet = start_fleet(vec![h]).await;
    let c = Client::new(&fleet.hosts()[0]);
    let root = c.get("/redfish/v1").await.body;
    assert!(root.get("ProtocolFeaturesSupported").is_none(), "{root}");
    let r = c.get(&format!("{INVENTORY}?$expand=.")).await;
    assert_eq!(r.status, StatusCode::NOT_IMPLEMENTED);
    assert_eq!(r.message_id().rsplit('.').next(), Some("QueryNotSupported"));
    fleet.shutdown().await;
}

#[tokio::test]
async fn each_captured_tree_expands_its_whole_inventory() {
    for name in ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"] {
        let Some(dir) = tree(name) else { return };
        let spec = HostSpec::from_profile(name, "127.0.0.1:0".parse().unwrap(), &dir).unwrap();
        let n = spec.firmware.len();
        let fleet = start_fleet(vec![spec]).await;
        let c = Client::new(&fleet.hosts()[0]);
        assert_eq!(expanded_members_are_the_member_documents(&c, "$expand=.($levels=1)", name).await, n, "{name}");
        // The Systems collection too (a GB200 lists two Systems), each as its own GET answers it.
        let root = c.get("/redfish/v1").await.body;
        let systems = root["Systems"]["@odata.id"].as_str().expect("Systems link").trim_end_matches('/').to_string();
        let listed = c.get(&systems).await.body["Members"].as_array().map_or(0, Vec::len);
        let what = format!("{name} systems");
        assert_eq!(
            expanded_collection_is_its_member_documents(&c, &systems, "$expand=.($levels=1)", &what).await,
            listed
        );
        fleet.shutdown().await;

        // Without expand_query the captured root loses its ExpandQuery, and only that.
        let mut spec = HostSpec::from_profile(name, "127.0.0.1:0".parse().unwrap(), &dir).unwrap();
        spec.expand_query = false;
        let fleet = start_fleet(vec![spec]).await;
        let c = Client::new(&fleet.hosts()[0]);
        let root = c.get("/redfish/v1").await.body;
        let features = &root["ProtocolFeaturesSupported"];
        assert!(features.get("ExpandQuery").is_none() && features.get("FilterQuery").is_some(), "{name}: {features}");
        assert_eq!(c.get(&format!("{INVENTORY}?$expand=.")).await.status, StatusCode::NOT_IMPLEMENTED, "{name}");
        let systems = root["Systems"]["@odata.id"].as_str().expect("Systems link").trim_end_matches('/').to_string();
        assert_eq!(c.get(&format!("{systems}?$expand=.")).await.status, StatusCode::NOT_IMPLEMENTED, "{name}");
        fleet.shutdown().await;
    }
}
