//! Error budgets per rollout target (`gates::budget`): the count rule, the percentage rule with
//! its minimum sample, rules turned off, the pass pausing only the hosts that would install a
//! paused target (and giving their slots to the others), and the evidence in the plan.

use hostfw_model::gates::{host_targets, paused_targets, ErrorBudget, Target, TargetFailure, TargetRecord};
use hostfw_model::{plan, CeilingLimits, ComponentType, HostView, PassInput, SchedulingPolicy, SkipReason};

use crate::common;

fn target(model: &str, component: ComponentType, version: &str) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component, version: version.into() }
}

fn record(t: &Target, attempted: u32, failed: &[&str]) -> TargetRecord {
    TargetRecord {
        target: t.clone(),
        attempted_hosts: attempted,
        failures: failed
            .iter()
            .enumerate()
            .map(|(i, m)| TargetFailure {
                machine_id: m.to_string(),
                reason: format!("upload failed {i}"),
                at_ms: i as i64,
            })
            .collect(),
        open: vec![],
        finished: vec![],
        last_done_ms: None,
        last_attempt_ms: None,
        failed_last: 0,
        waves: None,
    }
}

fn host(id: &str, targets: Vec<Target>) -> HostView {
    common::drifted_host(id, targets)
}

fn policy(budget: ErrorBudget, ceiling: u32) -> SchedulingPolicy {
    SchedulingPolicy {
        max_hosts_in_repair: None,
        autoupdate: true,
        instance_updates_manual_tagging: false,
        host_disable_autoupdate: vec![],
        limits: CeilingLimits { absolute: Some(ceiling), percent: None },
        label_caps: Default::default(),
        error_budget: budget,
        waves: Default::default(),
        window_fit_min_samples: 0,
        approval_deadline: Default::default(),
    }
}

#[test]
fn the_count_rule_pauses_at_the_limit_and_not_before() {
    let b = ErrorBudget { failed_hosts: 2, failed_percent: 0, min_hosts: 1 };
    assert_eq!(b.spent(100, 1), None);
    let rule = b.spent(100, 2).expect("2 failed hosts spend a budget of 2");
    assert!(rule.contains("error_budget_failed_hosts = 2"), "{rule}");
}

#[test]
fn the_percentage_rule_waits_for_its_minimum_sample() {
    let b = ErrorBudget { failed_hosts: 0, failed_percent: 20, min_hosts: 10 };
    assert_eq!(b.spent(9, 9), None, "below the minimum sample, even 100 % does not pause");
    assert_eq!(b.spent(10, 1), None, "10 % is within 20 %");
    let rule = b.spent(10, 2).expect("20 % of 10 reaches the budget");
    assert!(rule.contains("error_budget_failed_percent = 20 %") && rule.contains("2 of 10"), "{rule}");
    assert!(b.spent(1000, 199).is_none() && b.spent(1000, 200).is_some());
}

#[test]
fn rules_set_to_zero_are_off() {
    let off = ErrorBudget { failed_hosts: 0, failed_percent: 0, min_hosts: 10 };
    assert_eq!(off.spent(1000, 1000), None);
    assert_eq!(ErrorBudget::default(), ErrorBudget { failed_hosts: 3, failed_percent: 20, min_hosts: 10 });
}

#[test]
fn the_share_rule_for_waves_has_no_minimum_sample() {
    let b = ErrorBudget::default();
    assert!(b.share_exceeded(1, 1), "one failed canary of one is over 20 %");
    assert!(!b.share_exceeded(5, 1), "1 of 5 is exactly 20 %: within");
    assert!(!b.share_exceeded(5, 0));
}

#[test]
fn a_paused_target_holds_its_hosts_and_their_slots_go_to_the_others() {
    let bad = target("R750", ComponentType::Bmc, "7.10");
    let good = target("R760", ComponentType::Bmc, "7.20");
    let hosts = vec![
        host("a1", vec![bad.clone()]),
        host("a2", vec![bad.clone(), target("R750", ComponentType::Uefi, "2.1")]),
        host("b1", vec![good.clone()]),
        host("b2", vec![good.clone()]),
    ];
    let targets = vec![record(&bad, 3, &["a7", "a8"]), record(&good, 4, &["b9"])];
    let budget = ErrorBudget { failed_hosts: 2, failed_percent: 0, min_hosts: 1 };
    let p = plan(&PassInput {
        now_ms: 0,
        policy: policy(budget, 2),
        hosts,
        targets,
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    });
    assert_eq!(p.start, vec!["b1".to_string(), "b2".to_string()], "the ceiling of 2 goes to the good model");
    assert_eq!(p.paused.len(), 1, "only the target at its budget pauses: {:?}", p.paused);
    assert_eq!(p.paused[0].target, bad);
    let evidence: Vec<&str> = p.paused[0].failures.iter().map(|f| f.machine_id.as_str()).collect();
    assert_eq!(evidence, vec!["a7", "a8"]);
    for id in ["a1", "a2"] {
        let s = p.skipped.iter().find(|s| s.machine_id == id).expect("skipped");
        assert_eq!(
            s.reason,
            SkipReason::TargetPaused { target: bad.clone(), failed_hosts: 2, attempted_hosts: 3 },
            "{id}"
        );
        let line = s.reason.to_string();
        assert!(
            line.contains(
                "hostfw budget resume --vendor \"Dell Inc.\" --model \"R750\" --component bmc --version \"7.10\""
            ),
            "{line}"
        );
    }
    assert_eq!(p.pending().count(), 2, "a paused host is not pending");
}

#[test]
fn a_host_already_updating_is_not_reported_as_paused() {
    let bad = target("R750", ComponentType::Bmc, "7.10");
    let mut h = host("a1", vec![bad.clone()]);
    h.has_request = true;
    let budget = ErrorBudget { failed_hosts: 1, failed_percent: 0, min_hosts: 1 };
    let p = plan(&PassInput {
        now_ms: 0,
        policy: policy(budget, 5),
        hosts: vec![h],
        targets: vec![record(&bad, 1, &["a1"])],
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    });
    assert_eq!(p.skipped[0].reason, SkipReason::AlreadyRequested);
}

#[test]
fn paused_targets_keep_record_order() {
    let t1 = target("A", ComponentType::Bmc, "1");
    let t2 = target("B", ComponentType::Uefi, "2");
    let budget = ErrorBudget { failed_hosts: 1, failed_percent: 0, min_hosts: 1 };
    let paused = paused_targets(&budget, &[record(&t2, 1, &["x"]), record(&t1, 1, &[]), record(&t1, 2, &["y"])]);
    assert_eq!(paused.iter().map(|p| p.target.model.as_str()).collect::<Vec<_>>(), vec!["B", "A"]);
}

#[test]
fn a_hosts_targets_are_its_differing_components_at_the_desired_versions() {
    let model = &common::three_components("[]");
    let targets = host_targets(model, &[ComponentType::Uefi, ComponentType::Nic]);
    assert_eq!(
        targets,
        vec![Target {
            vendor: "Dell".into(),
            model: "PowerEdge R760".into(),
            component: ComponentType::Uefi,
            version: "2.0".into()
        }],
        "nic has no default version: no target"
    );
}
