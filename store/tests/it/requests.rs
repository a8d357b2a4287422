//! Reprovision requests on both backends: create never overwrites, unknown machine is NotFound,
//! setters, list order, delete and the atomic "clear if not started".

use crate::common;

use common::Ctx;
use hostfw_store::{ClearOutcome, NewMachine, NewRequest, RequestCreate, Store, StoreError};

async fn machine(store: &Store, id: &str) {
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

fn new_request(machine_id: &str, initiator: &str) -> NewRequest {
    NewRequest {
        machine_id: machine_id.to_owned(),
        initiator: initiator.to_owned(),
        update_message: Some(format!("by {initiator}")),
        workflow_id: Some(format!("host-reprovision/{machine_id}")),
    }
}

async fn create_never_overwrites(Ctx { store, .. }: Ctx) {
    machine(&store, "m").await;
    let created = match store.request_create(&new_request("m", "Automated")).await.unwrap() {
        RequestCreate::Created(r) => r,
        other => panic!("expected Created, got {other:?}"),
    };
    assert_eq!(created.machine_id, "m");
    assert_eq!(created.initiator, "Automated");
    assert_eq!(created.update_message.as_deref(), Some("by Automated"));
    assert_eq!(created.workflow_id.as_deref(), Some("host-reprovision/m"));
    assert_eq!(created.started_at_ms, None);
    assert!(!created.user_approval && !created.reset_requested);
    assert_eq!(created.retry_count, 0);
    assert_eq!(created.manual_upgrade_completed_ms, None);
    assert!(created.requested_at_ms > 0);

    store.request_set_retry_count("m", 2).await.unwrap();
    let existing = match store.request_create(&new_request("m", "AdminCli")).await.unwrap() {
        RequestCreate::Exists(r) => r,
        other => panic!("expected Exists, got {other:?}"),
    };
    assert_eq!(existing.initiator, "Automated", "existing request is not overwritten");
    assert_eq!(existing.retry_count, 2, "existing progress is kept");
    assert_eq!(existing.requested_at_ms, created.requested_at_ms);
    assert_eq!(store.request_get("m").await.unwrap(), Some(existing));
}

async fn create_for_unknown_machine_is_not_found(Ctx { store, .. }: Ctx) {
    match store.request_create(&new_request("ghost", "AdminCli")).await {
        Err(StoreError::NotFound { what: "machine", id }) => assert_eq!(id, "ghost"),
        other => panic!("expected NotFound machine, got {other:?}"),
    }
    assert_eq!(store.request_get("ghost").await.unwrap(), None);
}

async fn setters_list_and_delete(Ctx { store, .. }: Ctx) {
    for id in ["b", "a", "c"] {
        machine(&store, id).await;
        store
            .request_create(&NewRequest { update_message: None, workflow_id: None, ..new_request(id, "Automated") })
            .await
            .unwrap();
        // Distinct request times so "oldest first" is observable.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let order: Vec<_> = store.request_list().await.unwrap().into_iter().map(|r| r.machine_id).collect();
    assert_eq!(order, ["b", "a", "c"], "oldest first");

    store.request_mark_started("a", 1_000).await.unwrap();
    store.request_mark_started("a", 2_000).await.unwrap(); // replay: first start wins
    store.request_set_approval("a", true).await.unwrap();
    store.request_set_retry_count("a", 3).await.unwrap();
    store.request_set_reset_requested("a", true).await.unwrap();
    store.request_mark_manual_upgrade_completed("a", 5_000).await.unwrap();
    store.request_set_workflow_id("a", "wf-a").await.unwrap();
    let a = store.request_get("a").await.unwrap().unwrap();
    assert_eq!(a.started_at_ms, Some(1_000));
    assert!(a.user_approval && a.reset_requested);
    assert_eq!(a.retry_count, 3);
    assert_eq!(a.manual_upgrade_completed_ms, Some(5_000));
    assert_eq!(a.workflow_id.as_deref(), Some("wf-a"));
    assert_eq!(a.update_message, None);
    store.request_set_approval("a", false).await.unwrap();
    assert!(!store.request_get("a").await.unwrap().unwrap().user_approval);

    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(serde_json::from_str::<hostfw_store::Request>(&json).unwrap(), a);

    for res in [
        store.request_mark_started("ghost", 1).await,
        store.request_set_approval("ghost", true).await,
        store.request_set_retry_count("ghost", 1).await,
        store.request_set_reset_requested("ghost", true).await,
        store.request_mark_manual_upgrade_completed("ghost", 1).await,
        store.request_set_workflow_id("ghost", "wf").await,
    ] {
        match res {
            Err(StoreError::NotFound { what: "request", id }) => assert_eq!(id, "ghost"),
            other => panic!("expected NotFound request, got {other:?}"),
        }
    }

    assert!(store.request_delete("b").await.unwrap());
    assert!(!store.request_delete("b").await.unwrap());
    assert_eq!(store.request_get("b").await.unwrap(), None);
    assert_eq!(store.request_list().await.unwrap().len(), 2);
}

async fn delete_if_not_started_refuses_started(Ctx { store, .. }: Ctx) {
    machine(&store, "idle").await;
    machine(&store, "running").await;
    store.request_create(&new_request("idle", "AdminCli")).await.unwrap();
    store.request_create(&new_request("running", "Automated")).await.unwrap();
    store.request_mark_started("running", 42).await.unwrap();

    assert_eq!(store.request_delete_if_not_started("idle").await.unwrap(), ClearOutcome::Cleared);
    assert_eq!(store.request_get("idle").await.unwrap(), None);
    assert_eq!(store.request_delete_if_not_started("idle").await.unwrap(), ClearOutcome::NotFound);

    match store.request_delete_if_not_started("running").await.unwrap() {
        ClearOutcome::AlreadyStarted(r) => {
            assert_eq!((r.machine_id.as_str(), r.started_at_ms), ("running", Some(42)));
        }
        other => panic!("expected AlreadyStarted, got {other:?}"),
    }
    assert!(store.request_get("running").await.unwrap().is_some(), "started request kept");
    assert_eq!(store.request_delete_if_not_started("ghost").await.unwrap(), ClearOutcome::NotFound);
}

async fn concurrent_creates_make_one_request(Ctx { store, .. }: Ctx) {
    machine(&store, "m").await;
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.request_create(&new_request("m", &format!("caller-{i}"))).await })
        })
        .collect();
    let mut created = 0;
    for t in tasks {
        if let RequestCreate::Created(_) = t.await.unwrap().unwrap() {
            created += 1;
        }
    }
    assert_eq!(created, 1, "exactly one caller creates the request");
    assert_eq!(store.request_list().await.unwrap().len(), 1);
}

