//! A stopping worker does not wait out the notifier's round: the round (which otherwise delivers
//! for a minute at a time) ends as soon as the worker raises `Deps::stopping`, with what it did.
//! Before, every worker stop (a SIGTERM at a site, each test site's shutdown) waited up to the
//! round's end.

use std::time::Duration;

use hostfw_workflows::site::contracts::NotifierRoundRequest;

use crate::common::{deps, site_toml};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notifier_round_ends_when_the_worker_begins_to_stop() {
    let dir = tempfile::tempdir().unwrap();
    let site = site_toml().install(dir.path());
    let deps = deps(&site).await;
    let round_deps = deps.clone();
    // A round of an hour: only the stop can end it within the test's bound.
    let round = tokio::spawn(async move {
        hostfw_activities::site::notifier::round(&round_deps, NotifierRoundRequest { run_for_secs: 3600 }).await
    });
    deps.stopping.begin();
    let ended = tokio::time::timeout(Duration::from_secs(120), round).await;
    let summary = ended.expect("the round ended when the worker began to stop").unwrap();
    assert!(summary.is_ok(), "it ends as a round does, with what it did: {summary:?}");
}
