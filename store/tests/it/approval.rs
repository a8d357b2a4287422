//! Approval deadlines' records (`approval_holds`, `approvals`), on both backends: a hold is
//! replaced by the next skip of its machine, read back with ended ones too, and ended by a new
//! request for its host; the first approval
//! of a request is kept (a repeated `instance reboot` or the update's start does not overwrite
//! who approved), and only the newest requests' approvals of a machine are kept.

use crate::common;

use common::Ctx;
use hostfw_model::gates::ApprovalHold;
use hostfw_model::HostState;
use hostfw_store::{NewMachine, NewRequest, RequestCreate};

fn hold(id: &str, skipped_at_ms: i64, until_ms: i64) -> ApprovalHold {
    ApprovalHold { machine_id: id.into(), skipped_at_ms, until_ms }
}

async fn a_hold_is_replaced_by_the_next_skip_of_its_machine(Ctx { store, .. }: Ctx) {
    assert!(store.approval_holds().await.unwrap().is_empty());
    store.approval_hold_put(&hold("h2", 10, 20)).await.unwrap();
    store.approval_hold_put(&hold("h1", 100, 200)).await.unwrap();
    store.approval_hold_put(&hold("h2", 300, 400)).await.unwrap();
    assert_eq!(store.approval_holds().await.unwrap(), vec![hold("h1", 100, 200), hold("h2", 300, 400)]);
}

async fn a_new_request_for_the_host_ends_its_hold(Ctx { store, .. }: Ctx) {
    for (id, bmc) in [("h1", "10.7.0.1"), ("h2", "10.7.0.2")] {
        store
            .machine_upsert(&NewMachine {
                id: id.into(),
                bmc_address: bmc.parse().unwrap(),
                vendor: Some("Dell".into()),
                model: Some("PowerEdge R760".into()),
                state: HostState::Assigned,
                instance_id: Some(format!("inst-{id}")),
                labels: None,
            })
            .await
            .unwrap();
        store.approval_hold_put(&hold(id, 10, i64::MAX)).await.unwrap();
    }
    let new =
        NewRequest { machine_id: "h1".into(), initiator: "cli:op".into(), update_message: None, workflow_id: None };
    assert!(matches!(store.request_create(&new).await.unwrap(), RequestCreate::Created(_)));
    assert_eq!(store.approval_holds().await.unwrap(), vec![hold("h2", 10, i64::MAX)], "h1's hold ended, h2's stays");
}

async fn the_first_approval_of_a_request_is_kept_and_old_requests_are_pruned(Ctx { store, .. }: Ctx) {
    assert!(store.approval_record("h1", 1_000, "tenant-alice", 1_500).await.unwrap());
    assert!(!store.approval_record("h1", 1_000, "the instance autoreboot period", 1_600).await.unwrap());
    let approvals = store.approvals_of("h1").await.unwrap();
    assert_eq!(approvals.len(), 1);
    assert_eq!((approvals[0].approved_by.as_str(), approvals[0].approved_at_ms), ("tenant-alice", 1_500));

    for i in 1..=25 {
        store.approval_record("h1", 1_000 + i * 10_000, "tenant-bob", 1_001 + i * 10_000).await.unwrap();
    }
    store.approval_record("h2", 5, "tenant-carol", 6).await.unwrap();
    let approvals = store.approvals_of("h1").await.unwrap();
    assert_eq!(approvals.len(), 20, "the newest 20 requests of a machine");
    assert_eq!(approvals[0].requested_at_ms, 251_000, "newest first");
    assert_eq!(approvals[19].requested_at_ms, 61_000);
    assert_eq!(store.approvals_of("h2").await.unwrap().len(), 1, "other machines are untouched");
}

