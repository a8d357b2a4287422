//! Live configuration requests on both backends: a request is numbered and audited with its
//! actor; each worker sees the requests for every worker and for itself (not another's), after
//! the number it started from, until it answers; an answer is recorded once, audited, and read
//! back; worker presence lists the workers seen since a time.

use crate::common;

use common::Ctx;
use hostfw_store::{ReloadAnswer, ReloadOutcome, AUDIT_CONFIG_RELOAD, AUDIT_CONFIG_RELOAD_ANSWER};

fn answer(request_id: i64, worker: &str, outcome: ReloadOutcome, keys: &[&str]) -> ReloadAnswer {
    ReloadAnswer {
        request_id,
        worker: worker.to_string(),
        outcome,
        keys: keys.iter().map(|k| k.to_string()).collect(),
        problem: (outcome == ReloadOutcome::Refused).then(|| "needs a restart".to_string()),
        answered_at_ms: 0,
    }
}

async fn requests_reach_every_worker_until_answered(Ctx { store, .. }: Ctx) {
    assert_eq!(store.config_reload_last_id().await.unwrap(), 0);
    let all = store.config_reload_request("cli:alice", None).await.unwrap();
    let own = store.config_reload_request("signal:SIGHUP", Some("h/2")).await.unwrap();
    assert_eq!((all.id, own.id), (1, 2));
    assert_eq!(store.config_reload_get(1).await.unwrap(), Some(all.clone()));
    assert_eq!(store.config_reload_last_id().await.unwrap(), 2);

    let ids = |v: Vec<hostfw_store::ReloadRequest>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(store.config_reload_pending("h/1", 0).await.unwrap()), [1], "another worker's SIGHUP is not h/1's");
    assert_eq!(ids(store.config_reload_pending("h/2", 0).await.unwrap()), [1, 2]);
    assert_eq!(ids(store.config_reload_pending("h/2", 1).await.unwrap()), [2], "older requests are not answered");

    store
        .config_reload_answer(&answer(1, "h/1", ReloadOutcome::Applied, &["machine_updater.canary_soak"]), "worker:h/1")
        .await
        .unwrap();
    store
        .config_reload_answer(&answer(1, "h/2", ReloadOutcome::Refused, &["temporal.address"]), "worker:h/2")
        .await
        .unwrap();
    // A second answer to the same request changes nothing.
    store.config_reload_answer(&answer(1, "h/1", ReloadOutcome::Invalid, &[]), "worker:h/1").await.unwrap();
    assert!(store.config_reload_pending("h/1", 0).await.unwrap().is_empty());
    assert_eq!(ids(store.config_reload_pending("h/2", 0).await.unwrap()), [2]);

    let answers = store.config_reload_answers(1).await.unwrap();
    assert_eq!(answers.len(), 2);
    assert_eq!((answers[0].worker.as_str(), answers[0].outcome), ("h/1", ReloadOutcome::Applied));
    assert_eq!(answers[0].keys, ["machine_updater.canary_soak"]);
    assert_eq!(answers[1].outcome, ReloadOutcome::Refused);
    assert_eq!(answers[1].problem.as_deref(), Some("needs a restart"));
    assert!(answers[0].answered_at_ms >= all.requested_at_ms);

    let audit = store.audit_list(10).await.unwrap();
    let actions: Vec<(&str, &str, &str)> =
        audit.iter().map(|e| (e.actor.as_str(), e.action.as_str(), e.target.as_str())).collect();
    assert!(actions.contains(&("cli:alice", AUDIT_CONFIG_RELOAD, "all workers")), "{actions:?}");
    assert!(actions.contains(&("signal:SIGHUP", AUDIT_CONFIG_RELOAD, "h/2")), "{actions:?}");
    assert_eq!(audit.iter().filter(|e| e.action == AUDIT_CONFIG_RELOAD_ANSWER).count(), 2, "{actions:?}");
}

async fn presence_lists_the_workers_seen_since(Ctx { store, .. }: Ctx) {
    let before = store.db_now_ms().await.unwrap();
    store.worker_seen("h/1", before).await.unwrap();
    store.worker_seen("h/2", before).await.unwrap();
    store.worker_seen("h/1", before).await.unwrap();
    assert_eq!(store.workers_seen_since(before).await.unwrap(), ["h/1", "h/2"]);
    let later = store.db_now_ms().await.unwrap() + 60_000;
    assert!(store.workers_seen_since(later).await.unwrap().is_empty());
}

both_backends!(requests_reach_every_worker_until_answered, presence_lists_the_workers_seen_since);
