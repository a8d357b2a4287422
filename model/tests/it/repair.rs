//! Hosts in repair (issue 27): a host whose retry budget is spent, or one aborted to maintenance,
//! is set apart from the update ceiling under `machine_updater.max_hosts_in_repair`, so broken
//! hosts no longer starve the healthy targets; at the cap no new update starts, with a reason
//! that says so. With no cap (the derived policy default) they hold update slots as before, and
//! the failure-domain caps always count them (the host is out of service either way).

use hostfw_model::gates::Target;
use hostfw_model::{plan, CeilingLimits, ComponentType, HostState, HostView, PassInput, SchedulingPolicy, SkipReason};

use crate::common;

fn target(model: &str) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component: ComponentType::Bmc, version: "2.0".into() }
}

/// A host of the bad target whose retry budget is spent: its request holds on.
fn exhausted(id: &str) -> HostView {
    let mut h = common::drifted_host(id, vec![target("R750")]);
    h.state = HostState::HostReprovision;
    h.has_request = true;
    h.exhausted = true;
    h
}

fn healthy(id: &str) -> HostView {
    common::drifted_host(id, vec![target("R650")])
}

fn pass(hosts: Vec<HostView>, cap: Option<u32>) -> hostfw_model::Plan {
    plan(&PassInput {
        now_ms: 0,
        policy: SchedulingPolicy {
            autoupdate: true,
            limits: CeilingLimits { absolute: Some(3), percent: None },
            max_hosts_in_repair: cap,
            ..Default::default()
        },
        hosts,
        targets: Vec::new(),
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    })
}

#[test]
fn exhausted_hosts_of_a_bad_target_no_longer_starve_the_healthy_ones() {
    // The case: ceiling 3, the first pass started 3 hosts of a bad target, all spent
    // their budgets. Before, every healthy host waited on "ceiling reached" for good.
    let hosts = vec![exhausted("bad-1"), exhausted("bad-2"), exhausted("bad-3"), healthy("ok-1"), healthy("ok-2")];
    let p = pass(hosts.clone(), Some(10));
    assert_eq!(p.in_repair, vec!["bad-1", "bad-2", "bad-3"]);
    assert_eq!(p.in_flight, 0, "repair hosts hold no update slot");
    assert_eq!(p.start, vec!["ok-1", "ok-2"]);

    let before = pass(hosts, None);
    assert!(before.start.is_empty(), "with no repair cap they hold the ceiling: {before:?}");
    assert!(before.in_repair.is_empty());
    assert_eq!(before.in_flight, 3);
}

#[test]
fn at_the_repair_cap_no_new_update_starts_and_the_reason_says_why() {
    let hosts = vec![exhausted("bad-1"), exhausted("bad-2"), healthy("ok-1")];
    let p = pass(hosts, Some(2));
    assert!(p.start.is_empty(), "{p:?}");
    let reason = &p.skipped.iter().find(|s| s.machine_id == "ok-1").unwrap().reason;
    assert_eq!(reason, &SkipReason::RepairCapReached { in_repair: 2, cap: 2 });
    let line = reason.for_host("ok-1");
    assert!(line.contains("max_hosts_in_repair = 2") && line.contains("host reprovision abort"), "{line}");
    assert!(reason.held_only_for_capacity_or_window(), "the host still counts as pending");
}

#[test]
fn a_host_aborted_to_maintenance_is_in_repair_until_it_leaves() {
    let mut aborted = healthy("aborted");
    aborted.state = HostState::Maintenance;
    aborted.repair = true;
    let mut plain = healthy("serviced");
    plain.state = HostState::Maintenance;
    let p = pass(vec![aborted, plain, healthy("ok-1"), healthy("ok-2"), healthy("ok-3")], Some(5));
    assert_eq!(p.in_repair, vec!["aborted"]);
    // Plain maintenance still takes a slot of the ceiling (S9): 3 − 1 = 2 starts.
    assert_eq!(p.in_flight, 1);
    assert_eq!(p.start, vec!["ok-1", "ok-2"]);
}

#[test]
fn a_failed_host_with_retries_left_is_not_in_repair() {
    let mut retrying = exhausted("retrying");
    retrying.exhausted = false;
    let p = pass(vec![retrying, healthy("ok-1")], Some(5));
    assert!(p.in_repair.is_empty());
    assert_eq!(p.in_flight, 1);
}

#[test]
fn failure_domain_caps_count_hosts_in_repair() {
    let mut bad = exhausted("bad-1");
    bad.labels.insert("rack".into(), "r1".into());
    let mut ok = healthy("ok-1");
    ok.labels.insert("rack".into(), "r1".into());
    let mut input_hosts = vec![bad, ok];
    let mut p = pass(input_hosts.clone(), Some(5));
    assert_eq!(p.start, vec!["ok-1"], "no label cap: the healthy host starts");
    let mut policy = SchedulingPolicy {
        autoupdate: true,
        limits: CeilingLimits { absolute: Some(3), percent: None },
        max_hosts_in_repair: Some(5),
        ..Default::default()
    };
    policy.label_caps.insert("rack".into(), 1);
    p = plan(&PassInput {
        now_ms: 0,
        policy,
        hosts: std::mem::take(&mut input_hosts),
        targets: Vec::new(),
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    });
    assert!(p.start.is_empty(), "rack r1 already has a host out of service: {p:?}");
    assert!(matches!(p.skipped[1].reason, SkipReason::LabelCapReached { .. }), "{:?}", p.skipped);
}

#[test]
fn cap_zero_stops_new_starts_only_while_a_host_is_in_repair() {
    let p = pass(vec![healthy("ok-1")], Some(0));
    assert_eq!(p.start, vec!["ok-1"], "nothing in repair: cap 0 stops nothing");
    let p = pass(vec![exhausted("bad-1"), healthy("ok-1")], Some(0));
    assert!(p.start.is_empty(), "{p:?}");
    let ok = p.skipped.iter().find(|s| s.machine_id == "ok-1").expect("ok-1 is skipped");
    assert_eq!(ok.reason, SkipReason::RepairCapReached { in_repair: 1, cap: 0 });
}