/// Issue 26 item 7: the tenant's approval and the deadline's skip are decided once, whichever
/// comes first, and the loser is told: an approval after the skip approves nothing (no flag, no
/// approval on record), a skip after the approval gives nothing up. Many of both at once on one
/// request: exactly one kind wins.
async fn an_approval_and_the_deadline_skip_are_decided_once(Ctx { store, .. }: Ctx) {
    use hostfw_store::ApprovalTaken;
    for (id, bmc) in [("a1", "10.8.0.1"), ("s1", "10.8.0.2"), ("r1", "10.8.0.3"), ("a2", "10.8.0.4")] {
        store
            .machine_upsert(&NewMachine {
                id: id.into(),
                bmc_address: bmc.parse().unwrap(),
                vendor: Some("Dell".into()),
                model: Some("PowerEdge R760".into()),
                state: HostState::Assigned,
                instance_id: Some(format!("inst-{id}")),
                labels: None,
            })
            .await
            .unwrap();
        let new =
            NewRequest { machine_id: id.into(), initiator: "cli:op".into(), update_message: None, workflow_id: None };
        assert!(matches!(store.request_create(&new).await.unwrap(), RequestCreate::Created(_)));
    }
    // Approved first: the skip gives nothing up; the approval is on record once.
    assert_eq!(store.request_approve("a1", "tenant-alice", 10).await.unwrap(), ApprovalTaken::Approved);
    assert!(!store.request_skip_at_deadline("a1").await.unwrap(), "approved first: not given up");
    assert_eq!(store.request_approve("a1", "tenant-bob", 20).await.unwrap(), ApprovalTaken::AlreadyApproved);
    assert!(store.request_get("a1").await.unwrap().unwrap().user_approval);
    assert_eq!(store.approvals_of("a1").await.unwrap()[0].approved_by, "tenant-alice");
    // Skipped first: the approval approves nothing.
    assert!(store.request_skip_at_deadline("s1").await.unwrap());
    assert!(store.request_skip_at_deadline("s1").await.unwrap(), "a retried skip is the same skip");
    assert_eq!(store.request_approve("s1", "tenant-carol", 30).await.unwrap(), ApprovalTaken::DeadlineSkipped);
    assert!(!store.request_get("s1").await.unwrap().unwrap().user_approval, "nothing approved");
    assert!(store.approvals_of("s1").await.unwrap().is_empty(), "no approval on record");
    // Issue 26 item 6: a started request (protected, platform possibly changed) is never given
    // up by the deadline, even without an approval on record: only its own restore ends it.
    store.request_mark_started("a2", 50).await.unwrap();
    assert!(!store.request_skip_at_deadline("a2").await.unwrap(), "started: not given up");
    assert!(!store.request_get("a2").await.unwrap().unwrap().user_approval);
    // A race: ten approvals and ten skips at once; one kind wins, the other is told.
    let (approvals, skips) = futures::join!(
        futures::future::join_all((0..10).map(|i| store.request_approve("r1", "tenant-dave", 40 + i))),
        futures::future::join_all((0..10).map(|_| store.request_skip_at_deadline("r1"))),
    );
    let approved = approvals.iter().filter(|a| matches!(a, Ok(ApprovalTaken::Approved))).count();
    let refused = approvals.iter().filter(|a| matches!(a, Ok(ApprovalTaken::DeadlineSkipped))).count();
    let given_up = skips.iter().filter(|s| matches!(s, Ok(true))).count();
    assert!(approvals.iter().all(Result::is_ok) && skips.iter().all(Result::is_ok), "{approvals:?} {skips:?}");
    let flag = store.request_get("r1").await.unwrap().unwrap().user_approval;
    if flag {
        assert_eq!((approved, given_up), (1, 0), "approved: exactly one approval, no skip");
    } else {
        assert_eq!((approved, refused, given_up > 0), (0, 10, true), "skipped: every approval refused");
    }
}

crate::both_backends!(
    a_hold_is_replaced_by_the_next_skip_of_its_machine,
    a_new_request_for_the_host_ends_its_hold,
    the_first_approval_of_a_request_is_kept_and_old_requests_are_pruned,
    an_approval_and_the_deadline_skip_are_decided_once
);
