//! Window fit (`gates::window_fit`): the p90 by nearest rank, the component set a run is keyed
//! by, the minimum sample, and the pass holding a host inside its explicit window when the p90 of
//! past runs of its vendor, model and component set would overrun the window's end (with the
//! reason naming both numbers), while hosts of other sets, without explicit start, or with a
//! wide enough window start.

use hostfw_model::gates::{component_set, estimate, p90, span_text, Estimate, Target, UpdateDurations};
use hostfw_model::{
    plan, CeilingLimits, ComponentType, FirmwareStatus, HostView, PassInput, SchedulingPolicy, SiteConfig, SkipReason,
    TimeWindow,
};

use crate::common;

const MIN: i64 = 60_000;
const NOW: i64 = 1_800_000_000_000;

fn target(model: &str, component: ComponentType) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component, version: "3.0".into() }
}

/// A drifted host of a model that needs an explicit start, with a window `[NOW - 1h, NOW + ends_in)`.
fn host(id: &str, targets: Vec<Target>, ends_in_ms: i64) -> HostView {
    let mut h = common::drifted_host(id, targets);
    if let FirmwareStatus::Drifted { explicit_start_needed, .. } = &mut h.firmware {
        *explicit_start_needed = true;
    }
    h.window = Some(TimeWindow::new(NOW - 60 * MIN, NOW + ends_in_ms).unwrap());
    h
}

fn runs(model: &str, components: &[ComponentType], minutes: &[i64]) -> UpdateDurations {
    UpdateDurations {
        vendor: "Dell Inc.".into(),
        model: model.into(),
        components: components.to_vec(),
        durations_ms: minutes.iter().map(|m| m * MIN).collect(),
    }
}

fn policy(min_samples: u32) -> SchedulingPolicy {
    SchedulingPolicy {
        autoupdate: true,
        limits: CeilingLimits { absolute: Some(10), percent: None },
        window_fit_min_samples: min_samples,
        approval_deadline: Default::default(),
        ..SchedulingPolicy::default()
    }
}

fn pass(hosts: Vec<HostView>, history: Vec<UpdateDurations>, min_samples: u32) -> hostfw_model::Plan {
    plan(&PassInput {
        now_ms: NOW,
        policy: policy(min_samples),
        hosts,
        targets: Vec::new(),
        update_durations: history,
        approvals: Default::default(),
        brakes: Default::default(),
    })
}

#[test]
fn p90_is_the_nearest_rank() {
    assert_eq!(p90(&[]), None);
    assert_eq!(p90(&[7]), Some(7));
    // 10 values: rank 9.
    assert_eq!(p90(&[10, 1, 2, 3, 4, 5, 6, 7, 8, 9]), Some(9));
    // 11 values: rank ceil(9.9) = 10.
    assert_eq!(p90(&(1..=11).collect::<Vec<_>>()), Some(10));
    // 4 values: rank ceil(3.6) = 4, the slowest.
    assert_eq!(p90(&[30, 120, 40, 50]), Some(120));
}

#[test]
fn the_component_set_is_sorted_by_name_without_repeats() {
    let set = component_set(&[
        target("R760", ComponentType::Uefi),
        target("R760", ComponentType::Bmc),
        target("R760", ComponentType::Uefi),
    ]);
    assert_eq!(set, vec![ComponentType::Bmc, ComponentType::Uefi]);
}

#[test]
fn an_estimate_needs_the_minimum_sample_of_the_same_set() {
    let uefi = [target("R760", ComponentType::Uefi)];
    let history = vec![
        runs("R760", &[ComponentType::Uefi], &[20, 30, 40]),
        runs("R760", &[ComponentType::Bmc, ComponentType::Uefi], &[90, 90, 90]),
    ];
    assert_eq!(estimate(&history, &uefi, 3), Some(Estimate { p90_ms: 40 * MIN, samples: 3 }));
    assert_eq!(estimate(&history, &uefi, 4), None, "three runs are fewer than four");
    assert_eq!(estimate(&history, &uefi, 0), None, "0 turns the rule off");
    assert_eq!(estimate(&history, &[target("R750", ComponentType::Uefi)], 1), None, "another model");
    let both = [target("R760", ComponentType::Uefi), target("R760", ComponentType::Bmc)];
    assert_eq!(estimate(&history, &both, 3).map(|e| e.p90_ms), Some(90 * MIN), "the set's own runs");
    assert_eq!(estimate(&history, &[], 1), None, "nothing to install");
}

