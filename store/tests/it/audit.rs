//! Audit trail on both backends: newest first, limits, unique sequence numbers under concurrency.

use crate::common;

use common::Ctx;

async fn order_and_limit(Ctx { store, .. }: Ctx) {
    assert!(store.audit_list(10).await.unwrap().is_empty());
    store.audit_append("alice", "request_create", "m-1", "AdminCli").await.unwrap();
    store.audit_append("Automated", "state_change", "m-1", "Ready -> HostReprovision").await.unwrap();
    store.audit_append("bob", "request_clear", "m-2", "").await.unwrap();

    let all = store.audit_list(10).await.unwrap();
    let seen: Vec<_> = all.iter().map(|e| (e.seq, e.actor.as_str(), e.action.as_str(), e.target.as_str())).collect();
    assert_eq!(
        seen,
        [
            (3, "bob", "request_clear", "m-2"),
            (2, "Automated", "state_change", "m-1"),
            (1, "alice", "request_create", "m-1")
        ]
    );
    assert_eq!(all[1].detail, "Ready -> HostReprovision");
    assert!(all.iter().all(|e| e.at_ms > 0));
    assert!(all.windows(2).all(|w| w[0].at_ms >= w[1].at_ms));

    let latest = store.audit_list(1).await.unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].seq, 3);

    let json = serde_json::to_string(&latest[0]).unwrap();
    assert_eq!(serde_json::from_str::<hostfw_store::AuditEntry>(&json).unwrap(), latest[0]);
}

async fn concurrent_appends_get_unique_seqs(Ctx { store, .. }: Ctx) {
    let tasks: Vec<_> = (0..25)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.audit_append("racer", "append", &format!("t-{i}"), "").await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let seqs: Vec<i64> = store.audit_list(100).await.unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=25).rev().collect::<Vec<_>>());
}

both_backends!(order_and_limit, concurrent_appends_get_unique_seqs);
