//! Crawls that remember each BMC's FirmwareInventory link (`ClientOptions::link_cache`), seen
//! from the server's side: on every captured tree served by bmc-sim the first crawl takes 4
//! requests (ServiceRoot, Systems?$expand, UpdateService, FirmwareInventory?$expand) and a repeat
//! crawl through a new client sharing the cache 3 (no UpdateService), with the same report as a
//! crawl without `$expand` (staged image included); a remembered link that is gone (404, 410, not
//! a collection) is forgotten and the crawl still reports the moved inventory; a BMC without
//! `ExpandQuery` keeps the `inventory_concurrency` bound and still skips the UpdateService.
//! Tests that need `../shared` say "skipped" and pass without it. Must not assert on wall time.

use crate::common;

use common::captured;
use common::mock::{json, MockBmc};
use hostfw_bmc_sim::{ApplyTime, FleetSpec, HostSpec, RunningFleet};
use hostfw_model::InventoryReport;
use hostfw_redfish::{AuthMode, BmcEndpoint, ClientOptions, LinkCache, RedfishClient};
use serde_json::json as j;

const VENDORS: [&str; 4] = ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"];

/// A new client for the fleet's one host (as the worker opens one per activity).
fn client_of(fleet: &RunningFleet, expand: bool, concurrency: usize, cache: Option<&LinkCache>) -> RedfishClient {
    let host = fleet.hosts().into_iter().next().expect("one host");
    let options = ClientOptions {
        expand,
        inventory_concurrency: concurrency,
        link_cache: cache.cloned(),
        request_timeout: std::time::Duration::from_secs(30),
        ..common::options(AuthMode::Basic)
    };
    RedfishClient::new(
        BmcEndpoint {
            address: host.base_url.parse().expect("sim base URL"),
            username: host.username.clone(),
            password: host.password.clone(),
        },
        options,
    )
    .expect("client")
}

/// One crawl through a new client: its report and the BMC's (requests, expanded reads) it took.
async fn crawl(
    fleet: &RunningFleet,
    expand: bool,
    concurrency: usize,
    cache: Option<&LinkCache>,
) -> (InventoryReport, u64, u64) {
    let before = fleet.stats().per_host.into_values().next().expect("one host");
    let report = client_of(fleet, expand, concurrency, cache).explore().await.expect("explore");
    let after = fleet.stats().per_host.into_values().next().expect("one host");
    (report, after.requests - before.requests, after.expanded_reads - before.expanded_reads)
}

