//! Explored reports on both backends: a failed exploration keeps the last good report, a success
//! clears the error, lookups by any form of the address, by machine, and the list; members whose
//! version is not reported keep their reason and the text as sent.

use crate::common;

use common::Ctx;
use hostfw_model::{BmcAddress, BmcLookup, InventoryMember, InventoryReport, UnknownVersion};

fn addr(text: &str) -> BmcAddress {
    text.parse().unwrap()
}

fn look(text: &str) -> BmcLookup {
    text.parse().unwrap()
}

fn inventory(bios: &str) -> InventoryReport {
    InventoryReport {
        vendor: "Dell".to_owned(),
        model: "PowerEdge R760".to_owned(),
        serial: Some("SN1".to_owned()),
        power_state: Some("On".to_owned()),
        members: vec![
            InventoryMember {
                id: "BIOS".to_owned(),
                name: Some("BIOS".to_owned()),
                version: bios.to_owned(),
                version_raw: None,
                version_unknown: None,
                odata_id: "/redfish/v1/UpdateService/FirmwareInventory/BIOS".to_owned(),
                staged_version: None,
            },
            InventoryMember {
                id: "BMC".to_owned(),
                name: None,
                version: "7.00".to_owned(),
                version_raw: None,
                version_unknown: None,
                odata_id: "/redfish/v1/UpdateService/FirmwareInventory/BMC".to_owned(),
                staged_version: None,
            },
        ],
    }
}

async fn error_keeps_last_good_report(Ctx { store, .. }: Ctx) {
    assert_eq!(store.report_get(&look("10.0.0.1:443")).await.unwrap(), None);

    store.report_put(&addr("10.0.0.1:443"), Some("m-1"), &Ok(inventory("2.3.5"))).await.unwrap();
    let first = store.report_get(&look("10.0.0.1:443")).await.unwrap().unwrap();
    assert_eq!(first.report, Some(inventory("2.3.5")));
    assert_eq!(first.error, None);
    assert_eq!(first.machine_id.as_deref(), Some("m-1"));
    assert!(first.explored_at_ms > 0);

    store.report_put(&addr("10.0.0.1:443"), None, &Err("connection refused".to_owned())).await.unwrap();
    let failed = store.report_get(&look("10.0.0.1:443")).await.unwrap().unwrap();
    assert_eq!(failed.report, Some(inventory("2.3.5")), "last good report kept");
    assert_eq!(failed.error.as_deref(), Some("connection refused"));
    assert_eq!(failed.machine_id.as_deref(), Some("m-1"), "None keeps the machine id");
    assert!(failed.explored_at_ms >= first.explored_at_ms);

    store.report_put(&addr("10.0.0.1:443"), Some("m-1"), &Ok(inventory("2.4.0"))).await.unwrap();
    let ok = store.report_get(&look("10.0.0.1:443")).await.unwrap().unwrap();
    assert_eq!(ok.report, Some(inventory("2.4.0")));
    assert_eq!(ok.error, None, "success clears the error");

    let json = serde_json::to_string(&ok).unwrap();
    assert_eq!(serde_json::from_str::<hostfw_store::ExploredReport>(&json).unwrap(), ok);
}

async fn first_exploration_failing(Ctx { store, .. }: Ctx) {
    store.report_put(&addr("10.0.0.9"), None, &Err("timeout".to_owned())).await.unwrap();
    let r = store.report_get(&look("10.0.0.9")).await.unwrap().unwrap();
    assert_eq!((r.report, r.error.as_deref(), r.machine_id), (None, Some("timeout"), None));
}