/// Entering maintenance and creating a request race on many machines at once: never both.
/// Each machine ends either in maintenance with no request, or with a request and not in
/// maintenance (both take the machine's write lock before they read).
async fn maintenance_and_request_never_both(Ctx { store, .. }: Ctx) {
    let ids: Vec<String> = (0..12).map(|i| format!("race-{i}")).collect();
    for id in &ids {
        machine(&store, id).await;
    }
    let mut tasks = Vec::new();
    for id in &ids {
        let (a, b) = (store.clone(), store.clone());
        let (ia, ib) = (id.clone(), id.clone());
        tasks.push(tokio::spawn(async move { a.machine_maintenance(&ia, true, "race").await.map(|_| ()) }));
        tasks.push(tokio::spawn(async move { b.request_create(&new_request(&ib, "Automated")).await.map(|_| ()) }));
    }
    for t in tasks {
        match t.await.unwrap() {
            Ok(()) => {}
            Err(StoreError::Conflict { detail, .. }) => assert!(detail.contains("is in maintenance"), "{detail}"),
            Err(e) => panic!("{e}"),
        }
    }
    for id in &ids {
        let state = store.machine_get(id).await.unwrap().unwrap().state;
        let request = store.request_get(id).await.unwrap();
        assert!(
            (state == hostfw_model::HostState::Maintenance) != request.is_some(),
            "{id}: state {state} with request {request:?}"
        );
    }
}

both_backends!(
    maintenance_and_request_never_both,
    create_never_overwrites,
    create_for_unknown_machine_is_not_found,
    setters_list_and_delete,
    delete_if_not_started_refuses_started,
    concurrent_creates_make_one_request,
);
