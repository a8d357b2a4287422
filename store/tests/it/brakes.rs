//! The operator's brakes (migration 0019), on both backends: freezes set, listed and lifted (by
//! id or by scope), each audited with the caller's actor; an empty reason and a bad selector
//! refused naming the problem, changing nothing; a target paused by hand, listed, and cleared by
//! `budget resume` in the same transaction as its error-budget record.

use crate::common;

use common::Ctx;
use std::collections::BTreeMap;

use hostfw_model::gates::{FreezeScope, Target};
use hostfw_model::{ComponentType, HostState};
use hostfw_store::{
    FreezeSelector, NewMachine, NewRequest, RequestCreate, StoreError, AUDIT_BUDGET_PAUSE, AUDIT_BUDGET_RESUME,
    AUDIT_FREEZE_LIFT, AUDIT_FREEZE_SET,
};

async fn freezes_are_set_listed_and_lifted_with_audit(Ctx { store, .. }: Ctx) {
    let site = store.freeze_set("cli:alice", None, "holiday change freeze", false).await.unwrap();
    assert_eq!((site.id, &site.scope, site.drain), (1, &FreezeScope::Site, false));
    let rack = store.freeze_set("cli:bob", Some("label=rack=r12"), "power work", true).await.unwrap();
    assert_eq!(rack.id, 2);
    let listed = store.freeze_list().await.unwrap();
    assert_eq!(listed, vec![site.clone(), rack.clone()]);
    let audit = store.audit_list(1).await.unwrap();
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("cli:bob", AUDIT_FREEZE_SET));
    assert_eq!(audit[0].target, "label=rack=r12");
    assert!(audit[0].detail.contains("power work") && audit[0].detail.contains("drain"), "{}", audit[0].detail);

    let lifted = store.unfreeze("cli:carol", &FreezeSelector::Scope(None)).await.unwrap();
    assert_eq!(lifted, vec![site]);
    let audit = store.audit_list(1).await.unwrap();
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("cli:carol", AUDIT_FREEZE_LIFT));
    assert!(audit[0].detail.contains("set by cli:alice"), "{}", audit[0].detail);
    assert_eq!(store.freeze_list().await.unwrap(), vec![rack.clone()]);

    let lifted = store.unfreeze("cli:carol", &FreezeSelector::Id(2)).await.unwrap();
    assert_eq!(lifted, vec![rack]);
    assert!(store.freeze_list().await.unwrap().is_empty());
    let again = store.unfreeze("cli:carol", &FreezeSelector::Id(2)).await.unwrap_err();
    assert!(again.is_not_found(), "{again}");
    // Ids are never reused: a lifted freeze keeps its row.
    let next = store.freeze_set("cli:alice", Some("model=Dell Inc./R750"), "bad BMC image", false).await.unwrap();
    assert_eq!(next.id, 3);
    assert_eq!(store.audit_list(10).await.unwrap().len(), 5, "3 set + 2 lifted");
}

async fn bad_freezes_are_refused_and_change_nothing(Ctx { store, .. }: Ctx) {
    let empty = store.freeze_set("cli:alice", None, "   ", false).await.unwrap_err();
    assert!(matches!(&empty, StoreError::Invalid { reason, .. } if reason.contains("needs a reason")), "{empty}");
    let bad = store.freeze_set("cli:alice", Some("rack=r12"), "why", false).await.unwrap_err();
    assert!(matches!(&bad, StoreError::Invalid { id, .. } if id == "rack=r12"), "{bad}");
    assert!(bad.to_string().contains("\"rack=r12\""), "the error names the selector: {bad}");
    let unknown = store.unfreeze("cli:alice", &FreezeSelector::Scope(Some("label=Rack=1".into()))).await.unwrap_err();
    assert!(matches!(unknown, StoreError::Invalid { .. }), "{unknown}");
    let none = store.unfreeze("cli:alice", &FreezeSelector::Scope(None)).await.unwrap_err();
    assert!(none.is_not_found(), "{none}");
    assert!(store.freeze_list().await.unwrap().is_empty());
    assert!(store.audit_list(10).await.unwrap().is_empty(), "nothing audited");
}

