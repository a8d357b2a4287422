//! Machines table on both backends: upsert/get/list/count, registration (one BMC is one machine,
//! batches all or nothing), BMC address lookup in any form, state changes with history in one
//! transaction, overrides, NotFound and BmcAddressTaken errors.

use crate::common;

use common::Ctx;
use hostfw_model::BmcLookup;
use hostfw_model::{HostState, HostSubstate, TimeWindow};
use hostfw_store::{NewMachine, Store, StoreError};

fn new_machine(id: &str, bmc: &str) -> NewMachine {
    NewMachine {
        id: id.to_owned(),
        bmc_address: bmc.parse().unwrap(),
        vendor: Some("Dell".to_owned()),
        model: Some("PowerEdge R760".to_owned()),
        state: hostfw_model::HostState::Ready,
        instance_id: None,
        labels: None,
    }
}

async fn upsert_get_list_count(Ctx { store, .. }: Ctx) {
    assert_eq!(store.machine_count().await.unwrap(), 0);
    assert_eq!(store.machine_get("m-2").await.unwrap(), None);

    store.machine_upsert(&new_machine("m-2", "10.0.0.2")).await.unwrap();
    store.machine_upsert(&new_machine("m-1", "10.0.0.1")).await.unwrap();
    assert_eq!(store.machine_count().await.unwrap(), 2);

    let m = store.machine_get("m-2").await.unwrap().expect("m-2 stored");
    assert_eq!(m.bmc_address.to_string(), "https://10.0.0.2:443");
    assert_eq!(m.vendor.as_deref(), Some("Dell"));
    assert_eq!(m.state, hostfw_model::HostState::Ready);
    assert_eq!(m.substate, None);
    assert_eq!(m.auto_update, None);
    assert_eq!(m.window, None);
    assert!(m.created_at_ms > 0 && m.updated_at_ms >= m.created_at_ms);

    let ids: Vec<_> = store.machine_list().await.unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["m-1", "m-2"], "ordered by id");

    // Substate survives an upsert that keeps the state; vendor/model None keep stored values.
    store.machine_set_state("m-2", HostState::Ready, Some(HostSubstate::CheckingFirmwareV2), "test").await.unwrap();
    let update = NewMachine {
        bmc_address: "10.0.0.22:443".parse().unwrap(),
        vendor: None,
        model: None,
        instance_id: Some("inst-1".to_owned()),
        ..new_machine("m-2", "10.0.0.2")
    };
    store.machine_upsert(&update).await.unwrap();
    let m2 = store.machine_get("m-2").await.unwrap().unwrap();
    assert_eq!(m2.bmc_address.to_string(), "https://10.0.0.22:443");
    assert_eq!(m2.vendor.as_deref(), Some("Dell"));
    assert_eq!(m2.model.as_deref(), Some("PowerEdge R760"));
    assert_eq!(m2.instance_id.as_deref(), Some("inst-1"));
    assert_eq!(m2.substate, Some(HostSubstate::CheckingFirmwareV2));
    assert_eq!(m2.created_at_ms, m.created_at_ms);

    // A state change through upsert clears the substate; instance is always written.
    store
        .machine_upsert(&NewMachine { state: hostfw_model::HostState::Assigned, instance_id: None, ..update.clone() })
        .await
        .unwrap();
    let m2 = store.machine_get("m-2").await.unwrap().unwrap();
    assert_eq!(
        (m2.state.as_str(), m2.substate.map(|s| s.as_str()), m2.instance_id.as_deref()),
        ("Assigned", None, None)
    );
    assert_eq!(store.machine_count().await.unwrap(), 2);

    // Serde round trip of the row type.
    let json = serde_json::to_string(&m2).unwrap();
    assert_eq!(serde_json::from_str::<hostfw_store::Machine>(&json).unwrap(), m2);
}

async fn bmc_address_conflict(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("a", "10.1.0.1")).await.unwrap();
    let err = store.machine_upsert(&new_machine("b", "10.1.0.1")).await.unwrap_err();
    match err {
        StoreError::BmcAddressTaken { machine, address, owner, owned } => assert_eq!(
            (machine.as_str(), address.as_str(), owner.as_str(), owned.as_str()),
            ("b", "https://10.1.0.1:443", "a", "https://10.1.0.1:443")
        ),
        other => panic!("expected BmcAddressTaken, got {other:?}"),
    }
    assert_eq!(store.machine_get("b").await.unwrap(), None);
}

