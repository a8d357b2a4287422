//! Many writers of one process at once (what a worker running fifty host updates does): every
//! write lands and none fails with `database is locked`. On an SQLite file the store queues its
//! writes on one connection instead of letting them race for the write lock; on PostgreSQL the
//! same burst checks nothing is lost.
//!
//! And two processes on one site database (a worker and `hostfw --local`, a standalone API or a
//! second worker): a write that reads first (an approval) while the other keeps writing never
//! fails with `database is locked`. Two `Store`s on one URL are two processes' pools.

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

const APPROVALS: usize = 40;

async fn a_read_then_write_lands_while_another_process_writes(Ctx { store, url }: Ctx) {
    use hostfw_store::{ApprovalTaken, NewRequest, RequestCreate, Store};
    for i in 0..APPROVALS {
        let id = format!("a{i:02}");
        store
            .machine_upsert(&NewMachine {
                id: id.clone(),
                bmc_address: format!("10.7.0.{i}").parse().unwrap(),
                vendor: Some("Dell".into()),
                model: Some("PowerEdge R760".into()),
                state: HostState::Assigned,
                instance_id: Some(format!("inst-{id}")),
                labels: None,
            })
            .await
            .unwrap();
        let new = NewRequest { machine_id: id, initiator: "cli:op".into(), update_message: None, workflow_id: None };
        assert!(matches!(store.request_create(&new).await.unwrap(), RequestCreate::Created(_)));
    }
    // The other process: writes without pause until the approvals are done.
    let other = Store::connect(&url).await.expect("a second pool on the same database");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (other, done) = (other.clone(), done.clone());
        tokio::spawn(async move {
            let mut writes = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                other.counter_add("other_process", "all", 1).await.map_err(|e| hostfw_model::error_chain(&e))?;
                writes += 1;
            }
            Ok::<u64, String>(writes)
        })
    };
    let mut failures = Vec::new();
    for i in 0..APPROVALS {
        let id = format!("a{i:02}");
        match store.request_approve(&id, "tenant", 10).await {
            Ok(ApprovalTaken::Approved) => {}
            other => failures.push(format!("{id}: {other:?}")),
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let writes = writer.await.unwrap().expect("the other process's writes land");
    other.close().await;
    assert!(failures.is_empty(), "approvals failed while another process wrote ({writes} writes): {failures:?}");
    assert!(writes > 0, "the other process wrote meanwhile");
}

both_backends!(a_burst_of_concurrent_writers_all_land, a_read_then_write_lands_while_another_process_writes);
