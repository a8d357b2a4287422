//! Update windows of several machines on both backends: set and clear in one transaction, every
//! unknown id named, nothing written when any id is unknown, start must be before end.

use crate::common;

use common::Ctx;
use hostfw_model::TimeWindow;
use hostfw_store::{NewMachine, Store, StoreError};

async fn register(store: &Store, ids: &[&str]) {
    for (i, id) in ids.iter().enumerate() {
        let m = NewMachine {
            id: (*id).to_owned(),
            bmc_address: format!("10.0.0.{}", i + 1).parse().unwrap(),
            vendor: None,
            model: None,
            state: hostfw_model::HostState::Ready,
            instance_id: None,
            labels: None,
        };
        store.machine_upsert(&m).await.unwrap();
    }
}

async fn window_of(store: &Store, id: &str) -> (Option<i64>, Option<i64>) {
    let m = store.machine_get(id).await.unwrap().expect("machine");
    (m.window.map(|w| w.start_ms), m.window.map(|w| w.end_ms))
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

async fn set_and_clear(Ctx { store, .. }: Ctx) {
    register(&store, &["m-1", "m-2", "m-3"]).await;
    store
        .machine_set_update_windows(&ids(&["m-1", "m-2"]), Some(TimeWindow { start_ms: 1_000, end_ms: 2_000 }))
        .await
        .unwrap();
    assert_eq!(window_of(&store, "m-1").await, (Some(1_000), Some(2_000)));
    assert_eq!(window_of(&store, "m-2").await, (Some(1_000), Some(2_000)));
    assert_eq!(window_of(&store, "m-3").await, (None, None));

    // Duplicates are harmless; clearing touches only the listed machines.
    store.machine_set_update_windows(&ids(&["m-1", "m-1"]), None).await.unwrap();
    assert_eq!(window_of(&store, "m-1").await, (None, None));
    assert_eq!(window_of(&store, "m-2").await, (Some(1_000), Some(2_000)));
    store.machine_set_update_windows(&[], None).await.unwrap();
}

async fn unknown_ids_write_nothing(Ctx { store, .. }: Ctx) {
    register(&store, &["m-1", "m-2"]).await;
    store.machine_set_update_windows(&ids(&["m-2"]), Some(TimeWindow { start_ms: 5, end_ms: 6 })).await.unwrap();
    let err = store
        .machine_set_update_windows(
            &ids(&["m-1", "ghost-a", "m-2", "ghost-b"]),
            Some(TimeWindow { start_ms: 1_000, end_ms: 2_000 }),
        )
        .await
        .unwrap_err();
    match &err {
        StoreError::NotFound { what: "machine", id } => assert_eq!(id, "ghost-a, ghost-b"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    assert_eq!(window_of(&store, "m-1").await, (None, None));
    assert_eq!(window_of(&store, "m-2").await, (Some(5), Some(6)));
    let err = store.machine_set_update_windows(&ids(&["m-1", "ghost"]), None).await.unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(window_of(&store, "m-2").await, (Some(5), Some(6)));
}

async fn start_must_be_before_end(Ctx { store, .. }: Ctx) {
    register(&store, &["m-1"]).await;
    for (start_ms, end_ms) in [(2_000, 1_000), (1_000, 1_000)] {
        let window = TimeWindow { start_ms, end_ms };
        let err = store.machine_set_update_windows(&ids(&["m-1"]), Some(window)).await.unwrap_err();
        assert!(matches!(err, StoreError::Invalid { .. }), "{err:?}");
    }
    assert_eq!(window_of(&store, "m-1").await, (None, None));
}

both_backends!(set_and_clear, unknown_ids_write_nothing, start_must_be_before_end);
