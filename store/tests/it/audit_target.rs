//! Audit trail filtered by target on both backends: exact target match, newest first, limit.

use crate::common;

use common::Ctx;

async fn filter_by_target(Ctx { store, .. }: Ctx) {
    assert!(store.audit_list_for_target("m-1", 10).await.unwrap().is_empty());
    store.audit_append("alice", "machine add", "m-1", "bmc 10.0.0.1:443").await.unwrap();
    store.audit_append("alice", "machine add", "m-10", "bmc 10.0.0.10:443").await.unwrap();
    store.audit_append("bob", "machine auto-update", "m-1", "disable").await.unwrap();

    let m1 = store.audit_list_for_target("m-1", 10).await.unwrap();
    let seen: Vec<_> = m1.iter().map(|e| (e.seq, e.actor.as_str(), e.action.as_str())).collect();
    assert_eq!(seen, [(3, "bob", "machine auto-update"), (1, "alice", "machine add")]);
    assert!(m1.iter().all(|e| e.target == "m-1"));

    let latest = store.audit_list_for_target("m-1", 1).await.unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].seq, 3);
    assert!(store.audit_list_for_target("m-", 10).await.unwrap().is_empty());
}

both_backends!(filter_by_target);