#[test]
fn a_host_whose_window_closes_before_the_p90_waits_with_both_numbers() {
    let uefi = target("R760", ComponentType::Uefi);
    let history = vec![runs("R760", &[ComponentType::Uefi], &[30, 120, 40, 50])];
    let short = host("s1", vec![uefi.clone()], 60 * MIN);
    let wide = host("w1", vec![uefi.clone()], 121 * MIN);
    let p = pass(vec![short, wide], history, 3);
    assert_eq!(p.start, vec!["w1".to_string()], "{p:?}");
    let reason = &p.skipped[0].reason;
    let SkipReason::WindowTooShort { estimate, remaining_ms, components, .. } = reason else { panic!("{reason:?}") };
    assert_eq!((estimate.p90_ms, estimate.samples, *remaining_ms), (120 * MIN, 4, 60 * MIN));
    assert_eq!(components, &vec![ComponentType::Uefi]);
    let text = reason.to_string();
    assert!(text.contains("an update of Dell Inc. R760 (uefi) takes 2h 00m (p90 of 4 past updates)"), "{text}");
    assert!(text.contains("closes in 1h 00m (at 2027-01-15T09:00:00Z)"), "{text}");
    assert!(reason.held_only_for_capacity_or_window(), "it still counts as pending");
    assert_eq!(p.pending().collect::<Vec<_>>(), vec!["w1", "s1"]);
}

#[test]
fn no_estimate_no_explicit_start_or_a_closed_window_leave_the_other_gates_to_decide() {
    let uefi = target("R760", ComponentType::Uefi);
    let history = vec![runs("R760", &[ComponentType::Uefi], &[120, 120, 120])];
    // Too few runs.
    let p = pass(vec![host("a", vec![uefi.clone()], MIN)], history.clone(), 4);
    assert_eq!(p.start, vec!["a".to_string()]);
    // The rule off.
    let p = pass(vec![host("a", vec![uefi.clone()], MIN)], history.clone(), 0);
    assert_eq!(p.start, vec!["a".to_string()]);
    // No explicit start needed: the window is not the host's limit.
    let mut free = host("a", vec![uefi.clone()], MIN);
    if let FirmwareStatus::Drifted { explicit_start_needed, .. } = &mut free.firmware {
        *explicit_start_needed = false;
    }
    let p = pass(vec![free], history.clone(), 3);
    assert_eq!(p.start, vec!["a".to_string()]);
    // A window that is not open: the window gate's own reason.
    let mut closed = host("a", vec![uefi], MIN);
    closed.window = Some(TimeWindow::new(NOW + MIN, NOW + 600 * MIN).unwrap());
    let p = pass(vec![closed], history, 3);
    assert!(matches!(p.skipped[0].reason, SkipReason::WindowClosed { .. }), "{p:?}");
}

#[test]
fn a_paused_target_is_named_before_the_window_fit() {
    // The budget gate runs first: its reason is the one an operator must act on.
    let uefi = target("R760", ComponentType::Uefi);
    let history = vec![runs("R760", &[ComponentType::Uefi], &[120, 120, 120])];
    let mut policy = policy(3);
    policy.error_budget = hostfw_model::gates::ErrorBudget { failed_hosts: 1, failed_percent: 0, min_hosts: 1 };
    let record = hostfw_model::gates::TargetRecord {
        target: uefi.clone(),
        attempted_hosts: 1,
        failures: vec![hostfw_model::gates::TargetFailure { machine_id: "f".into(), reason: "bad".into(), at_ms: 1 }],
        open: vec![],
        finished: vec![],
        last_done_ms: Some(1),
        last_attempt_ms: Some(1),
        failed_last: 1,
        waves: None,
    };
    let p = plan(&PassInput {
        now_ms: NOW,
        policy,
        hosts: vec![host("a", vec![uefi], MIN)],
        targets: vec![record],
        update_durations: history,
        approvals: Default::default(),
        brakes: Default::default(),
    });
    assert!(matches!(p.skipped[0].reason, SkipReason::TargetPaused { .. }), "{p:?}");
}

#[test]
fn durations_read_for_an_operator() {
    assert_eq!(span_text(42_000), "42s");
    assert_eq!(span_text(59 * MIN + 48_000), "59m 48s");
    assert_eq!(span_text(125 * MIN + 30_000), "2h 05m");
    assert_eq!(span_text(-5), "0s");
}

#[test]
fn the_site_config_turns_it_on_with_three_samples_and_refuses_out_of_range() {
    let cfg = SiteConfig::from_toml_str(common::SITE, std::path::Path::new(common::ORIGIN)).expect("loads");
    assert_eq!(cfg.machine_updater.window_fit_min_samples, 3);
    let bad = format!("{}\n[machine_updater]\nwindow_fit_min_samples = 101\n", common::SITE);
    let err = SiteConfig::from_toml_str(&bad, std::path::Path::new(common::ORIGIN)).unwrap_err().to_string();
    assert!(err.contains("machine_updater.window_fit_min_samples"), "{err}");
    assert!(err.contains("0..=100"), "{err}");
}
