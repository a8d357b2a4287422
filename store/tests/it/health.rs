//! Health reports on both backends: put (insert and replace), remove, list, validation, NotFound.

use crate::common;

use common::Ctx;
use hostfw_store::{HealthReport, NewMachine, StoreError};

fn fw_report(machine_id: &str) -> HealthReport {
    HealthReport {
        machine_id: machine_id.to_owned(),
        source: "host-fw-update".to_owned(),
        alert_id: "HostUpdateInProgress".to_owned(),
        message: "Host firmware update".to_owned(),
        classifications: vec!["PreventAllocations".to_owned(), "SuppressExternalAlerting".to_owned()],
    }
}

async fn put_remove_list(Ctx { store, .. }: Ctx) {
    for id in ["m-1", "m-2"] {
        store
            .machine_upsert(&NewMachine {
                id: id.to_owned(),
                bmc_address: format!("bmc-{id}").parse().unwrap(),
                vendor: None,
                model: None,
                state: hostfw_model::HostState::Ready,
                instance_id: None,
                labels: None,
            })
            .await
            .unwrap();
    }
    assert!(store.health_reports_for("m-1").await.unwrap().is_empty());

    store.health_report_put(&fw_report("m-1")).await.unwrap();
    let other = HealthReport {
        source: "bmc-monitor".to_owned(),
        alert_id: "Overheat".to_owned(),
        classifications: vec![],
        ..fw_report("m-1")
    };
    store.health_report_put(&other).await.unwrap();
    store.health_report_put(&fw_report("m-2")).await.unwrap();

    assert_eq!(store.health_reports_for("m-1").await.unwrap(), [other.clone(), fw_report("m-1")], "by source");

    // Same source replaces.
    let replaced = HealthReport { message: "still updating".to_owned(), ..fw_report("m-1") };
    store.health_report_put(&replaced).await.unwrap();
    assert_eq!(store.health_reports_for("m-1").await.unwrap(), [other.clone(), replaced.clone()]);
    assert_eq!(store.health_report_list().await.unwrap(), [other.clone(), replaced, fw_report("m-2")]);

    assert!(store.health_report_remove("m-1", "host-fw-update").await.unwrap());
    assert!(!store.health_report_remove("m-1", "host-fw-update").await.unwrap());
    assert_eq!(store.health_reports_for("m-1").await.unwrap(), [other]);
    assert_eq!(store.health_reports_for("m-2").await.unwrap(), [fw_report("m-2")]);
}

async fn invalid_and_unknown(Ctx { store, .. }: Ctx) {
    match store.health_report_put(&fw_report("ghost")).await {
        Err(StoreError::NotFound { what: "machine", id }) => assert_eq!(id, "ghost"),
        other => panic!("expected NotFound machine, got {other:?}"),
    }
    let bad = HealthReport { classifications: vec!["a,b".to_owned()], ..fw_report("ghost") };
    assert!(matches!(store.health_report_put(&bad).await, Err(StoreError::Invalid { op: "health_report_put", .. })));
    assert!(!store.health_report_remove("ghost", "host-fw-update").await.unwrap());
}

both_backends!(put_remove_list, invalid_and_unknown);
