//! The error budget's record (`target_hosts`), on both backends: attempts counted once per host
//! and target, failures kept across a host's later attempts, a failure without an attempt on
//! record ignored, records grouped per target in order, and a resume that clears one target only
//! and audits what it cleared; attempts open until their run finishes or fails (canary waves),
//! every time by the database's clock; the canary waves' frozen host count and wave reached.

use crate::common;

use common::Ctx;
use hostfw_model::gates::{Target, WaveMark, WaveRecord};
use hostfw_model::ComponentType;
use hostfw_store::AUDIT_BUDGET_RESUME;

fn target(model: &str, version: &str) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component: ComponentType::Bmc, version: version.into() }
}

async fn attempts_and_failures_count_hosts_once_and_resume_clears_one_target(Ctx { store, .. }: Ctx) {
    let bad = target("R750", "7.10");
    let good = target("R760", "7.20");
    for m in ["a1", "a2", "a3"] {
        store.target_attempt(&bad, m).await.unwrap();
    }
    store.target_attempt(&bad, "a1").await.unwrap();
    store.target_attempt(&good, "b1").await.unwrap();
    assert!(store.target_failure("a1", ComponentType::Bmc, "7.10", "task failed").await.unwrap());
    tick(&store).await;
    assert!(store.target_failure("a2", ComponentType::Bmc, "7.10", "upload refused").await.unwrap());
    assert!(
        !store.target_failure("a1", ComponentType::Bmc, "7.10", "retry 1/3 in 60 s").await.unwrap(),
        "the same failure recorded again keeps its first reason"
    );
    // A retry of a1 begins again: its failure stays on record.
    tick(&store).await;
    store.target_attempt(&bad, "a1").await.unwrap();
    assert!(
        !store.target_failure("zz", ComponentType::Bmc, "7.10", "no attempt").await.unwrap(),
        "a failure with no attempt on record counts nowhere"
    );
    assert!(!store.target_failure("a3", ComponentType::Uefi, "7.10", "other component").await.unwrap());

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

    let cleared = store.target_resume(&bad, "alice").await.unwrap().expect("on record").record.expect("a record");
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
/// one; a new attempt opens it again; an ended attempt is not ended twice. The record names every
/// attempted host: open, failed or finished.
async fn attempts_stay_open_until_their_run_finishes_or_fails(Ctx { store, .. }: Ctx) {
    let t = target("R760", "7.20");
    let other = Target { component: ComponentType::Uefi, ..target("R760", "2.1") };
    let before = store.db_now_ms().await.unwrap();
    store.target_attempt(&t, "h1").await.unwrap();
    store.target_attempt(&other, "h1").await.unwrap();
    store.target_attempt(&t, "h2").await.unwrap();
    store.target_attempt(&t, "h3").await.unwrap();
    let after = store.db_now_ms().await.unwrap();
    let records = store.target_records().await.unwrap();
    let rec = records.iter().find(|r| r.target == t).unwrap();
    assert_eq!(rec.open, vec!["h1", "h2", "h3"]);
    assert_eq!(rec.last_done_ms, None);
    let began = rec.last_attempt_ms.expect("an attempt began");
    assert!(before <= began && began <= after, "by the database's clock: {before} <= {began} <= {after}");

    tick(&store).await;
    assert_eq!(store.target_finish("h1").await.unwrap(), 2, "both of h1's attempts end with its run");
    assert!(store.target_failure("h2", ComponentType::Bmc, "7.20", "task failed").await.unwrap());
    let done = store.db_now_ms().await.unwrap();
    let records = store.target_records().await.unwrap();
    let rec = records.iter().find(|r| r.target == t).unwrap();
    assert_eq!(rec.open, vec!["h3"]);
    assert_eq!(rec.finished, vec!["h1"], "h1 finished and never failed it; h2 failed");
    assert!(rec.last_done_ms.is_some_and(|d| d > began && d <= done), "{:?}", rec.last_done_ms);
    assert_eq!(rec.failed_last, 1, "h2's latest attempt failed");
    assert!(records.iter().find(|r| r.target == other).unwrap().open.is_empty());

    // h2 retries: open again, its failure kept; its run then finishes.
    tick(&store).await;
    store.target_attempt(&t, "h2").await.unwrap();
    assert_eq!(store.target_finish("h1").await.unwrap(), 0, "h1 has nothing open");
    let rec = store.target_records().await.unwrap().into_iter().find(|r| r.target == t).unwrap();
    assert_eq!(rec.open, vec!["h2", "h3"]);
    assert_eq!(
        (rec.failures.len(), rec.failed_last),
        (1, 0),
        "h2's failure is kept; its latest attempt has not failed"
    );
    tick(&store).await;
    store.target_finish("h2").await.unwrap();
    store.target_finish("h3").await.unwrap();
    let last = store.db_now_ms().await.unwrap();
    let rec = store.target_records().await.unwrap().into_iter().find(|r| r.target == t).unwrap();
    assert!(rec.open.is_empty());
    assert!(rec.last_done_ms.is_some_and(|d| d > done && d <= last), "{:?}", rec.last_done_ms);
    assert_eq!((rec.attempted_hosts, rec.failures.len()), (3, 1));
    // Every attempted host by name, once: h2 among the failures (its retry finished), the
    // others finished (issue 31: the canary waves count each host once).
    assert_eq!(rec.finished, vec!["h1", "h3"]);
    // A finished host that attempts again is open, no longer finished.
    tick(&store).await;
    store.target_attempt(&t, "h1").await.unwrap();
    let rec = store.target_records().await.unwrap().into_iter().find(|r| r.target == t).unwrap();
    assert_eq!((rec.open.clone(), rec.finished.clone()), (vec!["h1".to_string()], vec!["h3".to_string()]));
}

/// The canary waves' record (migration 0017, `target_waves`): the pass's marks are read back
/// with the target's record (a target whose first wave started before any host planned its
/// install has that record alone); a mark only grows what is recorded; a mark read before a
/// resume is dropped; the resume clears the waves with the budget, in its audit.
async fn the_wave_record_is_frozen_grows_only_and_a_resume_clears_it(Ctx { store, .. }: Ctx) {
    let t = target("R760", "7.20");
    let mark = |hosts: u32, wave: u32, attempted_hosts: u32| WaveMark {
        target: t.clone(),
        record: WaveRecord { hosts, wave },
        attempted_hosts,
    };
    let waves_of = |records: Vec<hostfw_model::gates::TargetRecord>| {
        records.into_iter().find(|r| r.target == t).and_then(|r| r.waves)
    };
    // The pass that starts the canary: no attempt on record yet.
    assert!(store.target_waves_mark(&[mark(10, 1, 0)], &store.gate_fence().await.unwrap()).await.unwrap().is_empty());
    let records = store.target_records().await.unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!((records[0].attempted_hosts, records[0].waves), (0, Some(WaveRecord { hosts: 10, wave: 1 })));

    store.target_attempt(&t, "h1").await.unwrap();
    assert!(store.target_waves_mark(&[mark(10, 2, 1)], &store.gate_fence().await.unwrap()).await.unwrap().is_empty());
    assert_eq!(waves_of(store.target_records().await.unwrap()), Some(WaveRecord { hosts: 10, wave: 2 }));
    // A smaller count or an earlier wave (a pass that read an older view) shrinks nothing.
    assert!(store.target_waves_mark(&[mark(6, 1, 1)], &store.gate_fence().await.unwrap()).await.unwrap().is_empty());
    assert_eq!(waves_of(store.target_records().await.unwrap()), Some(WaveRecord { hosts: 10, wave: 2 }));
    // Hosts joined: the count grows.
    store.target_waves_mark(&[mark(16, 2, 1)], &store.gate_fence().await.unwrap()).await.unwrap();
    assert_eq!(waves_of(store.target_records().await.unwrap()), Some(WaveRecord { hosts: 16, wave: 2 }));

    // The operator resumes the target: its waves start again from the first.
    let cleared = store.target_resume(&t, "alice").await.unwrap().expect("on record").record.expect("a record");
    assert_eq!(cleared.waves, Some(WaveRecord { hosts: 16, wave: 2 }));
    assert!(store.target_records().await.unwrap().is_empty());
    let audit = store.audit_list(1).await.unwrap();
    assert!(audit[0].detail.contains("canary waves start again from the first (wave 2"), "{}", audit[0].detail);
    // A pass that read its view before the resume (1 attempt then, none now) writes nothing.
    let dropped = store.target_waves_mark(&[mark(16, 3, 1)], &store.gate_fence().await.unwrap()).await.unwrap();
    assert_eq!(dropped, vec![t.clone()]);
    assert!(store.target_records().await.unwrap().is_empty());
    // A resume with only the waves on record clears them too.
    store.target_waves_mark(&[mark(4, 1, 0)], &store.gate_fence().await.unwrap()).await.unwrap();
    assert!(store.target_resume(&t, "alice").await.unwrap().is_some());
    assert!(store.target_records().await.unwrap().is_empty());
}

/// The database's clock advanced past its current reading (times written after this are later
/// than those written before).
async fn tick(store: &hostfw_store::Store) {
    let now = store.db_now_ms().await.unwrap();
    while store.db_now_ms().await.unwrap() <= now {
        tokio::task::yield_now().await;
    }
}

crate::both_backends!(
    attempts_and_failures_count_hosts_once_and_resume_clears_one_target,
    attempts_stay_open_until_their_run_finishes_or_fails,
    the_wave_record_is_frozen_grows_only_and_a_resume_clears_it
);
