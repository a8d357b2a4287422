//! The webhook outbox (migration 0023) on both backends: each cause (freeze set and lifted, a
//! manual pause, a catalog revision, a request turning exhausted, a host entering
//! WaitingForApproval, an overdue approval, a canary wave opening, the failure that spends a
//! target's error budget) writes its event in its own transaction, once; a refused or dropped cause writes none. Deliveries: fanned out per webhook
//! that wants the kind, claimed under a lease (a second worker gets nothing while it runs, and
//! gets it once it has run out), retried at their time, delivered or given up; listed with
//! their state; finished ones pruned after the retention.

use crate::common;

use common::Ctx;
use hostfw_model::gates::{Target, WaveMark, WaveRecord};
use hostfw_model::{ComponentType, HostState, HostSubstate, NotificationKind};
use hostfw_store::{FreezeSelector, NewMachine, NewRequest, Store};

async fn machine(store: &Store, id: &str) {
    let new = NewMachine {
        id: id.to_owned(),
        bmc_address: format!("bmc-{id}").parse().unwrap(),
        vendor: None,
        model: None,
        state: HostState::Ready,
        instance_id: None,
        labels: None,
    };
    store.machine_upsert(&new).await.unwrap();
}

/// The kinds and subjects of every recorded event, oldest first.
async fn events(store: &Store) -> Vec<(NotificationKind, String)> {
    let mut all: Vec<_> =
        store.notification_list(1000).await.unwrap().into_iter().map(|r| (r.event.kind, r.event.subject)).collect();
    all.reverse();
    all
}

fn target() -> Target {
    Target { vendor: "Dell".into(), model: "R750".into(), component: ComponentType::Bmc, version: "2.1".into() }
}

async fn each_cause_writes_its_event_once(Ctx { store, .. }: Ctx) {
    use NotificationKind::*;
    let freeze = store.freeze_set("cli:alice", Some("label=rack=r1"), "power work", false).await.unwrap();
    store.unfreeze("cli:bob", &FreezeSelector::Id(freeze.id)).await.unwrap();
    store.target_pause(&target(), "cli:alice", "bad image").await.unwrap();
    store.target_pause(&target(), "cli:alice", "again").await.unwrap(); // paused already: no new event
    let v = store.firmware_config_put("cli:carol", "# doc\n", "aa").await.unwrap();

    machine(&store, "m1").await;
    let request = NewRequest {
        machine_id: "m1".into(),
        initiator: "Automated".into(),
        update_message: None,
        workflow_id: Some("host-reprovision/m1".into()),
    };
    store.request_create(&request).await.unwrap();
    store.request_record_retry("m1", 1, false).await.unwrap();
    store.request_record_retry("m1", 5, true).await.unwrap();
    store.request_record_retry("m1", 5, true).await.unwrap(); // exhausted already: no new event
    let waiting = Some(HostSubstate::WaitingForApproval);
    store.machine_set_state("m1", HostState::Assigned, waiting, "waiting for approval").await.unwrap();
    store.machine_set_state("m1", HostState::Assigned, waiting, "still waiting").await.unwrap(); // no new event
    store.machine_set_approval_overdue("m1", "approval overdue", 1_000).await.unwrap();
    let mark = |wave| WaveMark { target: target(), record: WaveRecord { hosts: 10, wave }, attempted_hosts: 0 };
    store.target_waves_mark(&[mark(1)], &store.gate_fence().await.unwrap()).await.unwrap();
    store.target_waves_mark(&[mark(1)], &store.gate_fence().await.unwrap()).await.unwrap(); // the same wave: no new event
    store.target_waves_mark(&[mark(2)], &store.gate_fence().await.unwrap()).await.unwrap();

    let t = target().to_string();
    assert_eq!(
        events(&store).await,
        vec![
            (FreezeChanged, "label=rack=r1".to_string()),
            (FreezeChanged, "label=rack=r1".to_string()),
            (TargetPaused, t.clone()),
            (CatalogChanged, format!("firmware-config version {}", v.version)),
            (HostExhausted, "m1".to_string()),
            (ApprovalNeeded, "m1".to_string()),
            (ApprovalOverdue, "m1".to_string()),
            (WaveOpened, t.clone()),
            (WaveOpened, t),
        ]
    );
    let list = store.notification_list(100).await.unwrap();
    let lifted = list.iter().rev().nth(1).unwrap();
    assert_eq!(lifted.event.data["action"], "lifted");
    assert_eq!(lifted.event.data["by"], "cli:bob");
    assert_eq!(list[0].event.data["wave"], 2);
    let ids: std::collections::BTreeSet<_> = list.iter().map(|r| r.event.id.clone()).collect();
    assert_eq!(ids.len(), list.len(), "every event has its own id");
}