/// Every spelling of one BMC is one BMC: a second machine on it is refused, whichever form it
/// was written in (and whichever scheme: one host:port listener is one BMC); nothing is written.
async fn one_bmc_in_any_form_is_one_machine(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("owner", "http://10.3.0.1:8000")).await.unwrap();
    for (id, form) in [
        ("dup-1", "http://10.3.0.1:8000/"),
        ("dup-2", "HTTP://10.3.0.1:8000"),
        ("dup-3", "https://10.3.0.1:8000"),
        ("dup-4", "10.3.0.1:8000"),
    ] {
        match store.machine_upsert(&new_machine(id, form)).await {
            Err(StoreError::BmcAddressTaken { machine, owner, owned, .. }) => {
                assert_eq!(
                    (machine.as_str(), owner.as_str(), owned.as_str()),
                    (id, "owner", "http://10.3.0.1:8000"),
                    "{form}"
                )
            }
            other => panic!("{form}: expected BmcAddressTaken, got {other:?}"),
        }
        assert_eq!(store.machine_get(id).await.unwrap(), None, "{form}: nothing written");
    }
    // Re-registering the owner with its own address (any spelling) is a refresh.
    store.machine_upsert(&new_machine("owner", "HTTP://10.3.0.1:8000/")).await.unwrap();
    assert_eq!(store.machine_count().await.unwrap(), 1);
    // Another port is another BMC.
    store.machine_upsert(&new_machine("other", "http://10.3.0.1:8001")).await.unwrap();
    assert_eq!(store.machine_count().await.unwrap(), 2);
}

/// A batch is registered whole or not at all: a BMC clash inside the batch or with a stored
/// machine leaves every row (and every login) as it was.
async fn register_batch_is_all_or_nothing(Ctx { store, .. }: Ctx) {
    use hostfw_store::{Credentials, Registration};
    let reg = |id: &str, bmc: &str| Registration {
        machine: new_machine(id, bmc),
        login: Some(Credentials { username: format!("u-{id}"), password: "pw".into() }),
        keep_state: false,
    };
    store.machines_register(&[reg("a", "http://10.4.0.1:80"), reg("b", "http://10.4.0.2:80")]).await.unwrap();
    assert_eq!(store.machine_count().await.unwrap(), 2);
    assert_eq!(store.credentials_get("b").await.unwrap().unwrap().username, "u-b");
    // Idempotent: the same batch again, spelled differently, changes nothing.
    store.machines_register(&[reg("a", "http://10.4.0.1"), reg("b", "http://10.4.0.2:80/")]).await.unwrap();
    assert_eq!(store.machine_count().await.unwrap(), 2);

    // Inside the batch: c and d are one BMC.
    let e = store.machines_register(&[reg("c", "http://10.4.0.3:80"), reg("d", "HTTP://10.4.0.3/")]).await.unwrap_err();
    assert!(
        matches!(&e, StoreError::BmcAddressTaken { machine, owner, .. } if machine == "d" && owner == "c"),
        "{e:?}"
    );
    // Against a stored machine, after rows of the batch were already written in the transaction.
    let e = store
        .machines_register(&[
            reg("c", "http://10.4.0.3:80"),
            reg("a", "http://10.4.0.9:80"),
            reg("e", "http://10.4.0.2"),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(&e, StoreError::BmcAddressTaken { machine, owner, .. } if machine == "e" && owner == "b"),
        "{e:?}"
    );
    // ... and over the other scheme (checked after the row was written).
    let e =
        store.machines_register(&[reg("c", "http://10.4.0.3:80"), reg("f", "https://10.4.0.2:80")]).await.unwrap_err();
    assert!(
        matches!(&e, StoreError::BmcAddressTaken { machine, owner, .. } if machine == "f" && owner == "b"),
        "{e:?}"
    );
    assert_eq!(store.machine_count().await.unwrap(), 2, "nothing of a refused batch is written");
    assert_eq!(store.machine_get("a").await.unwrap().unwrap().bmc_address.to_string(), "http://10.4.0.1:80");
    assert_eq!(store.credentials_get("c").await.unwrap(), None);
}

async fn by_bmc_in_any_form(Ctx { store, .. }: Ctx) {
    for (id, bmc) in [
        ("plain", "10.0.0.1"),
        ("ported", "https://10.0.0.2:8443"),
        ("ten", "10.0.0.10:443"),
        ("sim-a", "http://127.0.0.1:9001"),
        ("sim-b", "http://127.0.0.1:9002"),
        ("prefixed", "http://127.0.0.5:9000/bmc/h1"),
    ] {
        store.machine_upsert(&new_machine(id, bmc)).await.unwrap();
    }
    let find = |bmc: &'static str| {
        let store: Store = store.clone();
        async move {
            let lookup: BmcLookup = bmc.parse().unwrap();
            store.machine_by_bmc(&lookup).await.unwrap().map(|m| m.id)
        }
    };
    for form in ["10.0.0.1", "10.0.0.1:443", "https://10.0.0.1", "HTTPS://10.0.0.1:443/"] {
        assert_eq!(find(form).await.as_deref(), Some("plain"), "{form}");
    }
    assert_eq!(find("10.0.0.2:8443").await.as_deref(), Some("ported"), "ip:port");
    assert_eq!(find("10.0.0.2").await.as_deref(), Some("ported"), "ip finds the only BMC on that ip");
    assert_eq!(find("10.0.0.10").await.as_deref(), Some("ten"), "host match is ip + ':' (not 10.0.0.1)");
    assert_eq!(find("10.0.0.2:9999").await, None, "other port is another BMC");
    assert_eq!(find("http://10.0.0.2:8443").await, None, "a written scheme is taken at its word");
    // A sim BMC registered over http: found without writing the scheme, with or without slash.
    assert_eq!(find("127.0.0.1:9002").await.as_deref(), Some("sim-b"));
    assert_eq!(find("http://127.0.0.1:9002/").await.as_deref(), Some("sim-b"));
    assert_eq!(find("127.0.0.1").await, None, "ambiguous: two ports on one ip");
    assert_eq!(find("http://127.0.0.5:9000/bmc/h1/").await.as_deref(), Some("prefixed"));
    assert_eq!(find("127.0.0.5").await.as_deref(), Some("prefixed"));
    assert_eq!(find("10.9.9.9").await, None);
}

