//! Site-wide counters on both backends: upsert adds, labels are separate rows, no increment is
//! lost under concurrent writers, and values survive reconnecting (another replica's view).

use crate::common;

use common::Ctx;
use hostfw_store::{Store, FIRMWARE_UPDATES_TOTAL, HOST_REPROVISION_RETRIES_TOTAL, PHASE_FAILED, PHASE_STARTED};

fn row(name: &str, label: &str, value: i64) -> (String, String, i64) {
    (name.to_string(), label.to_string(), value)
}

async fn counters_start_empty_and_add_up(Ctx { store, .. }: Ctx) {
    assert_eq!(store.counter_list().await.unwrap(), vec![]);
    store.counter_add(FIRMWARE_UPDATES_TOTAL, PHASE_STARTED, 1).await.unwrap();
    store.counter_add(FIRMWARE_UPDATES_TOTAL, PHASE_STARTED, 2).await.unwrap();
    store.counter_add(FIRMWARE_UPDATES_TOTAL, PHASE_FAILED, 1).await.unwrap();
    store.counter_add(HOST_REPROVISION_RETRIES_TOTAL, "", 4).await.unwrap();
    assert_eq!(
        store.counter_list().await.unwrap(),
        vec![
            row(FIRMWARE_UPDATES_TOTAL, PHASE_FAILED, 1),
            row(FIRMWARE_UPDATES_TOTAL, PHASE_STARTED, 3),
            row(HOST_REPROVISION_RETRIES_TOTAL, "", 4),
        ],
        "ordered by name, then label"
    );
}

async fn concurrent_adds_are_never_lost(Ctx { store, .. }: Ctx) {
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.counter_add(FIRMWARE_UPDATES_TOTAL, PHASE_STARTED, 1).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(store.counter_list().await.unwrap(), vec![row(FIRMWARE_UPDATES_TOTAL, PHASE_STARTED, 16)]);
}

async fn counters_are_shared_through_the_database(Ctx { store, url }: Ctx) {
    store.counter_add(HOST_REPROVISION_RETRIES_TOTAL, "", 2).await.unwrap();
    let replica = Store::connect(&url).await.expect("second connection");
    replica.counter_add(HOST_REPROVISION_RETRIES_TOTAL, "", 1).await.unwrap();
    assert_eq!(store.counter_list().await.unwrap(), vec![row(HOST_REPROVISION_RETRIES_TOTAL, "", 3)]);
    assert_eq!(replica.counter_list().await.unwrap(), store.counter_list().await.unwrap());
    replica.close().await;
}

both_backends!(
    counters_start_empty_and_add_up,
    concurrent_adds_are_never_lost,
    counters_are_shared_through_the_database
);