async fn a_refused_cause_writes_no_event(Ctx { store, .. }: Ctx) {
    assert!(store.freeze_set("cli:alice", None, "  ", false).await.is_err());
    assert!(store.unfreeze("cli:alice", &FreezeSelector::Id(7)).await.is_err());
    assert!(store.target_pause(&target(), "cli:alice", "").await.is_err());
    assert!(store.request_record_retry("ghost", 5, true).await.unwrap_err().is_not_found());
    let waiting = Some(HostSubstate::WaitingForApproval);
    assert!(store.machine_set_state("ghost", HostState::Assigned, waiting, "x").await.unwrap_err().is_not_found());
    assert!(store.machine_set_approval_overdue("ghost", "x", 1).await.unwrap_err().is_not_found());
    // A wave mark the store drops (a resume cleared the attempts it was decided on) opens nothing.
    let stale = WaveMark { target: target(), record: WaveRecord { hosts: 4, wave: 1 }, attempted_hosts: 3 };
    assert_eq!(store.target_waves_mark(&[stale], &store.gate_fence().await.unwrap()).await.unwrap(), vec![target()]);
    assert!(events(&store).await.is_empty(), "no cause, no event");
    assert_eq!(store.notification_pending().await.unwrap(), 0);
}

async fn deliveries_are_leased_retried_delivered_given_up_and_pruned(Ctx { store, .. }: Ctx) {
    use NotificationKind::*;
    store.freeze_set("cli:alice", None, "change freeze", false).await.unwrap();
    store.target_pause(&target(), "cli:alice", "bad image").await.unwrap();
    assert_eq!(store.notification_pending().await.unwrap(), 2, "not fanned out yet, still pending");
    let webhooks =
        vec![("ops".to_string(), NotificationKind::ALL.to_vec()), ("freezes".to_string(), vec![FreezeChanged])];
    assert_eq!(store.notification_fan_out(&webhooks).await.unwrap(), 2);
    assert_eq!(store.notification_fan_out(&webhooks).await.unwrap(), 0, "fanned out once");
    assert_eq!(store.notification_pending().await.unwrap(), 3, "ops gets both, freezes the freeze");

    let now = hostfw_store::now_ms() + 1;
    let a = store.notification_claim("worker-a", now, 30_000, 10).await.unwrap();
    assert_eq!(a.len(), 3);
    assert!(store.notification_claim("worker-b", now + 1, 30_000, 10).await.unwrap().is_empty(), "leased to a");
    // Worker a dies: after its lease, b takes them over, attempts unchanged (none was recorded).
    let b = store.notification_claim("worker-b", now + 30_001, 30_000, 10).await.unwrap();
    assert_eq!(b.len(), 3);
    assert!(b.iter().all(|d| d.attempts == 0));
    assert_eq!(
        b.iter().map(|d| d.event.id.clone()).collect::<std::collections::BTreeSet<_>>(),
        a.iter().map(|d| d.event.id.clone()).collect(),
        "the same events, under the same ids"
    );

    let freeze_to_ops = b.iter().find(|d| d.webhook == "ops" && d.event.kind == FreezeChanged).unwrap();
    let pause_to_ops = b.iter().find(|d| d.event.kind == TargetPaused).unwrap();
    let freeze_to_freezes = b.iter().find(|d| d.webhook == "freezes").unwrap();
    let at = now + 30_002;
    store.notification_delivered(&freeze_to_ops.event.id, "ops", at).await.unwrap();
    store.notification_failed(&pause_to_ops.event.id, "ops", "POST answered 503", Some(at + 5_000), at).await.unwrap();
    store
        .notification_failed(&freeze_to_freezes.event.id, "freezes", "gave up after 9 attempts", None, at)
        .await
        .unwrap();
    assert_eq!(store.notification_pending().await.unwrap(), 1);
    assert!(store.notification_claim("worker-b", at + 4_999, 30_000, 10).await.unwrap().is_empty(), "not due yet");
    let retry = store.notification_claim("worker-b", at + 5_000, 30_000, 10).await.unwrap();
    assert_eq!((retry.len(), retry[0].attempts), (1, 1));

    let list = store.notification_list(10).await.unwrap();
    let pause = list.iter().find(|r| r.event.kind == TargetPaused).unwrap();
    assert_eq!(pause.deliveries[0].state, "pending");
    assert_eq!(pause.deliveries[0].last_error.as_deref(), Some("POST answered 503"));
    let freeze = list.iter().find(|r| r.event.kind == FreezeChanged).unwrap();
    let states: Vec<_> = freeze.deliveries.iter().map(|d| (d.webhook.as_str(), d.state.as_str())).collect();
    assert_eq!(states, [("freezes", "gave_up"), ("ops", "delivered")]);
    let counters = store.counter_list().await.unwrap();
    let count = |label: &str| {
        counters.iter().find(|(n, l, _)| n == hostfw_store::NOTIFICATION_DELIVERIES_TOTAL && l == label).map(|c| c.2)
    };
    assert_eq!((count("delivered"), count("failed"), count("gave_up")), (Some(1), Some(1), Some(1)));

    // Pruning keeps the event whose delivery is still pending, whatever its age.
    assert_eq!(store.notification_prune(hostfw_store::now_ms() + 60_000).await.unwrap(), 1);
    let left = store.notification_list(10).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].event.kind, TargetPaused);
}

