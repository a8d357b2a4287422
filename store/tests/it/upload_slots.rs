//! Site-wide upload slots on both backends: at most `max` live leases, release, expiry, renewal,
//! no double grant under concurrency, and the fencing token that stops a superseded attempt.

use crate::common;

use common::Ctx;
use hostfw_store::SlotGrant;

fn slot(grant: Option<SlotGrant>) -> Option<u32> {
    grant.map(|g| g.slot)
}

async fn at_most_max_slots_are_granted(Ctx { store, .. }: Ctx) {
    let a = store.upload_slot_acquire("a", 2, 60_000).await.unwrap().unwrap();
    assert_eq!(a.slot, 0);
    assert_eq!(slot(store.upload_slot_acquire("b", 2, 60_000).await.unwrap()), Some(1));
    assert_eq!(slot(store.upload_slot_acquire("c", 2, 60_000).await.unwrap()), None, "both slots held");
    assert_eq!(store.upload_slots_in_use(2).await.unwrap(), 2);
    store.upload_slot_release(a, "a").await.unwrap();
    assert_eq!(slot(store.upload_slot_acquire("c", 2, 60_000).await.unwrap()), Some(0));
    // Releasing a grant that is no longer held changes nothing.
    store.upload_slot_release(a, "a").await.unwrap();
    assert_eq!(slot(store.upload_slot_acquire("d", 2, 60_000).await.unwrap()), None);
    store.upload_slot_release_holder("c").await.unwrap();
    assert_eq!(slot(store.upload_slot_acquire("d", 2, 60_000).await.unwrap()), Some(0), "c's slot freed by holder");
}

async fn expired_leases_are_taken_over_and_renewal_keeps_them(Ctx { store, .. }: Ctx) {
    let dead = store.upload_slot_acquire("dead", 1, -1).await.unwrap().unwrap();
    assert_eq!(dead.slot, 0, "already expired lease");
    assert!(!store.upload_slot_renew(dead, "someone-else", 60_000).await.unwrap());
    let alive = store.upload_slot_acquire("alive", 1, 60_000).await.unwrap().unwrap();
    assert_eq!(alive.slot, 0, "expired lease taken over");
    assert!(!store.upload_slot_renew(dead, "dead", 60_000).await.unwrap(), "the dead holder lost it");
    assert!(store.upload_slot_renew(alive, "alive", 60_000).await.unwrap());
    assert_eq!(slot(store.upload_slot_acquire("late", 1, 60_000).await.unwrap()), None);
}

/// Two attempts of the same upload (same holder): the retried one takes the slot over at once,
/// and the first, checking its lease right before its POST, finds it lost: it can neither renew
/// nor release the retried attempt's grant.
async fn a_retried_attempt_fences_off_the_first(Ctx { store, .. }: Ctx) {
    let first = store.upload_slot_acquire("wf/bmc/0", 2, 60_000).await.unwrap().unwrap();
    assert!(store.upload_slot_renew(first, "wf/bmc/0", 60_000).await.unwrap(), "the first attempt holds it");
    let second = store.upload_slot_acquire("wf/bmc/0", 2, 60_000).await.unwrap().unwrap();
    assert_eq!(second.slot, first.slot, "the retried attempt takes over its own slot, not a second one");
    assert!(second.generation > first.generation, "{second:?} after {first:?}");
    assert!(!store.upload_slot_renew(first, "wf/bmc/0", 60_000).await.unwrap(), "the first attempt lost the lease");
    store.upload_slot_release(first, "wf/bmc/0").await.unwrap();
    assert!(store.upload_slot_renew(second, "wf/bmc/0", 60_000).await.unwrap(), "the stale release freed nothing");
    assert_eq!(store.upload_slots_in_use(2).await.unwrap(), 1, "one slot for the one upload");
}

/// A lease that expired and was taken cannot be renewed, by its old holder or anyone; an expired
/// lease is not renewed even before someone takes it; renewal never shortens a lease.
async fn an_expired_lease_cannot_be_renewed(Ctx { store, .. }: Ctx) {
    let old = store.upload_slot_acquire("old", 1, -1).await.unwrap().unwrap();
    assert!(!store.upload_slot_renew(old, "old", 60_000).await.unwrap(), "expired: not renewed");
    let new = store.upload_slot_acquire("new", 1, 60_000).await.unwrap().unwrap();
    assert!(!store.upload_slot_renew(old, "old", 60_000).await.unwrap(), "taken: not renewed");
    // A long lease (a BMC task running) survives a short renewal.
    assert!(store.upload_slot_renew(new, "new", 3_600_000).await.unwrap());
    assert!(store.upload_slot_renew(new, "new", -1).await.unwrap());
    assert_eq!(slot(store.upload_slot_acquire("other", 1, 60_000).await.unwrap()), None, "still held");
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
        if let Some(grant) = t.await.unwrap().unwrap() {
            granted.push(grant.slot);
        }
    }
    granted.sort();
    assert_eq!(granted, vec![0, 1, 2], "exactly max slots granted, each once");
}

