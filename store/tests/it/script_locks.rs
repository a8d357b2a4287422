//! Core-local script locks on both backends: one holder per machine and component, the process
//! identity recorded by the holder only, release guarded by the holder token.

use crate::common;

use common::Ctx;
use hostfw_store::ScriptLock;

fn lock(holder: &str) -> ScriptLock {
    ScriptLock {
        machine_id: "m1".into(),
        component: "uefi".into(),
        holder: holder.into(),
        script: "scripts/flash.sh".into(),
        worker_host: "worker-a".into(),
        boot_id: "boot-1".into(),
        pid: None,
        pid_start_ticks: None,
        started_at_ms: 1_000,
        deadline_ms: 61_000,
    }
}

async fn one_holder_and_its_process(Ctx { store, .. }: Ctx) {
    assert_eq!(store.script_lock_claim(&lock("a")).await.unwrap(), None, "free: claimed");
    let held = store.script_lock_claim(&lock("b")).await.unwrap().expect("held by a");
    assert_eq!(held, lock("a"));
    assert!(!store.script_lock_set_process("m1", "uefi", "b", 42, Some(7)).await.unwrap(), "b does not hold it");
    assert!(store.script_lock_set_process("m1", "uefi", "a", 42, Some(7)).await.unwrap());
    let got = store.script_lock_get("m1", "uefi").await.unwrap().unwrap();
    assert_eq!((got.pid, got.pid_start_ticks), (Some(42), Some(7)));
    // Another component of the same machine is a different lock.
    let mut bmc = lock("c");
    bmc.component = "bmc".into();
    assert_eq!(store.script_lock_claim(&bmc).await.unwrap(), None);

    assert!(!store.script_lock_release("m1", "uefi", "b").await.unwrap(), "only the holder releases");
    assert!(store.script_lock_get("m1", "uefi").await.unwrap().is_some());
    assert!(store.script_lock_release("m1", "uefi", "a").await.unwrap());
    assert_eq!(store.script_lock_get("m1", "uefi").await.unwrap(), None);
    assert_eq!(store.script_lock_claim(&lock("b")).await.unwrap(), None, "free again: b claims it");
}

async fn concurrent_claims_grant_one(Ctx { store, .. }: Ctx) {
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.script_lock_claim(&lock(&format!("h{i}"))).await })
        })
        .collect();
    let mut winners = 0;
    for t in tasks {
        if t.await.unwrap().unwrap().is_none() {
            winners += 1;
        }
    }
    assert_eq!(winners, 1, "exactly one claim wins");
}

both_backends!(one_holder_and_its_process, concurrent_claims_grant_one);
