//! The gate fence (migration 0024), on both backends: every write that can tighten a scheduling
//! gate moves it, so a request fenced before that write is refused (`GateMoved`) and writes
//! nothing; writes that only loosen a gate leave it; a decision's own requests move it along; and
//! two decisions read at once (two scheduler passes overlapping) never both land a request; and a
//! pass's canary wave marks are written only under the fence it read.

use crate::common;

use common::Ctx;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use hostfw_model::gates::{Target, WaveMark, WaveRecord};
use hostfw_model::{ComponentType, HostState, TimeWindow};
use hostfw_store::{FreezeSelector, GateFence, NewMachine, NewRequest, RequestCreate, Store, StoreError};

async fn machines(store: &Store, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let id = format!("m{i}");
        let machine = NewMachine {
            id: id.clone(),
            bmc_address: format!("bmc-{id}").parse().unwrap(),
            vendor: Some("Dell Inc.".into()),
            model: Some("PowerEdge R750".into()),
            state: HostState::Ready,
            instance_id: None,
            labels: None,
        };
        store.machine_upsert(&machine).await.unwrap();
        ids.push(id);
    }
    ids
}

fn request(id: &str) -> NewRequest {
    NewRequest { machine_id: id.into(), initiator: "Automated".into(), update_message: None, workflow_id: None }
}

/// A fenced request as the scheduler makes it (freezes honoured, no caps).
async fn fenced(store: &Store, id: &str, fence: &mut GateFence) -> Result<RequestCreate, StoreError> {
    store.request_create_guarded(&request(id), &BTreeMap::new(), true, Some(fence)).await
}

/// One write of the table below, on a clone of the store.
type Write = Box<dyn Fn(Store) -> Pin<Box<dyn Future<Output = hostfw_store::Result<()>> + Send>> + Send + Sync>;

fn target() -> Target {
    Target {
        vendor: "Dell Inc.".into(),
        model: "PowerEdge R750".into(),
        component: ComponentType::Bmc,
        version: "7.10".into(),
    }
}

/// Asserts that a request for `probe` fenced at `fence` is refused after `what`, writing nothing.
async fn refused_after(store: &Store, fence: GateFence, probe: &str, what: &str) {
    let mut fence = fence;
    let err = fenced(store, probe, &mut fence).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::GateMoved { decision, read } if *decision == format!("start {probe}") && *read == fence.epoch()),
        "after {what}: {err:?}"
    );
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert!(store.request_get(probe).await.unwrap().is_none(), "after {what}: nothing was written");
}

async fn every_tightening_write_moves_the_fence(Ctx { store, .. }: Ctx) {
    let ids = machines(&store, 4).await;
    let probe = "m3";
    store.target_attempt(&target(), "m2").await.unwrap();
    let steps: Vec<(&str, Write)> = vec![
        ("a request", Box::new(|s: Store| Box::pin(async move { s.request_create(&request("m0")).await.map(|_| ()) }))),
        (
            "a maintenance entry",
            Box::new(|s: Store| Box::pin(async move { s.machine_maintenance("m1", true, "rma").await.map(|_| ()) })),
        ),
        (
            "a failure on record",
            Box::new(|s: Store| {
                Box::pin(
                    async move { s.target_failure("m2", ComponentType::Bmc, "7.10", "task failed").await.map(|_| ()) },
                )
            }),
        ),
        (
            "a host's first attempt of a target",
            Box::new(|s: Store| Box::pin(async move { s.target_attempt(&target(), "m0").await })),
        ),
        ("a run's end", Box::new(|s: Store| Box::pin(async move { s.target_finish("m2").await.map(|_| ()) }))),
        (
            "a pause",
            Box::new(|s: Store| {
                Box::pin(async move { s.target_pause(&target(), "cli:alice", "bad image").await.map(|_| ()) })
            }),
        ),
        (
            "a resume",
            Box::new(|s: Store| Box::pin(async move { s.target_resume(&target(), "cli:alice").await.map(|_| ()) })),
        ),
        (
            "a freeze",
            Box::new(|s: Store| {
                Box::pin(async move {
                    s.freeze_set("cli:alice", Some("label=rack=r9"), "power work", false).await.map(|_| ())
                })
            }),
        ),
        (
            "a window change",
            Box::new(|s: Store| {
                Box::pin(async move {
                    let w = TimeWindow { start_ms: 1_000, end_ms: 2_000 };
                    s.machine_set_update_windows(&["m3".to_string()], Some(w)).await
                })
            }),
        ),
        (
            "a catalog version",
            Box::new(|s: Store| {
                Box::pin(async move { s.firmware_config_put("alice", "# v\n", "aa").await.map(|_| ()) })
            }),
        ),
    ];
    for (what, write) in steps {
        let fence = store.gate_fence().await.unwrap();
        write(store.clone()).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(store.gate_fence().await.unwrap().epoch() > fence.epoch(), "{what} moves the fence");
        refused_after(&store, fence, probe, what).await;
    }
    assert_eq!(ids.len(), 4);
}

