//! Machines table on both backends: upsert/get/list/count, BMC address lookup, state changes with
//! history in one transaction, overrides, NotFound and Conflict errors.

mod common;

use common::Ctx;
use hostfw_store::{NewMachine, Store, StoreError};

fn new_machine(id: &str, bmc: &str) -> NewMachine {
    NewMachine {
        id: id.to_owned(),
        bmc_address: bmc.to_owned(),
        vendor: Some("Dell".to_owned()),
        model: Some("PowerEdge R760".to_owned()),
        state: "Ready".to_owned(),
        instance_id: None,
    }
}

async fn upsert_get_list_count(Ctx { store, .. }: Ctx) {
    assert_eq!(store.machine_count().await.unwrap(), 0);
    assert_eq!(store.machine_get("m-2").await.unwrap(), None);

    store
        .machine_upsert(&new_machine("m-2", "10.0.0.2"))
        .await
        .unwrap();
    store
        .machine_upsert(&new_machine("m-1", "10.0.0.1"))
        .await
        .unwrap();
    assert_eq!(store.machine_count().await.unwrap(), 2);

    let m = store.machine_get("m-2").await.unwrap().expect("m-2 stored");
    assert_eq!(m.bmc_address, "10.0.0.2");
    assert_eq!(m.vendor.as_deref(), Some("Dell"));
    assert_eq!(m.state, "Ready");
    assert_eq!(m.substate, None);
    assert_eq!(m.auto_update, None);
    assert_eq!((m.window_start_ms, m.window_end_ms), (None, None));
    assert!(m.created_at_ms > 0 && m.updated_at_ms >= m.created_at_ms);

    let ids: Vec<_> = store
        .machine_list()
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["m-1", "m-2"], "ordered by id");

    // Substate survives an upsert that keeps the state; vendor/model None keep stored values.
    store
        .machine_set_state("m-2", "Ready", Some("Idle"), "test")
        .await
        .unwrap();
    let update = NewMachine {
        bmc_address: "10.0.0.22:443".to_owned(),
        vendor: None,
        model: None,
        instance_id: Some("inst-1".to_owned()),
        ..new_machine("m-2", "")
    };
    store.machine_upsert(&update).await.unwrap();
    let m2 = store.machine_get("m-2").await.unwrap().unwrap();
    assert_eq!(m2.bmc_address, "10.0.0.22:443");
    assert_eq!(m2.vendor.as_deref(), Some("Dell"));
    assert_eq!(m2.model.as_deref(), Some("PowerEdge R760"));
    assert_eq!(m2.instance_id.as_deref(), Some("inst-1"));
    assert_eq!(m2.substate.as_deref(), Some("Idle"));
    assert_eq!(m2.created_at_ms, m.created_at_ms);

    // A state change through upsert clears the substate; instance is always written.
    store
        .machine_upsert(&NewMachine {
            state: "Assigned".to_owned(),
            instance_id: None,
            ..update.clone()
        })
        .await
        .unwrap();
    let m2 = store.machine_get("m-2").await.unwrap().unwrap();
    assert_eq!(
        (
            m2.state.as_str(),
            m2.substate.as_deref(),
            m2.instance_id.as_deref()
        ),
        ("Assigned", None, None)
    );
    assert_eq!(store.machine_count().await.unwrap(), 2);

    // Serde round trip of the row type.
    let json = serde_json::to_string(&m2).unwrap();
    assert_eq!(
        serde_json::from_str::<hostfw_store::Machine>(&json).unwrap(),
        m2
    );
}

async fn bmc_address_conflict(Ctx { store, .. }: Ctx) {
    store
        .machine_upsert(&new_machine("a", "10.1.0.1"))
        .await
        .unwrap();
    let err = store
        .machine_upsert(&new_machine("b", "10.1.0.1"))
        .await
        .unwrap_err();
    match err {
        StoreError::Conflict { op, id, .. } => {
            assert_eq!((op, id.as_str()), ("machine_upsert", "b"))
        }
        other => panic!("expected Conflict, got {other:?}"),
    }
    assert_eq!(store.machine_get("b").await.unwrap(), None);
}

async fn by_bmc_ip_and_ip_port(Ctx { store, .. }: Ctx) {
    for (id, bmc) in [
        ("plain", "10.0.0.1"),
        ("ported", "10.0.0.2:8443"),
        ("ten", "10.0.0.10:443"),
        ("sim-a", "127.0.0.1:9001"),
        ("sim-b", "127.0.0.1:9002"),
    ] {
        store.machine_upsert(&new_machine(id, bmc)).await.unwrap();
    }
    let find = |bmc: &'static str| {
        let store: Store = store.clone();
        async move { store.machine_by_bmc(bmc).await.unwrap().map(|m| m.id) }
    };
    assert_eq!(find("10.0.0.1").await.as_deref(), Some("plain"), "exact ip");
    assert_eq!(
        find("10.0.0.1:443").await.as_deref(),
        Some("plain"),
        "ip:port finds the bare ip"
    );
    assert_eq!(
        find("10.0.0.2:8443").await.as_deref(),
        Some("ported"),
        "exact ip:port"
    );
    assert_eq!(
        find("10.0.0.2").await.as_deref(),
        Some("ported"),
        "ip finds the only ip:port"
    );
    assert_eq!(
        find("10.0.0.10").await.as_deref(),
        Some("ten"),
        "prefix is ip + ':' (not 10.0.0.1)"
    );
    assert_eq!(
        find("10.0.0.2:9999").await,
        None,
        "other port is another BMC"
    );
    assert_eq!(
        find("127.0.0.1").await,
        None,
        "ambiguous: two ports on one ip"
    );
    assert_eq!(find("127.0.0.1:9002").await.as_deref(), Some("sim-b"));
    assert_eq!(find("10.9.9.9").await, None);
}

