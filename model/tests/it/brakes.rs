//! The operator's brakes in the pass (`gates::freeze`, issue 27): a site freeze, a model freeze
//! and a label freeze keep the hosts they cover from starting (and leave their slots to the
//! others); a target paused by an operator holds the hosts that would install it; a host whose
//! request already runs is not touched by the gate; a direct request is held too.

use hostfw_model::gates::{rollout_holds, Brakes, Freeze, FreezeScope, OperatorPause, RolloutHold, Target};
use hostfw_model::{plan, CeilingLimits, ComponentType, HostView, PassInput, SchedulingPolicy, SkipReason};

use crate::common;

fn target(model: &str) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component: ComponentType::Bmc, version: "2.0".into() }
}

fn host(id: &str, model: &str, rack: &str) -> HostView {
    let mut h = common::drifted_host(id, vec![target(model)]);
    h.labels.insert("rack".into(), rack.into());
    h
}

fn freeze(id: i64, selector: Option<&str>) -> Freeze {
    Freeze {
        id,
        scope: selector.map_or(FreezeScope::Site, |s| FreezeScope::parse(s).unwrap()),
        reason: "change freeze for the holidays".into(),
        drain: false,
        by: "cli:alice".into(),
        at_ms: 0,
    }
}

fn pass(hosts: Vec<HostView>, brakes: Brakes) -> hostfw_model::Plan {
    plan(&PassInput {
        now_ms: 0,
        policy: SchedulingPolicy {
            autoupdate: true,
            limits: CeilingLimits { absolute: Some(10), percent: None },
            ..Default::default()
        },
        hosts,
        targets: Vec::new(),
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes,
    })
}

fn fleet() -> Vec<HostView> {
    vec![host("a", "R750", "r1"), host("b", "R650", "r1"), host("c", "R650", "r2")]
}

fn reason_of<'p>(p: &'p hostfw_model::Plan, id: &str) -> Option<&'p SkipReason> {
    p.skipped.iter().find(|s| s.machine_id == id).map(|s| &s.reason)
}

#[test]
fn no_brakes_start_everyone() {
    let p = pass(fleet(), Brakes::default());
    assert_eq!(p.start, vec!["a", "b", "c"]);
}

#[test]
fn a_site_freeze_starts_no_host_and_says_who_and_why() {
    let p = pass(fleet(), Brakes { freezes: vec![freeze(7, None)], pauses: vec![] });
    assert!(p.start.is_empty(), "{p:?}");
    assert_eq!(p.held_by_freeze().collect::<Vec<_>>(), vec!["a", "b", "c"]);
    let reason = reason_of(&p, "a").unwrap();
    assert!(matches!(reason, SkipReason::Frozen { id: 7, scope: FreezeScope::Site, .. }), "{reason:?}");
    let line = reason.for_host("a");
    assert!(
        line.contains("cli:alice") && line.contains("holidays") && line.contains("hostfw unfreeze --id 7"),
        "{line}"
    );
    assert_eq!(p.brakes.freezes.len(), 1, "the plan shows the freeze");
}

#[test]
fn a_model_freeze_holds_that_model_only() {
    for selector in ["model=Dell Inc./R650", "model=r650"] {
        let p = pass(fleet(), Brakes { freezes: vec![freeze(1, Some(selector))], pauses: vec![] });
        assert_eq!(p.start, vec!["a"], "{selector}");
        assert!(matches!(reason_of(&p, "b"), Some(SkipReason::Frozen { .. })), "{selector}");
        assert!(matches!(reason_of(&p, "c"), Some(SkipReason::Frozen { .. })), "{selector}");
    }
    let other_vendor = pass(fleet(), Brakes { freezes: vec![freeze(1, Some("model=HPE/R650"))], pauses: vec![] });
    assert_eq!(other_vendor.start, vec!["a", "b", "c"]);
}

#[test]
fn a_label_freeze_holds_that_label_value_only() {
    let p = pass(fleet(), Brakes { freezes: vec![freeze(2, Some("label=rack=r1"))], pauses: vec![] });
    assert_eq!(p.start, vec!["c"]);
    assert!(matches!(reason_of(&p, "a"), Some(SkipReason::Frozen { id: 2, .. })));
}

#[test]
fn a_target_paused_by_an_operator_holds_its_hosts_only() {
    let pause = OperatorPause { target: target("R650"), by: "cli:bob".into(), reason: "bad image".into(), at_ms: 0 };
    let p = pass(fleet(), Brakes { freezes: vec![], pauses: vec![pause] });
    assert_eq!(p.start, vec!["a"]);
    let reason = reason_of(&p, "b").unwrap();
    assert!(matches!(reason, SkipReason::TargetPausedByOperator(p) if p.by == "cli:bob"), "{reason:?}");
    let line = reason.to_string();
    assert!(line.contains("bad image") && line.contains("hostfw budget resume"), "{line}");
}

#[test]
fn a_host_whose_request_runs_is_not_affected_by_the_gate() {
    let mut running = host("a", "R750", "r1");
    running.has_request = true;
    let p = pass(vec![running], Brakes { freezes: vec![freeze(1, None)], pauses: vec![] });
    assert_eq!(reason_of(&p, "a"), Some(&SkipReason::AlreadyRequested));
    assert_eq!(p.in_flight, 1, "it still counts in flight");
}

#[test]
fn a_direct_request_is_held_by_the_brakes() {
    let brakes = Brakes {
        freezes: vec![freeze(3, Some("label=rack=r2"))],
        pauses: vec![OperatorPause { target: target("R750"), by: "cli:bob".into(), reason: "x".into(), at_ms: 0 }],
    };
    let hosts = fleet();
    let p = pass(hosts.clone(), brakes);
    assert!(matches!(rollout_holds(&p, &hosts[0])[..], [RolloutHold::PausedByOperator { .. }]));
    assert!(rollout_holds(&p, &hosts[1]).is_empty());
    assert!(matches!(rollout_holds(&p, &hosts[2])[..], [RolloutHold::Frozen { id: 3, .. }]));
}
