//! `hostfw config reload` on the offline site: with no worker running it stores and audits the
//! request, says no worker is running and fails; with a worker that polls and refuses (played here
//! through the store, as `hostfw_worker::live_config` records its answers) it prints that
//! worker's answer with the keys and "needs a restart", in the table and in JSON, and fails.

use std::time::Duration;

use hostfw_store::{ReloadAnswer, ReloadOutcome, AUDIT_CONFIG_RELOAD};

use crate::common::{json, Site};

#[tokio::test]
async fn without_a_worker_the_request_is_stored_and_the_command_fails() {
    let site = Site::new();
    let (res, out) = site.run(&["config", "reload", "--wait", "1"]).await;
    assert!(res.is_err(), "{out}");
    assert!(out.contains("reload request 1 by cli:"), "{out}");
    assert!(out.contains("no worker is running"), "{out}");
    let store = site.store().await;
    let request = store.config_reload_get(1).await.unwrap().expect("the request is stored");
    assert_eq!(request.worker, None, "for every worker");
    let audit = store.audit_list(5).await.unwrap();
    assert!(audit.iter().any(|e| e.action == AUDIT_CONFIG_RELOAD && e.actor == request.actor), "{audit:?}");
}

#[tokio::test]
async fn a_refusing_worker_is_printed_with_its_keys() {
    let site = Site::new();
    let store = site.store().await;
    store.worker_seen("host-a/42", 0).await.unwrap();
    // The worker: answers the request once it is stored.
    let worker = {
        let store = store.clone();
        tokio::spawn(async move {
            let request = loop {
                if let Some(r) = store.config_reload_pending("host-a/42", 0).await.unwrap().pop() {
                    break r;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let answer = ReloadAnswer {
                request_id: request.id,
                worker: "host-a/42".into(),
                outcome: ReloadOutcome::Refused,
                keys: vec!["temporal.task_queue".into()],
                problem: Some("needs a restart".into()),
                answered_at_ms: 0,
            };
            store.config_reload_answer(&answer, "worker:host-a/42").await.unwrap();
        })
    };
    let (res, out) = site.run(&["--format", "json", "config", "reload", "--wait", "30"]).await;
    worker.await.unwrap();
    assert!(res.is_err(), "a refusal fails the command: {out}");
    let report = json(&out);
    assert_eq!(report["live_workers"], serde_json::json!(["host-a/42"]), "{report}");
    assert_eq!(report["answers"][0]["outcome"], "refused", "{report}");
    assert_eq!(report["answers"][0]["keys"], serde_json::json!(["temporal.task_queue"]), "{report}");
    assert!(report["answers"][0]["answered_at"].is_string(), "a time in the JSON vocabulary: {report}");
    assert_eq!(report["ok"], false);

    // The table: the next request gets the same answer.
    store.worker_seen("host-a/42", 0).await.unwrap();
    let again = {
        let store = store.clone();
        tokio::spawn(async move {
            let request = loop {
                if let Some(r) = store.config_reload_pending("host-a/42", 1).await.unwrap().pop() {
                    break r;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let answer = ReloadAnswer {
                request_id: request.id,
                worker: "host-a/42".into(),
                outcome: ReloadOutcome::Refused,
                keys: vec!["temporal.task_queue".into()],
                problem: Some("needs a restart".into()),
                answered_at_ms: 0,
            };
            store.config_reload_answer(&answer, "worker:host-a/42").await.unwrap();
        })
    };
    let (res, out) = site.run(&["config", "reload", "--wait", "30"]).await;
    again.await.unwrap();
    assert!(res.is_err(), "{out}");
    let line = out.lines().find(|l| l.starts_with("host-a/42")).unwrap_or_else(|| panic!("no row:\n{out}"));
    assert!(
        line.contains("refused") && line.contains("temporal.task_queue") && line.contains("needs a restart"),
        "{line}"
    );
}
