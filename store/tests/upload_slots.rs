//! Site-wide upload slots on both backends: at most `max` live leases, release, expiry, renewal,
//! and no double grant under concurrency.

mod common;

use common::Ctx;

async fn at_most_max_slots_are_granted(Ctx { store, .. }: Ctx) {
    assert_eq!(store.upload_slot_acquire("a", 2, 60_000).await.unwrap(), Some(0));
    assert_eq!(store.upload_slot_acquire("b", 2, 60_000).await.unwrap(), Some(1));
    assert_eq!(store.upload_slot_acquire("c", 2, 60_000).await.unwrap(), None, "both slots held");
    assert_eq!(store.upload_slots_in_use(2).await.unwrap(), 2);
    store.upload_slot_release(0, "a").await.unwrap();
    assert_eq!(store.upload_slot_acquire("c", 2, 60_000).await.unwrap(), Some(0));
    // Releasing with the wrong holder changes nothing.
    store.upload_slot_release(0, "a").await.unwrap();
    assert_eq!(store.upload_slot_acquire("d", 2, 60_000).await.unwrap(), None);
    store.upload_slot_release_holder("c").await.unwrap();
    assert_eq!(store.upload_slot_acquire("d", 2, 60_000).await.unwrap(), Some(0), "c's slot freed by holder");
}

async fn expired_leases_are_taken_over_and_renewal_keeps_them(Ctx { store, .. }: Ctx) {
    assert_eq!(store.upload_slot_acquire("dead", 1, -1).await.unwrap(), Some(0), "already expired lease");
    assert!(!store.upload_slot_renew(0, "someone-else", 60_000).await.unwrap());
    assert_eq!(store.upload_slot_acquire("alive", 1, 60_000).await.unwrap(), Some(0), "expired lease taken over");
    assert!(!store.upload_slot_renew(0, "dead", 60_000).await.unwrap(), "the dead holder lost it");
    assert!(store.upload_slot_renew(0, "alive", 60_000).await.unwrap());
    assert_eq!(store.upload_slot_acquire("late", 1, 60_000).await.unwrap(), None);
}

async fn concurrent_acquires_never_exceed_max(Ctx { store, .. }: Ctx) {
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.upload_slot_acquire(&format!("h{i}"), 3, 60_000).await })
        })
        .collect();
    let mut granted = Vec::new();
    for t in tasks {
        if let Some(slot) = t.await.unwrap().unwrap() {
            granted.push(slot);
        }
    }
    granted.sort();
    assert_eq!(granted, vec![0, 1, 2], "exactly max slots granted, each once");
}

both_backends!(
    at_most_max_slots_are_granted,
    expired_leases_are_taken_over_and_renewal_keeps_them,
    concurrent_acquires_never_exceed_max
);
