//! Every reply body is read incrementally up to `ClientOptions::max_body_bytes`: a BMC that
//! streams without end, or declares a body over the bound, gets a `BodyTooLarge` error naming
//! the BMC, the URL and the bound, quickly and without holding the body; a body under the bound
//! is read as before. Scripted mock only; no sleeps.

use crate::common;

use std::time::{Duration, Instant};

use common::mock::{json, stream, MockBmc};
use common::options;
use hostfw_redfish::{AuthMode, ClientOptions, RedfishClient, RedfishError};
use serde_json::json as j;

const LIMIT: u64 = 64 * 1024;

fn client_for(mock: &MockBmc) -> RedfishClient {
    common::mock_client(mock, ClientOptions { max_body_bytes: LIMIT, ..options(AuthMode::Basic) })
}

fn assert_too_large(e: &RedfishError, mock: &MockBmc, declared: Option<u64>) {
    match e {
        RedfishError::BodyTooLarge { bmc, url, limit, declared: d, .. } => {
            assert_eq!(bmc, &mock.bmc().to_string());
            assert!(url.ends_with("/redfish/v1/Systems"), "{url}");
            assert_eq!(*limit, LIMIT);
            assert_eq!(*d, declared);
        }
        other => panic!("expected BodyTooLarge, got {other:?}"),
    }
    assert!(!e.is_transient(), "{e:?}");
    let text = e.to_string();
    for part in [mock.address.as_str(), "/redfish/v1/Systems", "65536", "max_response_bytes"] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
}

fn root(mock: &MockBmc) {
    mock.on("GET", "/redfish/v1/", vec![json(200, j!({"Systems": {"@odata.id": "/redfish/v1/Systems"}}))]);
}

#[tokio::test]
async fn endless_body_is_cut_off_at_the_bound() {
    let mock = MockBmc::start().await;
    root(&mock);
    // No Content-Length, and it never ends: only the bound can stop the read.
    mock.on("GET", "/redfish/v1/Systems", vec![stream(&"x".repeat(8192), None)]);
    let started = Instant::now();
    let e = client_for(&mock).power_state().await.unwrap_err();
    assert_too_large(&e, &mock, None);
    // The request timeout is 10 s; stopping at the bound is immediate.
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[tokio::test]
async fn body_three_times_the_bound_is_refused() {
    let mock = MockBmc::start().await;
    root(&mock);
    let chunk = "y".repeat(8192);
    let times = 3 * LIMIT as usize / chunk.len();
    mock.on("GET", "/redfish/v1/Systems", vec![stream(&chunk, Some(times))]);
    let e = client_for(&mock).power_state().await.unwrap_err();
    assert_too_large(&e, &mock, Some(3 * LIMIT));
}

#[tokio::test]
async fn body_under_the_bound_is_read() {
    let mock = MockBmc::start().await;
    root(&mock);
    // A collection padded to just under the bound.
    let padding = "z".repeat(LIMIT as usize - 200);
    mock.on(
        "GET",
        "/redfish/v1/Systems",
        vec![json(200, j!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}], "Description": padding}))],
    );
    mock.on("GET", "/redfish/v1/Systems/1", vec![json(200, j!({"PowerState": "On"}))]);
    assert_eq!(client_for(&mock).power_state().await.unwrap().as_deref(), Some("On"));
}

#[test]
fn default_bound_is_32_mib() {
    assert_eq!(ClientOptions::default().max_body_bytes, 32 * 1024 * 1024);
}