async fn set_state_writes_history(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("m", "10.2.0.1")).await.unwrap();
    assert!(store.history_list("m", 10).await.unwrap().is_empty());

    store
        .machine_set_state("m", HostState::HostReprovision, Some(HostSubstate::CheckingFirmwareV2), "update requested")
        .await
        .unwrap();
    store
        .machine_set_state(
            "m",
            HostState::HostReprovision,
            Some(HostSubstate::WaitingForFirmwareUpgrade),
            "uploading BIOS",
        )
        .await
        .unwrap();
    store.machine_set_state("m", HostState::Ready, None, "done").await.unwrap();

    let m = store.machine_get("m").await.unwrap().unwrap();
    assert_eq!((m.state.as_str(), m.substate.map(|s| s.as_str())), ("Ready", None));

    let h = store.history_list("m", 10).await.unwrap();
    let seen: Vec<_> =
        h.iter().map(|e| (e.seq, e.state.as_str(), e.substate.map(|s| s.as_str()), e.message.as_str())).collect();
    assert_eq!(
        seen,
        [
            (3, "Ready", None, "done"),
            (2, "HostReprovision", Some("WaitingForFirmwareUpgrade"), "uploading BIOS"),
            (1, "HostReprovision", Some("CheckingFirmwareV2"), "update requested"),
        ],
        "newest first"
    );
    assert!(h.iter().all(|e| e.machine_id == "m" && e.at_ms > 0));
    assert_eq!(store.history_list("m", 2).await.unwrap().len(), 2, "limit");
    assert_eq!(store.history_list("m", 2).await.unwrap()[0].seq, 3);
    assert!(store.history_list("other", 10).await.unwrap().is_empty());
}

async fn set_state_unknown_machine_is_not_found(Ctx { store, .. }: Ctx) {
    let err = store.machine_set_state("ghost", HostState::Ready, None, "x").await.unwrap_err();
    match &err {
        StoreError::NotFound { what, id } => assert_eq!((*what, id.as_str()), ("machine", "ghost")),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert!(err.is_not_found());
    assert!(!err.is_transient());
    assert!(store.history_list("ghost", 10).await.unwrap().is_empty(), "no history without a machine");
}

async fn concurrent_state_changes_keep_history_consistent(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("busy", "10.3.0.1")).await.unwrap();
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .machine_set_state(
                        "busy",
                        HostState::HostReprovision,
                        Some(HostSubstate::ALL[i % HostSubstate::ALL.len()]),
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

/// A state no hostfw writes (an edit by hand) is a corrupt row naming the machine and the value,
/// never a guess.
async fn an_unknown_stored_state_is_reported_corrupt(Ctx { store, url }: Ctx) {
    store.machine_upsert(&new_machine("odd", "10.7.0.1")).await.unwrap();
    let pool = sqlx::AnyPool::connect(&url).await.expect("raw connection");
    sqlx::query("UPDATE machines SET state = 'Provisioning' WHERE id = 'odd'").execute(&pool).await.unwrap();
    pool.close().await;
    let err = store.machine_get("odd").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { id, detail, .. } if id == "odd" && detail.contains("Provisioning")),
        "{err:?}"
    );
}

