//! `machine maintenance --enter|--exit`: audited, recorded in the host's history, honoured by the
//! gates (a maintenance host takes a slot and is never selected), and no request is ever created
//! for a host in maintenance. Every refusal changes nothing.

use crate::common::{json, r760_report, Site};

/// m1 and m2 explored with a drifted BMC, ceiling 2, no canary waves (both may start at once).
async fn site() -> Site {
    let site = Site::new();
    site.reconfigure(|toml| {
        toml.machine_updater("max_concurrent_machine_updates_absolute", 2)
            .machine_updater("canary_waves", Vec::<String>::new())
    });
    site.add_machines(&["m1", "m2"]).await;
    let store = site.store().await;
    for (i, id) in ["m1", "m2"].iter().enumerate() {
        let report = r760_report((Some("7.00.00.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
        store.report_put(&format!("10.0.0.{}:443", i + 1).parse().unwrap(), Some(id), &Ok(report)).await.unwrap();
    }
    store.close().await;
    site
}

#[tokio::test]
async fn a_host_in_maintenance_takes_a_slot_and_is_never_selected() {
    let site = site().await;
    let out = site.ok(&["machine", "maintenance", "--machine", "m1", "--enter", "--reason", "DIMM swap"]).await;
    assert!(out.contains("m1 is in maintenance"), "{out}");
    let plan = json(&site.ok(&["--format", "json", "plan"]).await);
    assert_eq!(plan["in_flight"], 1, "the maintenance host takes a slot: {plan}");
    assert_eq!(plan["start"], serde_json::json!(["m2"]), "{plan}");
    let skipped = plan["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["machine_id"] == "m1" && s["reason"].to_string().contains("Maintenance")),
        "{plan}"
    );

    // No request can be created for it, by anyone.
    let store = site.store().await;
    let new = hostfw_store::NewRequest {
        machine_id: "m1".into(),
        initiator: "Automated".into(),
        update_message: None,
        workflow_id: None,
    };
    let err = store.request_create(&new).await.unwrap_err().to_string();
    assert!(err.contains("m1 is in maintenance"), "{err}");
    assert!(store.request_get("m1").await.unwrap().is_none());
    store.close().await;

    let out = site.ok(&["--format", "json", "machine", "maintenance", "m1", "--exit"]).await;
    assert_eq!(json(&out)["state"], "Ready", "{out}");
    let plan = json(&site.ok(&["--format", "json", "plan"]).await);
    assert_eq!(plan["start"], serde_json::json!(["m1", "m2"]), "{plan}");

    let store = site.store().await;
    let history = store.history_list("m1", 10).await.unwrap();
    let audit = store.audit_list(10).await.unwrap();
    store.close().await;
    assert!(history[1].message.contains("maintenance entered by cli:") && history[1].message.ends_with("DIMM swap"));
    assert_eq!(history[1].state, hostfw_model::HostState::Maintenance);
    assert!(history[0].message.contains("maintenance left by cli:"), "{history:?}");
    assert_eq!(audit[0].action, "machine maintenance --exit");
    assert_eq!((audit[1].action.as_str(), audit[1].detail.as_str()), ("machine maintenance --enter", "DIMM swap"));
}

#[tokio::test]
async fn refusals_say_why_and_change_nothing() {
    let site = site().await;
    let before = site.audit_count().await;
    let err = site.fails(&["machine", "maintenance", "--machine", "m1", "--exit"]).await;
    assert!(err.contains("machine m1 is not in maintenance (it is Ready); nothing was changed"), "{err}");
    let err = site.fails(&["machine", "maintenance", "--machine", "ghost", "--enter"]).await;
    assert!(err.contains("machine ghost is not registered"), "{err}");
    assert_eq!(site.audit_count().await, before);

    // A host with a request (started or not) stays in the update's hands.
    let store = site.store().await;
    let new = hostfw_store::NewRequest {
        machine_id: "m2".into(),
        initiator: "AdminCli".into(),
        update_message: None,
        workflow_id: None,
    };
    store.request_create(&new).await.unwrap();
    store.close().await;
    let err = site.fails(&["machine", "maintenance", "--machine", "m2", "--enter"]).await;
    assert!(err.contains("m2 has a reprovisioning request (AdminCli, not started)"), "{err}");
    site.ok(&["machine", "maintenance", "--machine", "m1", "--enter"]).await;
    let err = site.fails(&["machine", "maintenance", "--machine", "m1", "--enter"]).await;
    assert!(err.contains("already in maintenance"), "{err}");
    let store = site.store().await;
    assert_eq!(store.machine_get("m2").await.unwrap().unwrap().state, hostfw_model::HostState::Ready);
    store.close().await;
}