async fn set_state_writes_history(Ctx { store, .. }: Ctx) {
    store
        .machine_upsert(&new_machine("m", "10.2.0.1"))
        .await
        .unwrap();
    assert!(store.history_list("m", 10).await.unwrap().is_empty());

    store
        .machine_set_state(
            "m",
            "HostReprovision",
            Some("CheckingFirmwareV2"),
            "update requested",
        )
        .await
        .unwrap();
    store
        .machine_set_state(
            "m",
            "HostReprovision",
            Some("WaitingForFirmwareUpgrade"),
            "uploading BIOS",
        )
        .await
        .unwrap();
    store
        .machine_set_state("m", "Ready", None, "done")
        .await
        .unwrap();

    let m = store.machine_get("m").await.unwrap().unwrap();
    assert_eq!((m.state.as_str(), m.substate.as_deref()), ("Ready", None));

    let h = store.history_list("m", 10).await.unwrap();
    let seen: Vec<_> = h
        .iter()
        .map(|e| {
            (
                e.seq,
                e.state.as_str(),
                e.substate.as_deref(),
                e.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (3, "Ready", None, "done"),
            (
                2,
                "HostReprovision",
                Some("WaitingForFirmwareUpgrade"),
                "uploading BIOS"
            ),
            (
                1,
                "HostReprovision",
                Some("CheckingFirmwareV2"),
                "update requested"
            ),
        ],
        "newest first"
    );
    assert!(h.iter().all(|e| e.machine_id == "m" && e.at_ms > 0));
    assert_eq!(store.history_list("m", 2).await.unwrap().len(), 2, "limit");
    assert_eq!(store.history_list("m", 2).await.unwrap()[0].seq, 3);
    assert!(store.history_list("other", 10).await.unwrap().is_empty());
}

async fn set_state_unknown_machine_is_not_found(Ctx { store, .. }: Ctx) {
    let err = store
        .machine_set_state("ghost", "Ready", None, "x")
        .await
        .unwrap_err();
    match &err {
        StoreError::NotFound { what, id } => assert_eq!((*what, id.as_str()), ("machine", "ghost")),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert!(err.is_not_found());
    assert!(!err.is_transient());
    assert!(
        store.history_list("ghost", 10).await.unwrap().is_empty(),
        "no history without a machine"
    );
}

async fn concurrent_state_changes_keep_history_consistent(Ctx { store, .. }: Ctx) {
    store
        .machine_upsert(&new_machine("busy", "10.3.0.1"))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .machine_set_state(
                        "busy",
                        "HostReprovision",
                        Some(&format!("step-{i}")),
                        "race",
                    )
                    .await
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let h = store.history_list("busy", 100).await.unwrap();
    let seqs: Vec<i64> = h.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=20).rev().collect::<Vec<_>>());
    // The row shows the substate of the newest history entry.
    let m = store.machine_get("busy").await.unwrap().unwrap();
    assert_eq!(m.substate, h[0].substate);
}

async fn overrides(Ctx { store, .. }: Ctx) {
    store
        .machine_upsert(&new_machine("o", "10.4.0.1"))
        .await
        .unwrap();
    store
        .machine_set_auto_update("o", Some(false))
        .await
        .unwrap();
    store
        .machine_set_update_window("o", Some((1_000, 2_000)))
        .await
        .unwrap();
    let m = store.machine_get("o").await.unwrap().unwrap();
    assert_eq!(m.auto_update, Some(false));
    assert_eq!(
        (m.window_start_ms, m.window_end_ms),
        (Some(1_000), Some(2_000))
    );

    // Upsert leaves overrides alone.
    store
        .machine_upsert(&new_machine("o", "10.4.0.1"))
        .await
        .unwrap();
    assert_eq!(
        store.machine_get("o").await.unwrap().unwrap().auto_update,
        Some(false)
    );

    store
        .machine_set_auto_update("o", Some(true))
        .await
        .unwrap();
    assert_eq!(
        store.machine_get("o").await.unwrap().unwrap().auto_update,
        Some(true)
    );
    store.machine_set_auto_update("o", None).await.unwrap();
    store.machine_set_update_window("o", None).await.unwrap();
    let m = store.machine_get("o").await.unwrap().unwrap();
    assert_eq!(
        (m.auto_update, m.window_start_ms, m.window_end_ms),
        (None, None, None)
    );

    assert!(matches!(
        store.machine_set_update_window("o", Some((5, 1))).await,
        Err(StoreError::Invalid {
            op: "machine_set_update_window",
            ..
        })
    ));
    assert!(store
        .machine_set_auto_update("ghost", Some(true))
        .await
        .unwrap_err()
        .is_not_found());
    assert!(store
        .machine_set_update_window("ghost", None)
        .await
        .unwrap_err()
        .is_not_found());
}

both_backends!(
    upsert_get_list_count,
    bmc_address_conflict,
    by_bmc_ip_and_ip_port,
    set_state_writes_history,
    set_state_unknown_machine_is_not_found,
    concurrent_state_changes_keep_history_consistent,
    overrides,
);
