//! `hostfw config check` against a real Temporal dev server: the namespace the kit starts has
//! hostfw's search attributes (ok), and once one is removed the check FAILs naming it and how to
//! register it. The offline checks (config, catalog, artifacts, database) are covered by the
//! starter's tests.

use clap::Parser;
use hostfw_starter::cli::Cli;
use hostfw_starter::output;
use hostfw_tests::temporal::{DevServer, DevServerOptions};
use hostfw_tests::SiteToml;
use serde_json::Value;
use temporalio_client::grpc::OperatorService;
use temporalio_client::tonic::Request;
use temporalio_common::protos::temporal::api::operatorservice::v1::RemoveSearchAttributesRequest;

/// `(status, detail)` of the check called `name` in `hostfw --format json config check` output.
fn check(report: &Value, name: &str) -> (String, String) {
    let found = report["checks"].as_array().expect("checks").iter().find(|c| c["name"] == name);
    let c = found.unwrap_or_else(|| panic!("no `{name}` check in {report:#}"));
    (c["status"].as_str().unwrap().to_string(), c["detail"].as_str().unwrap().to_string())
}

async fn config_check(config: &std::path::Path) -> (bool, Value) {
    let cli =
        Cli::try_parse_from(["hostfw", "--config", config.to_str().unwrap(), "--format", "json", "config", "check"])
            .expect("parses");
    let (result, out) = output::capture(hostfw_starter::run(cli)).await;
    (result.is_ok(), serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_check_sees_temporal_and_a_missing_search_attribute() {
    let server = DevServer::start(DevServerOptions::default()).await.expect("dev server");
    let dir = tempfile::TempDir::new().unwrap();
    let (config, _) = SiteToml::new("config-check").temporal_port(server.port()).write(dir.path()).expect("config");

    let (_, report) = config_check(&config).await;
    let (status, detail) = check(&report, "temporal");
    assert_eq!(status, "ok", "{detail}");
    let (status, detail) = check(&report, "search attributes");
    assert_eq!(status, "ok", "{detail}");
    assert!(detail.contains("HostfwMachineId") && detail.contains("HostfwRetriesExhausted"), "{detail}");

    let mut client = server.client().clone();
    client
        .remove_search_attributes(Request::new(RemoveSearchAttributesRequest {
            search_attributes: vec!["HostfwComponent".to_string()],
            namespace: "default".to_string(),
        }))
        .await
        .expect("search attribute removed");
    let (ok, report) = config_check(&config).await;
    assert!(!ok, "a missing search attribute fails the check: {report:#}");
    assert_eq!(report["ok"], false);
    let (status, detail) = check(&report, "search attributes");
    assert_eq!(status, "fail");
    assert!(detail.contains("lacks HostfwComponent (Keyword)"), "{detail}");
    assert!(detail.contains("temporal operator search-attribute create"), "{detail}");
    server.shutdown().await;
}