async fn loosening_writes_leave_the_fence(Ctx { store, .. }: Ctx) {
    machines(&store, 4).await;
    store.machine_maintenance("m0", true, "rma").await.unwrap();
    store.request_create(&request("m1")).await.unwrap();
    store.target_attempt(&target(), "m3").await.unwrap();
    let freeze = store.freeze_set("cli:alice", Some("label=rack=r9"), "power work", false).await.unwrap();
    let mut fence = store.gate_fence().await.unwrap();
    store.machine_maintenance("m0", false, "back").await.unwrap();
    store.request_delete("m1").await.unwrap();
    store.unfreeze("cli:alice", &FreezeSelector::Id(freeze.id)).await.unwrap();
    // A host attempting a target again (a retry) adds no attempted host.
    store.target_attempt(&target(), "m3").await.unwrap();
    let created = fenced(&store, "m2", &mut fence).await.unwrap();
    assert!(matches!(created, RequestCreate::Created(_)), "{created:?}");
}

async fn a_decision_moves_its_own_fence_along(Ctx { store, .. }: Ctx) {
    let ids = machines(&store, 3).await;
    let mut fence = store.gate_fence().await.unwrap();
    let read = fence.epoch();
    for id in &ids {
        let created = fenced(&store, id, &mut fence).await.unwrap();
        assert!(matches!(created, RequestCreate::Created(_)), "{id}: {created:?}");
    }
    assert_eq!(fence.epoch(), read + 3);
    assert_eq!(store.gate_fence().await.unwrap(), fence);
    // A request that exists already is no new request: the fence stays.
    let again = fenced(&store, "m0", &mut fence).await.unwrap();
    assert!(matches!(again, RequestCreate::Exists(_)), "{again:?}");
    assert_eq!(store.gate_fence().await.unwrap(), fence);
}

/// The canary waves' marks a pass writes before its requests hold the fence without moving it:
/// written while it is where the pass read it, refused (nothing written) once a resume moved it.
async fn wave_marks_are_written_only_under_the_fence_they_were_read_with(Ctx { store, .. }: Ctx) {
    machines(&store, 1).await;
    store.target_attempt(&target(), "m0").await.unwrap();
    let mark = WaveMark { target: target(), record: WaveRecord { hosts: 4, wave: 2 }, attempted_hosts: 1 };
    let stale = store.gate_fence().await.unwrap();
    store.target_resume(&target(), "cli:alice").await.unwrap();
    store.target_attempt(&target(), "m0").await.unwrap();
    let err = store.target_waves_mark(std::slice::from_ref(&mark), &stale).await.unwrap_err();
    assert!(matches!(&err, StoreError::GateMoved { decision, .. } if decision == "mark the canary waves"), "{err:?}");
    let waves = |records: Vec<hostfw_model::gates::TargetRecord>| records.into_iter().find_map(|r| r.waves);
    assert_eq!(waves(store.target_records().await.unwrap()), None, "nothing was written");
    let fresh = store.gate_fence().await.unwrap();
    assert!(store.target_waves_mark(&[mark], &fresh).await.unwrap().is_empty());
    assert_eq!(waves(store.target_records().await.unwrap()), Some(WaveRecord { hosts: 4, wave: 2 }));
    assert_eq!(store.gate_fence().await.unwrap(), fresh, "marks hold the fence, they do not move it");
}

/// Two scheduler passes that read the site at once (an activity retried on another worker while
/// its first attempt still runs) each try to start their whole plan, concurrently: whatever the
/// interleaving, only one of them lands any request, and that one lands its whole plan.
async fn two_passes_read_at_once_never_both_start(Ctx { store, .. }: Ctx) {
    let ids = machines(&store, 8).await;
    for round in 0..10 {
        for id in &ids {
            store.request_delete(id).await.unwrap();
        }
        let plans = [ids[..4].to_vec(), ids[4..].to_vec()];
        let fences = [store.gate_fence().await.unwrap(), store.gate_fence().await.unwrap()];
        let mut tasks = Vec::new();
        for (plan, mut fence) in plans.into_iter().zip(fences) {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                let mut landed = 0;
                for id in &plan {
                    match fenced(&store, id, &mut fence).await {
                        Ok(RequestCreate::Created(_)) => landed += 1,
                        Ok(other) => panic!("{id}: {other:?}"),
                        Err(StoreError::GateMoved { .. }) => break,
                        Err(e) => panic!("{id}: {e}"),
                    }
                }
                landed
            }));
        }
        let mut landed = Vec::new();
        for t in tasks {
            landed.push(t.await.unwrap());
        }
        landed.sort_unstable();
        assert_eq!(landed, vec![0, 4], "round {round}: one pass lands its plan, the other nothing");
        assert_eq!(store.request_list().await.unwrap().len(), 4, "round {round}");
    }
}

crate::both_backends!(
    every_tightening_write_moves_the_fence,
    loosening_writes_leave_the_fence,
    a_decision_moves_its_own_fence_along,
    wave_marks_are_written_only_under_the_fence_they_were_read_with,
    two_passes_read_at_once_never_both_start
);
