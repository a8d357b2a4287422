//! Many writers of one process at once (what a worker running fifty host updates does): every
//! write lands and none fails with `database is locked`. On an SQLite file the store queues its
//! writes on one connection instead of letting them race for the write lock; on PostgreSQL the
//! same burst checks nothing is lost.

use crate::common;

use common::Ctx;
use hostfw_model::{HostState, Secret};
use hostfw_store::NewMachine;

const WRITERS: usize = 24;
const MACHINES_EACH: usize = 12;

async fn a_burst_of_concurrent_writers_all_land(Ctx { store, .. }: Ctx) {
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..MACHINES_EACH {
                    let id = format!("w{w:02}-m{i:02}");
                    store
                        .machine_upsert(&NewMachine {
                            id: id.clone(),
                            bmc_address: format!("10.9.{w}.{i}").parse().unwrap(),
                            vendor: Some("Dell".into()),
                            model: Some("PowerEdge R760".into()),
                            state: HostState::Ready,
                            instance_id: None,
                            labels: None,
                        })
                        .await
                        .map_err(|e| format!("machine_upsert {id}: {}", hostfw_model::error_chain(&e)))?;
                    store
                        .credentials_put(&id, "root", &Secret::new("pw".to_string()))
                        .await
                        .map_err(|e| format!("credentials_put {id}: {}", hostfw_model::error_chain(&e)))?;
                    store
                        .machine_set_state(&id, HostState::HostReprovision, None, "burst")
                        .await
                        .map_err(|e| format!("machine_set_state {id}: {}", hostfw_model::error_chain(&e)))?;
                    store
                        .counter_add("burst_writes", "all", 1)
                        .await
                        .map_err(|e| format!("counter_add {id}: {}", hostfw_model::error_chain(&e)))?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    let mut failures = Vec::new();
    for t in tasks {
        if let Err(e) = t.await.unwrap() {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "writes failed under concurrency: {failures:?}");
    let machines = store.machine_list().await.unwrap();
    assert_eq!(machines.len(), WRITERS * MACHINES_EACH);
    assert!(machines.iter().all(|m| m.state == HostState::HostReprovision), "every state change landed");
    let counters = store.counter_list().await.unwrap();
    let total = counters.iter().find(|(n, l, _)| n == "burst_writes" && l == "all").map(|c| c.2);
    assert_eq!(total, Some((WRITERS * MACHINES_EACH) as i64), "no counter increment lost");
}

both_backends!(a_burst_of_concurrent_writers_all_land);
