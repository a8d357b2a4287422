//! The error budget's record (`target_hosts`), on both backends: attempts counted once per host
//! and target, failures kept across a host's later attempts, a failure without an attempt on
//! record ignored, records grouped per target in order, and a resume that clears one target only
//! and audits what it cleared.

use crate::common;

use common::Ctx;
use hostfw_model::gates::Target;
use hostfw_model::ComponentType;
use hostfw_store::AUDIT_BUDGET_RESUME;

fn target(model: &str, version: &str) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component: ComponentType::Bmc, version: version.into() }
}

async fn attempts_and_failures_count_hosts_once_and_resume_clears_one_target(Ctx { store, .. }: Ctx) {
    let bad = target("R750", "7.10");
    let good = target("R760", "7.20");
    for (i, m) in ["a1", "a2", "a3"].iter().enumerate() {
        store.target_attempt(&bad, m, 100 + i as i64).await.unwrap();
    }
    store.target_attempt(&bad, "a1", 200).await.unwrap();
    store.target_attempt(&good, "b1", 150).await.unwrap();
    assert!(store.target_failure("a2", ComponentType::Bmc, "7.10", "upload refused", 300).await.unwrap());
    assert!(store.target_failure("a1", ComponentType::Bmc, "7.10", "task failed", 250).await.unwrap());
    assert!(
        !store.target_failure("a1", ComponentType::Bmc, "7.10", "retry 1/3 in 60 s", 260).await.unwrap(),
        "the same failure recorded again keeps its first reason"
    );
    // A retry of a1 begins again: its failure stays on record.
    store.target_attempt(&bad, "a1", 400).await.unwrap();
    assert!(
        !store.target_failure("zz", ComponentType::Bmc, "7.10", "no attempt", 500).await.unwrap(),
        "a failure with no attempt on record counts nowhere"
    );
    assert!(!store.target_failure("a3", ComponentType::Uefi, "7.10", "other component", 500).await.unwrap());

    let records = store.target_records().await.unwrap();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0].target, bad);
    assert_eq!(records[0].attempted_hosts, 3, "a1 attempted twice, counted once");
    let failed: Vec<(&str, &str)> =
        records[0].failures.iter().map(|f| (f.machine_id.as_str(), f.reason.as_str())).collect();
    assert_eq!(failed, vec![("a1", "task failed"), ("a2", "upload refused")], "oldest failure first");
    assert_eq!(
        (records[1].target.clone(), records[1].attempted_hosts, records[1].failures.len()),
        (good.clone(), 1, 0)
    );

    let cleared = store.target_resume(&bad, "alice").await.unwrap().expect("on record");
    assert_eq!(cleared.failures.len(), 2);
    let records = store.target_records().await.unwrap();
    assert_eq!(
        records.iter().map(|r| r.target.clone()).collect::<Vec<_>>(),
        vec![good],
        "only the resumed target is cleared"
    );
    let audit = store.audit_list(1).await.unwrap();
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("alice", AUDIT_BUDGET_RESUME));
    assert_eq!(audit[0].target, "Dell Inc. R750 bmc 7.10");
    assert!(audit[0].detail.contains("3 hosts attempted, 2 failed: a1, a2"), "{}", audit[0].detail);

    let again = store.target_resume(&bad, "alice").await.unwrap();
    assert!(again.is_none(), "nothing on record: nothing to resume");
    assert_eq!(store.audit_list(10).await.unwrap().len(), 1, "and nothing audited");
}

crate::both_backends!(attempts_and_failures_count_hosts_once_and_resume_clears_one_target);