async fn lookups_by_address_and_machine(Ctx { store, .. }: Ctx) {
    store.report_put(&addr("10.0.0.1"), Some("plain"), &Ok(inventory("1"))).await.unwrap();
    store.report_put(&addr("10.0.0.2:8443"), Some("ported"), &Ok(inventory("2"))).await.unwrap();
    store.report_put(&addr("http://127.0.0.1:9001"), Some("sim-a"), &Ok(inventory("3"))).await.unwrap();
    store.report_put(&addr("http://127.0.0.1:9002"), Some("sim-b"), &Ok(inventory("4"))).await.unwrap();

    let who = |r: Option<hostfw_store::ExploredReport>| r.and_then(|r| r.machine_id);
    assert_eq!(who(store.report_get(&look("10.0.0.1")).await.unwrap()).as_deref(), Some("plain"));
    assert_eq!(who(store.report_get(&look("10.0.0.1:443")).await.unwrap()).as_deref(), Some("plain"));
    assert_eq!(who(store.report_get(&look("10.0.0.2")).await.unwrap()).as_deref(), Some("ported"));
    assert_eq!(who(store.report_get(&look("127.0.0.1")).await.unwrap()), None, "ambiguous");
    assert_eq!(
        who(store.report_get(&look("127.0.0.1:9002")).await.unwrap()).as_deref(),
        Some("sim-b"),
        "no scheme written: the http listener is found"
    );
    assert_eq!(who(store.report_get(&look("HTTP://127.0.0.1:9002/")).await.unwrap()).as_deref(), Some("sim-b"));
    assert_eq!(
        who(store.report_get(&look("https://127.0.0.1:9002")).await.unwrap()),
        None,
        "a written scheme is taken at its word"
    );

    let by_machine = store.report_for_machine("ported").await.unwrap().unwrap();
    assert_eq!(by_machine.bmc_address.to_string(), "https://10.0.0.2:8443");
    assert_eq!(by_machine.report.unwrap().members[0].version, "2");
    assert_eq!(store.report_for_machine("ghost").await.unwrap(), None);

    let all: Vec<_> = store.report_list().await.unwrap().into_iter().map(|r| r.bmc_address.to_string()).collect();
    assert_eq!(
        all,
        ["http://127.0.0.1:9001", "http://127.0.0.1:9002", "https://10.0.0.1:443", "https://10.0.0.2:8443"]
    );
}

async fn unknown_versions_keep_their_reason(Ctx { store, .. }: Ctx) {
    let path = |id: &str| format!("/redfish/v1/UpdateService/FirmwareInventory/{id}");
    let report = InventoryReport {
        members: vec![
            InventoryMember::reported("BMC", path("BMC"), None, Some("Enabled")),
            InventoryMember::reported("Backup_BIOS", path("Backup_BIOS"), Some("Not Present"), None),
            InventoryMember::reported("GPU_2", path("GPU_2"), Some("97.00.6C.00.03"), Some("Absent")),
            InventoryMember::reported("BIOS", path("BIOS"), Some("2.3.5 "), Some("Enabled")),
        ],
        ..inventory("unused")
    };
    store.report_put(&addr("10.0.0.7"), Some("m-7"), &Ok(report.clone())).await.unwrap();
    let back = store.report_get(&look("10.0.0.7")).await.unwrap().unwrap().report.unwrap();
    assert_eq!(back, report);
    let reasons: Vec<_> = back.members.iter().map(|m| m.version_unknown.clone()).collect();
    assert_eq!(
        reasons,
        [
            Some(UnknownVersion::Missing),
            Some(UnknownVersion::Placeholder),
            Some(UnknownVersion::State { state: "Absent".into() }),
            None
        ]
    );
    assert_eq!(back.members[3].known_version(), Some("2.3.5"));
    assert_eq!(back.members[3].raw_version(), "2.3.5 ");
}

/// Many reports at once (more than one statement's worth): each stored as `report_put` would, an
/// error cleared, the machine id kept when not given.
async fn many_reports_at_once(Ctx { store, .. }: Ctx) {
    store.report_put(&addr("10.1.0.1"), Some("m1"), &Err("timed out".to_owned())).await.unwrap();
    let batch: Vec<(BmcAddress, Option<String>, InventoryReport)> = (1..=1200)
        .map(|i| {
            (
                addr(&format!("10.1.{}.{}", i / 256, i % 256)),
                (i != 1).then(|| format!("m{i}")),
                inventory(&format!("2.{i}")),
            )
        })
        .collect();
    store.reports_put_many(&batch).await.unwrap();
    let all = store.report_list().await.unwrap();
    assert_eq!(all.len(), 1200);
    let first = store.report_get(&look("10.1.0.1")).await.unwrap().expect("stored");
    assert_eq!(first.machine_id.as_deref(), Some("m1"), "machine id kept");
    assert_eq!(first.error, None, "error cleared");
    assert_eq!(first.report, Some(inventory("2.1")));
    let last = store.report_get(&look("10.1.4.176")).await.unwrap().expect("stored");
    assert_eq!(last.machine_id.as_deref(), Some("m1200"));
    assert_eq!(last.report.unwrap().members[0].version, "2.1200");
}

both_backends!(
    many_reports_at_once,
    unknown_versions_keep_their_reason,
    error_keeps_last_good_report,
    first_exploration_failing,
    lookups_by_address_and_machine
);