async fn a_manual_pause_is_listed_and_cleared_by_resume(Ctx { store, .. }: Ctx) {
    let t = Target {
        vendor: "Dell Inc.".into(),
        model: "R750".into(),
        component: ComponentType::Bmc,
        version: "7.1".into(),
    };
    let refused = store.target_pause(&t, "cli:alice", "").await.unwrap_err();
    assert!(matches!(refused, StoreError::Invalid { .. }), "{refused}");
    assert!(store.target_pauses().await.unwrap().is_empty());
    let pause = store.target_pause(&t, "cli:alice", "vendor recall").await.unwrap();
    assert_eq!((pause.by.as_str(), pause.reason.as_str()), ("cli:alice", "vendor recall"));
    let twice = store.target_pause(&t, "cli:bob", "again").await.unwrap();
    assert_eq!(twice, pause, "the first pause is kept");
    assert_eq!(store.target_pauses().await.unwrap(), vec![pause.clone()]);
    let audit = store.audit_list(10).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("cli:alice", AUDIT_BUDGET_PAUSE));

    // No error-budget record, only the pause: resume clears it.
    let resumed = store.target_resume(&t, "cli:bob").await.unwrap().expect("paused");
    assert_eq!((resumed.record, resumed.pause), (None, Some(pause)));
    assert!(store.target_pauses().await.unwrap().is_empty());
    let audit = store.audit_list(1).await.unwrap();
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("cli:bob", AUDIT_BUDGET_RESUME));
    assert!(audit[0].detail.contains("pause set by cli:alice"), "{}", audit[0].detail);

    // A pause beside a record: one resume clears both.
    store.target_attempt(&t, "m1").await.unwrap();
    store.target_pause(&t, "cli:alice", "again").await.unwrap();
    let resumed = store.target_resume(&t, "cli:bob").await.unwrap().expect("on record");
    assert!(resumed.record.is_some() && resumed.pause.is_some());
    assert!(store.target_pauses().await.unwrap().is_empty());
    assert!(store.target_records().await.unwrap().is_empty());
}

/// A request made from a plan read before a freeze committed is refused in its own transaction
/// when it honours freezes (the scheduler's path), names the freeze, and writes nothing; one that
/// does not (an operator's `--ignore-rollout-gates`) is made; a freeze elsewhere holds nothing.
async fn a_request_honouring_freezes_is_refused_in_its_transaction(Ctx { store, .. }: Ctx) {
    for (id, rack) in [("m1", "r1"), ("m2", "r2"), ("m3", "r1")] {
        let labels = [("rack".to_string(), rack.to_string())].into_iter().collect();
        let machine = NewMachine {
            id: id.into(),
            bmc_address: format!("bmc-{id}").parse().unwrap(),
            vendor: Some("Dell Inc.".into()),
            model: Some("PowerEdge R750".into()),
            state: HostState::Ready,
            instance_id: None,
            labels: Some(labels),
        };
        store.machine_upsert(&machine).await.unwrap();
    }
    let request = |id: &str| NewRequest {
        machine_id: id.into(),
        initiator: "Automated".into(),
        update_message: None,
        workflow_id: None,
    };
    let freeze = store.freeze_set("cli:alice", Some("label=rack=r1"), "power work", false).await.unwrap();
    let err = store.request_create_guarded(&request("m1"), &BTreeMap::new(), true, None).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Frozen { machine, freeze_id, .. } if machine == "m1" && *freeze_id == freeze.id),
        "{err:?}"
    );
    assert!(err.to_string().contains("hostfw unfreeze --id 1") && err.to_string().contains("power work"), "{err}");
    assert!(store.request_get("m1").await.unwrap().is_none(), "nothing was written");
    let other = store.request_create_guarded(&request("m2"), &BTreeMap::new(), true, None).await.unwrap();
    assert!(matches!(other, RequestCreate::Created(_)), "rack r2 is not frozen: {other:?}");
    let forced = store.request_create_guarded(&request("m3"), &BTreeMap::new(), false, None).await.unwrap();
    assert!(matches!(forced, RequestCreate::Created(_)), "the operator's override: {forced:?}");
    store.unfreeze("cli:alice", &FreezeSelector::Id(freeze.id)).await.unwrap();
    let after = store.request_create_guarded(&request("m1"), &BTreeMap::new(), true, None).await.unwrap();
    assert!(matches!(after, RequestCreate::Created(_)), "lifted: {after:?}");
}

crate::both_backends!(
    a_request_honouring_freezes_is_refused_in_its_transaction,
    freezes_are_set_listed_and_lifted_with_audit,
    bad_freezes_are_refused_and_change_nothing,
    a_manual_pause_is_listed_and_cleared_by_resume
);