/// `s` as a regular expression matching itself.
fn regex_escape(s: &str) -> String {
    s.chars().fold(String::new(), |mut out, c| {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

#[tokio::test]
async fn every_captured_tree_is_crawled_in_four_requests_then_three_with_the_same_report() {
    for vendor in VENDORS {
        let Some(_) = captured::tree(vendor) else { return };
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/redfish/vendor-mockups")
            .join(vendor);
        let mut spec = HostSpec::from_profile("p1", "127.0.0.1:0".parse().unwrap(), &dir).expect("profile");
        spec.apply_time = ApplyTime::OnReset;
        let first_member = spec.firmware.first().expect("captured members").id.clone();
        let fleet = hostfw_bmc_sim::start(FleetSpec::new(vec![spec])).await.expect("fleet starts");
        // An image staged until the next reset: the report carries it on its member.
        let host = fleet.hosts().into_iter().next().unwrap();
        let image = common::image_bytes(&format!("^{}$", regex_escape(&first_member)), "9.9.9-staged", 8);
        let flashed = reqwest::Client::new().post(format!("{}/sim/host-flash", host.base_url)).body(image).send().await;
        assert!(flashed.expect("host flash").status().is_success(), "{vendor}");

        let cache = LinkCache::default();
        let (first, first_requests, first_expanded) = crawl(&fleet, true, 4, Some(&cache)).await;
        let (repeat, repeat_requests, repeat_expanded) = crawl(&fleet, true, 4, Some(&cache)).await;
        let (plain, _, plain_expanded) = crawl(&fleet, false, 4, None).await;
        assert_eq!(first_requests, 4, "{vendor}: root, Systems?$expand, UpdateService, FirmwareInventory?$expand");
        assert_eq!(repeat_requests, 3, "{vendor}: root, Systems?$expand, FirmwareInventory?$expand");
        assert_eq!((first_expanded, repeat_expanded, plain_expanded), (2, 2, 0), "{vendor}");
        assert_eq!(cache.len(), 1, "{vendor}: one entry for the one BMC");
        assert_eq!(first, plain, "{vendor}: the first crawl reports what reading each resource reports");
        assert_eq!(repeat, plain, "{vendor}: so does the repeat crawl");
        let staged = plain.members.iter().find(|m| m.id == first_member).and_then(|m| m.staged_version.as_deref());
        assert_eq!(staged, Some("9.9.9-staged"), "{vendor}: the staged image is on its member");
        assert!(!plain.vendor.is_empty() && !plain.model.is_empty(), "{vendor}: {plain:?}");
        assert!(plain.power_state.is_some(), "{vendor}: the host's power state");
        fleet.shutdown().await;
    }
}

#[tokio::test]
async fn a_bmc_without_expand_query_keeps_the_bound_and_skips_the_update_service_on_repeat() {
    let toml = "[[host]]\nid = \"h1\"\nvendor = \"Supermicro\"\nmodel = \"SYS-821GE-TNHR\"\n\
                bmc_address = \"127.0.0.1:0\"\nexpand_query = false\nfaults = { slow_response_secs = 0.05 }\n\
                firmware = [ { id = \"BMC_0\", version = \"1.0\" }, { id = \"BIOS_0\", version = \"2.0\" }, \
                { id = \"CPLD_0\", version = \"3.0\" }, { id = \"NIC_0\", version = \"4.0\" }, { id = \"GPU_0\", version = \"5.0\" } ]\n";
    let fleet = hostfw_bmc_sim::start(FleetSpec::from_toml_str(toml).expect("fleet TOML")).await.expect("fleet");
    let cache = LinkCache::default();
    let (first, first_requests, first_expanded) = crawl(&fleet, true, 2, Some(&cache)).await;
    let (repeat, repeat_requests, _) = crawl(&fleet, true, 2, Some(&cache)).await;
    assert_eq!(first_expanded, 0, "not advertised, so not asked for");
    // root, Systems, the System, UpdateService, FirmwareInventory, one GET per member.
    assert_eq!(first_requests, 5 + 5);
    assert_eq!(repeat_requests, 4 + 5, "the repeat crawl skips the UpdateService only");
    assert_eq!(first, repeat);
    assert_eq!(first.members.len(), 5);
    let max = fleet.stats().per_host["h1"].max_requests_in_flight;
    assert_eq!(max, 2, "the BMC saw {max} requests at once; the bound is 2");
    fleet.shutdown().await;
}

const US: &str = "/redfish/v1/UpdateService";
const OLD: &str = "/redfish/v1/UpdateService/FirmwareInventory";
const NEW: &str = "/redfish/v1/UpdateService/SoftwareInventory";

/// A BMC whose inventory lives at `inventory` (two members, versions `v`), advertising `$expand`
/// (the mock ignores the query, so members come back as links).
fn serve_bmc(mock: &MockBmc, inventory: &str, v: &str) {
    let root = j!({"Systems": {"@odata.id": "/redfish/v1/Systems"}, "UpdateService": {"@odata.id": US},
        "ProtocolFeaturesSupported": {"ExpandQuery": {"ExpandAll": true, "Levels": true, "MaxLevels": 1, "NoLinks": true}}});
    mock.on("GET", "/redfish/v1/", vec![json(200, root)]);
    mock.on("GET", "/redfish/v1/Systems", vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}))]);
    mock.on(
        "GET",
        "/redfish/v1/Systems/1",
        vec![json(200, j!({"Id": "1", "Manufacturer": "X", "Model": "Y", "PowerState": "On"}))],
    );
    mock.on("GET", US, vec![json(200, j!({"FirmwareInventory": {"@odata.id": inventory}}))]);
    let members: Vec<_> = ["A", "B"].iter().map(|id| j!({"@odata.id": format!("{inventory}/{id}")})).collect();
    mock.on("GET", inventory, vec![json(200, j!({"Members": members}))]);
    for id in ["A", "B"] {
        mock.on("GET", &format!("{inventory}/{id}"), vec![json(200, j!({"Id": id, "Version": format!("{v}-{id}")}))]);
    }
}

