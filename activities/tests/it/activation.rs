//! The activation activity (`hostfw.host.activate`, called directly) against bmc-sim and a SQLite
//! site database: a step records that it issued its reset, and a retry of the same step that finds
//! a fresh record (the worker died while waiting) waits instead of resetting the host again; a
//! stale record (the earlier wait ran out) resets again. The record is gone once the step is done.

use crate::common;

use common::{fleet, register, site_toml};
use hostfw_activities::activation::{activate, StepKey};
use hostfw_store::now_ms;
use hostfw_workflows::{ActivateInput, ActivationStep};

fn restart() -> ActivateInput {
    ActivateInput {
        machine_id: "h00".into(),
        step: ActivationStep::SystemReset { reset_type: "ForceRestart".into() },
        waits: Default::default(),
        records: Vec::new(),
    }
}

fn key(activity_id: &str) -> StepKey {
    StepKey { run_id: "run-1".into(), activity_id: activity_id.into() }
}

#[tokio::test]
async fn a_retried_step_waits_for_the_reset_an_earlier_attempt_issued() {
    let dir = tempfile::tempdir().unwrap();
    let site = site_toml().install(dir.path());
    let fleet = fleet(1, "reset_seconds = 0.3").await;
    let deps = crate::common::deps(&site).await;
    register(&deps.store, &fleet).await;
    let resets = || fleet.stats().resets_system;

    // First attempt: issues the restart and clears its mark when the host is back on.
    activate(&deps, restart(), Some(key("7"))).await.unwrap();
    assert_eq!(resets(), 1);
    assert_eq!(deps.store.activation_mark_get("run-1", "7").await.unwrap(), None, "cleared when done");

    // An attempt that issued the restart 5 s ago and died: the retry only waits.
    deps.store.activation_mark_put("run-1", "8", "h00", now_ms() - 5_000).await.unwrap();
    activate(&deps, restart(), Some(key("8"))).await.unwrap();
    assert_eq!(resets(), 1, "no second restart for the same step");
    assert_eq!(deps.store.activation_mark_get("run-1", "8").await.unwrap(), None);

    // A mark older than the step's waiting budget: the earlier wait ran out, so restart again.
    deps.store.activation_mark_put("run-1", "9", "h00", now_ms() - 11 * 60_000).await.unwrap();
    activate(&deps, restart(), Some(key("9"))).await.unwrap();
    assert_eq!(resets(), 2);

    // Another step of the same run (its own activity id) is not confused with step 8.
    deps.store.activation_mark_put("run-1", "8", "h00", now_ms()).await.unwrap();
    activate(&deps, restart(), Some(key("10"))).await.unwrap();
    assert_eq!(resets(), 3);

    // No workflow (no key): always issues.
    activate(&deps, restart(), None).await.unwrap();
    assert_eq!(resets(), 4);
    fleet.shutdown().await;
}