/// Eight uploads, each with two attempts (a superseded one and its retry), all acquire at once;
/// then every attempt that got a grant checks its fence. At most `max` attempts pass, each on its
/// own slot: two attempts of one upload never both believe they hold a slot.
async fn the_bound_holds_for_concurrent_attempts_of_the_same_uploads(Ctx { store, .. }: Ctx) {
    const MAX: u32 = 2;
    let acquires: Vec<_> = (0..16)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let holder = format!("upload-{}", i / 2);
                let grant = store.upload_slot_acquire(&holder, MAX, 60_000).await.unwrap();
                (holder, grant)
            })
        })
        .collect();
    let mut granted = Vec::new();
    for t in acquires {
        if let (holder, Some(grant)) = t.await.unwrap() {
            granted.push((holder, grant));
        }
    }
    assert!(granted.len() >= MAX as usize, "every slot was granted at least once: {granted:?}");
    let checks: Vec<_> = granted
        .into_iter()
        .map(|(holder, grant)| {
            let store = store.clone();
            tokio::spawn(
                async move { store.upload_slot_renew(grant, &holder, 60_000).await.unwrap().then_some(grant.slot) },
            )
        })
        .collect();
    let mut holding = Vec::new();
    for t in checks {
        holding.extend(t.await.unwrap());
    }
    holding.sort();
    assert_eq!(holding, vec![0, 1], "attempts past the fence under max_uploads = {MAX}");
}

/// A holder that holds a slot gets that one again (its takeover), not a lower free one; a raised
/// `max` adds the slots it names.
async fn a_holder_takes_its_own_slot_first_and_a_raised_max_adds_slots(Ctx { store, .. }: Ctx) {
    let a = store.upload_slot_acquire("a", 2, 60_000).await.unwrap().unwrap();
    let b = store.upload_slot_acquire("b", 2, 60_000).await.unwrap().unwrap();
    assert_eq!((a.slot, b.slot), (0, 1));
    store.upload_slot_release(a, "a").await.unwrap();
    let again = store.upload_slot_acquire("b", 2, 60_000).await.unwrap().unwrap();
    assert_eq!(again.slot, 1, "b's own slot, though slot 0 is free");
    assert_eq!(again.generation, b.generation + 1, "a new grant of the same slot");
    assert!(!store.upload_slot_renew(b, "b", 60_000).await.unwrap(), "the earlier grant is fenced off");
    assert_eq!(slot(store.upload_slot_acquire("c", 2, 60_000).await.unwrap()), Some(0));
    assert_eq!(slot(store.upload_slot_acquire("d", 2, 60_000).await.unwrap()), None, "both held");
    assert_eq!(slot(store.upload_slot_acquire("d", 3, 60_000).await.unwrap()), Some(2), "max raised to 3");
    assert_eq!(store.upload_slots_in_use(3).await.unwrap(), 3);
}

/// Lease expiry is the database's clock: a worker whose clock runs an hour ahead sees the live
/// lease of another worker as live (it cannot take the slot, and counts it in use), and its own
/// lease lasts as long as the database says, not its clock; one whose clock runs behind cannot
/// renew a lease the database has seen expire.
async fn a_worker_with_a_skewed_clock_cannot_steal_a_live_lease(Ctx { store, .. }: Ctx) {
    let ahead = store.clone().with_clock_skew(3_600_000);
    let behind = store.clone().with_clock_skew(-3_600_000);
    let skew = ahead.local_now_ms() - hostfw_store::now_ms();
    assert!(skew >= 3_590_000, "the test seam skews the local clock: {skew}");
    let db_now = store.db_now_ms().await.unwrap();
    assert!((db_now - hostfw_store::now_ms()).abs() < 60_000, "the database clock is not skewed: {db_now}");

    let live = store.upload_slot_acquire("uploading", 1, 60_000).await.unwrap().unwrap();
    assert_eq!(slot(ahead.upload_slot_acquire("skewed", 1, 60_000).await.unwrap()), None, "the live lease was stolen");
    assert_eq!(ahead.upload_slots_in_use(1).await.unwrap(), 1, "the skewed worker counts the live lease");
    assert!(store.upload_slot_renew(live, "uploading", 60_000).await.unwrap(), "the holder keeps it");
    let held = store.upload_slots_held().await.unwrap();
    assert!(held[0].expires_at_ms < db_now + 120_000, "the lease ends by the database's clock: {held:?}");

    // An expired lease (by the database's clock) is not renewed by a worker whose clock is behind.
    let dead = behind.upload_slot_acquire("late", 2, -1).await.unwrap().unwrap();
    assert!(!behind.upload_slot_renew(dead, "late", 60_000).await.unwrap(), "an expired lease was renewed");
}

both_backends!(
    a_worker_with_a_skewed_clock_cannot_steal_a_live_lease,
    a_holder_takes_its_own_slot_first_and_a_raised_max_adds_slots,
    at_most_max_slots_are_granted,
    expired_leases_are_taken_over_and_renewal_keeps_them,
    a_retried_attempt_fences_off_the_first,
    an_expired_lease_cannot_be_renewed,
    concurrent_acquires_never_exceed_max,
    the_bound_holds_for_concurrent_attempts_of_the_same_uploads
);