/// GETs of `path`, with or without a query.
fn reads(mock: &MockBmc, path: &str) -> usize {
    mock.log().iter().filter(|l| l.method == "GET" && l.path.split('?').next() == Some(path)).count()
}

fn versions(r: &InventoryReport) -> Vec<(&str, &str)> {
    r.members.iter().map(|m| (m.id.as_str(), m.version.as_str())).collect()
}

#[tokio::test]
async fn a_stale_remembered_link_is_forgotten_and_the_moved_inventory_reported() {
    // The old inventory answers 404, 410, or a document that is not a collection.
    for gone in [json(404, j!({"error": {"message": "not found"}})), json(410, j!({})), json(200, j!({"Id": "x"}))] {
        let mock = MockBmc::start().await;
        serve_bmc(&mock, OLD, "1");
        let cache = LinkCache::default();
        let options = || ClientOptions { link_cache: Some(cache.clone()), ..common::options(AuthMode::Basic) };
        let first = common::mock_client(&mock, options()).explore().await.expect("first crawl");
        assert_eq!(versions(&first), [("A", "1-A"), ("B", "1-B")]);
        assert_eq!(reads(&mock, US), 1);

        // The BMC moved its inventory (new firmware): the remembered link is stale.
        serve_bmc(&mock, NEW, "2");
        mock.on("GET", OLD, vec![gone.clone()]);
        let second = common::mock_client(&mock, options()).explore().await.expect("a stale link fails no crawl");
        assert_eq!(versions(&second), [("A", "2-A"), ("B", "2-B")], "{gone:?}");
        assert_eq!(reads(&mock, US), 2, "the UpdateService was read again: {gone:?}");

        // The new link is remembered: the next crawl reads it without the UpdateService.
        let third = common::mock_client(&mock, options()).explore().await.expect("third crawl");
        assert_eq!(third, second);
        assert_eq!(reads(&mock, US), 2, "{gone:?}");
        assert_eq!(cache.len(), 1);
    }
}

#[tokio::test]
async fn a_root_naming_another_update_service_does_not_use_the_remembered_link() {
    let mock = MockBmc::start().await;
    serve_bmc(&mock, OLD, "1");
    let cache = LinkCache::default();
    let options = || ClientOptions { link_cache: Some(cache.clone()), ..common::options(AuthMode::Basic) };
    common::mock_client(&mock, options()).explore().await.expect("first crawl");
    let root = j!({"Systems": {"@odata.id": "/redfish/v1/Systems"}, "UpdateService": {"@odata.id": "/redfish/v1/UpdateService2"}});
    mock.on("GET", "/redfish/v1/", vec![json(200, root)]);
    mock.on("GET", "/redfish/v1/UpdateService2", vec![json(200, j!({"FirmwareInventory": {"@odata.id": NEW}}))]);
    serve_new_members(&mock);
    let report = common::mock_client(&mock, options()).explore().await.expect("second crawl");
    assert_eq!(versions(&report), [("A", "2-A"), ("B", "2-B")]);
    assert_eq!(reads(&mock, "/redfish/v1/UpdateService2"), 1, "the new UpdateService was read");
    assert_eq!(reads(&mock, OLD), 1, "the remembered link was not followed");
}

fn serve_new_members(mock: &MockBmc) {
    let members: Vec<_> = ["A", "B"].iter().map(|id| j!({"@odata.id": format!("{NEW}/{id}")})).collect();
    mock.on("GET", NEW, vec![json(200, j!({"Members": members}))]);
    for id in ["A", "B"] {
        mock.on("GET", &format!("{NEW}/{id}"), vec![json(200, j!({"Id": id, "Version": format!("2-{id}")}))]);
    }
}
