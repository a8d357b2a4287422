//! The error budget's record (`target_hosts`), on both backends: attempts counted once per host
//! and target, failures kept across a host's later attempts, a failure without an attempt on
//! record ignored, records grouped per target in order, and a resume that clears one target only
//! and audits what it cleared; attempts open until their run finishes or fails (canary waves).

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

/// The canary waves' part of the record (migration 0013): which attempts are still open, and
/// when the latest one ended. A finished run ends every open attempt of its host; a failure ends
/// one; a new attempt opens it again; an ended attempt is not ended twice.
async fn attempts_stay_open_until_their_run_finishes_or_fails(Ctx { store, .. }: Ctx) {
    let t = target("R760", "7.20");
    let other = Target { component: ComponentType::Uefi, ..target("R760", "2.1") };
    store.target_attempt(&t, "h1", 100).await.unwrap();
    store.target_attempt(&other, "h1", 110).await.unwrap();
    store.target_attempt(&t, "h2", 120).await.unwrap();
    store.target_attempt(&t, "h3", 130).await.unwrap();
    let records = store.target_records().await.unwrap();
    let rec = records.iter().find(|r| r.target == t).unwrap();
    assert_eq!(rec.open, vec!["h1", "h2", "h3"]);
    assert_eq!((rec.last_done_ms, rec.last_attempt_ms), (None, Some(130)));

    assert_eq!(store.target_finish("h1", 500).await.unwrap(), 2, "both of h1's attempts end with its run");
    assert!(store.target_failure("h2", ComponentType::Bmc, "7.20", "task failed", 400).await.unwrap());
    let records = store.target_records().await.unwrap();
    let rec = records.iter().find(|r| r.target == t).unwrap();
    assert_eq!(rec.open, vec!["h3"]);
    assert_eq!(rec.last_done_ms, Some(500));
    assert_eq!(rec.failed_last, 1, "h2's latest attempt failed");
    assert!(records.iter().find(|r| r.target == other).unwrap().open.is_empty());

    // h2 retries: open again, its failure kept; its run then finishes.
    store.target_attempt(&t, "h2", 600).await.unwrap();
    assert_eq!(store.target_finish("h1", 650).await.unwrap(), 0, "h1 has nothing open");
    let rec = store.target_records().await.unwrap().into_iter().find(|r| r.target == t).unwrap();
    assert_eq!(rec.open, vec!["h2", "h3"]);
    assert_eq!(
        (rec.failures.len(), rec.failed_last),
        (1, 0),
        "h2's failure is kept; its latest attempt has not failed"
    );
    store.target_finish("h2", 700).await.unwrap();
    store.target_finish("h3", 800).await.unwrap();
    let rec = store.target_records().await.unwrap().into_iter().find(|r| r.target == t).unwrap();
    assert!(rec.open.is_empty());
    assert_eq!((rec.last_done_ms, rec.attempted_hosts, rec.failures.len()), (Some(800), 3, 1));
}

crate::both_backends!(
    attempts_and_failures_count_hosts_once_and_resume_clears_one_target,
    attempts_stay_open_until_their_run_finishes_or_fails
);