async fn overrides(Ctx { store, .. }: Ctx) {
    store.machine_upsert(&new_machine("o", "10.4.0.1")).await.unwrap();
    store.machine_set_auto_update("o", Some(false)).await.unwrap();
    store
        .machine_set_update_windows(&["o".to_string()], Some(TimeWindow { start_ms: 1_000, end_ms: 2_000 }))
        .await
        .unwrap();
    let m = store.machine_get("o").await.unwrap().unwrap();
    assert_eq!(m.auto_update, Some(false));
    assert_eq!(m.window, Some(TimeWindow { start_ms: 1_000, end_ms: 2_000 }));

    // Upsert leaves overrides alone.
    store.machine_upsert(&new_machine("o", "10.4.0.1")).await.unwrap();
    assert_eq!(store.machine_get("o").await.unwrap().unwrap().auto_update, Some(false));

    store.machine_set_auto_update("o", Some(true)).await.unwrap();
    assert_eq!(store.machine_get("o").await.unwrap().unwrap().auto_update, Some(true));
    store.machine_set_auto_update("o", None).await.unwrap();
    store.machine_set_update_windows(&["o".to_string()], None).await.unwrap();
    let m = store.machine_get("o").await.unwrap().unwrap();
    assert_eq!((m.auto_update, m.window), (None, None));

    for (start_ms, end_ms) in [(5, 1), (5, 5)] {
        assert!(
            matches!(
                store.machine_set_update_windows(&["o".to_string()], Some(TimeWindow { start_ms, end_ms })).await,
                Err(StoreError::Invalid { op: "machine_set_update_windows", .. })
            ),
            "an empty or reversed window is refused"
        );
    }
    assert!(store.machine_set_auto_update("ghost", Some(true)).await.unwrap_err().is_not_found());
    assert!(store.machine_set_update_windows(&["ghost".to_string()], None).await.unwrap_err().is_not_found());
}

/// Issue 11 finding 15: `machine add` / `machine import` cannot change the state, instance or
/// BMC of a machine being updated (refused, nothing written), and an import (`keep_state`)
/// never resets a known host's state.
async fn a_machine_being_updated_keeps_its_state_instance_and_bmc(Ctx { store, .. }: Ctx) {
    use hostfw_store::{NewRequest, Registration};
    let mut m = new_machine("busy", "https://10.9.0.1");
    m.state = HostState::Assigned;
    m.instance_id = Some("inst-1".into());
    store.machine_upsert(&m).await.unwrap();
    store
        .request_create(&NewRequest {
            machine_id: "busy".into(),
            initiator: "AdminCli".into(),
            update_message: None,
            workflow_id: None,
        })
        .await
        .unwrap();
    let before = store.machine_get("busy").await.unwrap().unwrap();

    // `machine add` as Ready without the instance, or with another BMC: refused.
    let mut ready = new_machine("busy", "https://10.9.0.1");
    ready.state = HostState::Ready;
    assert!(
        matches!(store.machine_upsert(&ready).await, Err(StoreError::MachineBusy { machine }) if machine == "busy")
    );
    let mut moved = m.clone();
    moved.bmc_address = "https://10.9.0.2".parse().unwrap();
    assert!(matches!(store.machine_upsert(&moved).await, Err(StoreError::MachineBusy { .. })));
    // In a batch, nothing of the batch is written.
    let batch = [
        Registration { machine: new_machine("other", "https://10.9.0.3"), login: None, keep_state: false },
        Registration { machine: ready.clone(), login: None, keep_state: false },
    ];
    assert!(matches!(store.machines_register(&batch).await, Err(StoreError::MachineBusy { .. })));
    assert!(store.machine_get("other").await.unwrap().is_none());
    assert_eq!(store.machine_get("busy").await.unwrap().unwrap().state, before.state);

    // The same registration again is a refresh; an import keeps state and instance.
    store.machine_upsert(&m).await.unwrap();
    store.machines_register(&[Registration { machine: ready.clone(), login: None, keep_state: true }]).await.unwrap();
    let after = store.machine_get("busy").await.unwrap().unwrap();
    assert_eq!((after.state.as_str(), after.instance_id.as_deref()), ("Assigned", Some("inst-1")));

    // An import never resets a known idle host either; a new host is registered as given.
    store.request_delete("busy").await.unwrap();
    store.machines_register(&[Registration { machine: ready.clone(), login: None, keep_state: true }]).await.unwrap();
    assert_eq!(store.machine_get("busy").await.unwrap().unwrap().state, hostfw_model::HostState::Assigned);
    // Without a request, `machine add` may change it.
    store.machine_upsert(&ready).await.unwrap();
    assert_eq!(store.machine_get("busy").await.unwrap().unwrap().state, hostfw_model::HostState::Ready);
}

both_backends!(
    an_unknown_stored_state_is_reported_corrupt,
    a_machine_being_updated_keeps_its_state_instance_and_bmc,
    upsert_get_list_count,
    bmc_address_conflict,
    one_bmc_in_any_form_is_one_machine,
    register_batch_is_all_or_nothing,
    by_bmc_in_any_form,
    set_state_writes_history,
    set_state_unknown_machine_is_not_found,
    concurrent_state_changes_keep_history_consistent,
    overrides,
);
