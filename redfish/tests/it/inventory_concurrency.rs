//! The FirmwareInventory members are read with bounded concurrency (`ClientOptions::
//! inventory_concurrency`), seen from the server's side: a scripted BMC that answers member GETs
//! slowly counts how many it holds at once. The report keeps the collection's member order.
//! Must not assert on wall time.

use crate::common;

use std::time::Duration;

use common::mock::{json, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, ClientOptions};
use serde_json::json as j;

const MEMBERS: &str = "/redfish/v1/UpdateService/FirmwareInventory";

/// A BMC with `n` inventory members, listed in an order that is not alphabetical, each member
/// answered after `delay`.
fn slow_inventory(mock: &MockBmc, n: usize, delay: Duration) -> Vec<String> {
    let root = j!({"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": "/redfish/v1/Systems"},
        "UpdateService": {"@odata.id": "/redfish/v1/UpdateService"}});
    mock.on("GET", "/redfish/v1/", vec![json(200, root)]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))]);
    mock.on(
        "GET",
        "/redfish/v1/Systems/1",
        vec![json(200, j!({"Id": "1", "Manufacturer": "Supermicro", "Model": "X"}))],
    );
    mock.on("GET", "/redfish/v1/UpdateService", vec![json(200, j!({"FirmwareInventory": {"@odata.id": MEMBERS}}))]);
    // Reverse order with a mix of names, so a sort or a completion order would show.
    let ids: Vec<String> = (0..n).rev().map(|i| format!("{}_{i}", if i % 2 == 0 { "BIOS" } else { "CPLD" })).collect();
    let links: Vec<_> = ids.iter().map(|id| j!({"@odata.id": format!("{MEMBERS}/{id}")})).collect();
    mock.on("GET", MEMBERS, vec![json(200, j!({"Members": links}))]);
    for id in &ids {
        mock.on("GET", &format!("{MEMBERS}/{id}"), vec![json(200, j!({"Id": id, "Version": format!("v-{id}")}))]);
    }
    mock.slow(&format!("{MEMBERS}/"), delay);
    ids
}

async fn explore_with(concurrency: usize, n: usize) -> (usize, Vec<String>, Vec<String>) {
    let mock = MockBmc::start().await;
    let ids = slow_inventory(&mock, n, Duration::from_millis(150));
    let client =
        common::mock_client(&mock, ClientOptions { inventory_concurrency: concurrency, ..options(AuthMode::Basic) });
    let report = client.explore().await.expect("explore");
    let got: Vec<String> = report.members.iter().map(|m| m.id.clone()).collect();
    for m in &report.members {
        assert_eq!(m.version, format!("v-{}", m.id), "each member keeps its own document");
    }
    (mock.max_slow_in_flight(), ids, got)
}

#[tokio::test]
async fn members_are_read_k_at_a_time_and_keep_the_collection_order() {
    let (max, ids, got) = explore_with(3, 12).await;
    assert_eq!(max, 3, "the BMC saw {max} member GETs at once; the bound is 3");
    assert_eq!(got, ids, "the report lists the members in the collection's order");
}

#[tokio::test]
async fn a_bound_of_one_reads_one_member_at_a_time() {
    let (max, ids, got) = explore_with(1, 5).await;
    assert_eq!(max, 1);
    assert_eq!(got, ids);
}

#[tokio::test]
async fn the_bound_is_never_exceeded_when_it_is_larger_than_the_collection() {
    let (max, ids, got) = explore_with(8, 5).await;
    assert!(max <= 5 && max > 1, "at most the 5 members at once, and more than one: {max}");
    assert_eq!(got, ids);
}