async fn the_failure_that_spends_the_error_budget_writes_one_target_paused(Ctx { store, .. }: Ctx) {
    use hostfw_model::gates::ErrorBudget;
    let t = target();
    for m in ["h1", "h2", "h3"] {
        store.target_attempt(&t, m).await.unwrap();
    }
    let budget = ErrorBudget { failed_hosts: 2, failed_percent: 0, min_hosts: 0 };
    let fail = |m: &'static str| {
        let store = store.clone();
        async move { store.target_failure_under(m, ComponentType::Bmc, "2.1", "flash failed", Some(&budget)).await }
    };
    assert!(fail("h1").await.unwrap());
    assert!(events(&store).await.is_empty(), "one failure of a budget of two pauses nothing");
    assert!(fail("h2").await.unwrap());
    assert!(!fail("h2").await.unwrap(), "recorded once");
    assert!(fail("h3").await.unwrap());
    assert_eq!(events(&store).await, vec![(NotificationKind::TargetPaused, t.to_string())], "once, when spent");
    let event = &store.notification_list(1).await.unwrap()[0].event;
    assert_eq!(event.data["cause"], "error_budget");
    assert_eq!(event.data["last_failure"], "h2");
    assert!(event.data["rule"].as_str().unwrap().contains("error_budget_failed_hosts = 2"), "{}", event.data);
    // Without a budget (the plain `target_failure`) no event is written.
    store.target_attempt(&t, "h4").await.unwrap();
    assert!(store.target_failure("h4", ComponentType::Bmc, "2.1", "x").await.unwrap());
    assert_eq!(events(&store).await.len(), 1);
}

crate::both_backends!(
    the_failure_that_spends_the_error_budget_writes_one_target_paused,
    each_cause_writes_its_event_once,
    a_refused_cause_writes_no_event,
    deliveries_are_leased_retried_delivered_given_up_and_pruned
);
