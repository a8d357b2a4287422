//! Approval deadlines (`gates::approval`): a deadline counted from the request, the overdue list
//! `plan` and the metrics show, the end of a skipped host's hold (its next window, or one more
//! deadline period) and the pass holding it until then (pending, with the manager woken at its
//! end), and the site config's default, policy names and range.

use hostfw_model::gates::{
    hold_until, overdue_approvals, ApprovalDeadline, ApprovalFacts, ApprovalHold, ApprovalWait, DeadlinePolicy, Target,
};
use hostfw_model::{plan, CeilingLimits, HostState, HostView, PassInput, SchedulingPolicy, SiteConfig, SkipReason};
use hostfw_model::{ComponentType, TimeWindow};

use crate::common;

const HOUR: i64 = 3_600_000;
const NOW: i64 = 1_800_000_000_000;

fn deadline(hours: i64, policy: DeadlinePolicy) -> ApprovalDeadline {
    ApprovalDeadline { after_ms: hours * HOUR, policy }
}

fn wait(id: &str, since_ms: i64) -> ApprovalWait {
    ApprovalWait { machine_id: id.into(), since_ms }
}

fn assigned(id: &str) -> HostView {
    let bios = Target {
        vendor: "Dell Inc.".into(),
        model: "R760".into(),
        component: ComponentType::Uefi,
        version: "3.0".into(),
    };
    HostView { state: HostState::Assigned, assigned: true, ..common::drifted_host(id, vec![bios]) }
}

fn pass(hosts: Vec<HostView>, approvals: ApprovalFacts) -> hostfw_model::Plan {
    let policy = SchedulingPolicy {
        autoupdate: true,
        limits: CeilingLimits { absolute: Some(10), percent: None },
        approval_deadline: deadline(72, DeadlinePolicy::Skip),
        ..SchedulingPolicy::default()
    };
    plan(&PassInput {
        now_ms: NOW,
        policy,
        hosts,
        targets: Vec::new(),
        update_durations: Vec::new(),
        approvals,
        brakes: Default::default(),
    })
}

#[test]
fn the_deadline_counts_from_the_request_and_zero_means_none() {
    assert_eq!(deadline(72, DeadlinePolicy::Escalate).deadline_ms(NOW), Some(NOW + 72 * HOUR));
    assert_eq!(deadline(0, DeadlinePolicy::Escalate).deadline_ms(NOW), None);
    assert_eq!(ApprovalDeadline::default().deadline_ms(NOW), None, "the derived default has no deadline");
}

#[test]
fn a_wait_is_overdue_from_its_deadline_on() {
    let d = deadline(2, DeadlinePolicy::Escalate);
    let facts = ApprovalFacts {
        waits: vec![wait("late", NOW - 3 * HOUR), wait("exact", NOW - 2 * HOUR), wait("young", NOW - HOUR)],
        holds: Vec::new(),
    };
    let overdue = overdue_approvals(&d, &facts, NOW);
    let ids: Vec<&str> = overdue.iter().map(|o| o.machine_id.as_str()).collect();
    assert_eq!(ids, ["late", "exact"]);
    assert_eq!(overdue[0].deadline_ms, NOW - HOUR);
    assert_eq!(overdue[0].requested_at_ms, NOW - 3 * HOUR);
    assert_eq!(overdue[0].policy, DeadlinePolicy::Escalate);
    assert!(overdue_approvals(&deadline(0, DeadlinePolicy::Escalate), &facts, NOW).is_empty(), "no deadline");
}

#[test]
fn a_skipped_host_is_held_until_its_next_window_or_one_more_deadline() {
    let window = |from_h: i64, to_h: i64| Some(TimeWindow::new(NOW + from_h * HOUR, NOW + to_h * HOUR).unwrap());
    // No window ahead: as long again as the tenant was given.
    assert_eq!(hold_until(NOW, None, None, 72 * HOUR), NOW + 72 * HOUR);
    // A window open now or in the past is not "next".
    assert_eq!(hold_until(NOW, window(-1, 1), window(-5, -4), 72 * HOUR), NOW + 72 * HOUR);
    // The host's own window ahead, or the autoreboot period, whichever opens first.
    assert_eq!(hold_until(NOW, window(10, 12), None, 72 * HOUR), NOW + 10 * HOUR);
    assert_eq!(hold_until(NOW, window(10, 12), window(3, 4), 72 * HOUR), NOW + 3 * HOUR);
    assert_eq!(hold_until(NOW, None, window(100, 101), 72 * HOUR), NOW + 100 * HOUR);
}

#[test]
fn the_pass_holds_a_skipped_host_until_its_hold_ends_and_lists_overdue_waits() {
    let holds = vec![
        ApprovalHold { machine_id: "held".into(), skipped_at_ms: NOW - HOUR, until_ms: NOW + 5 * HOUR },
        ApprovalHold { machine_id: "over".into(), skipped_at_ms: NOW - 80 * HOUR, until_ms: NOW - HOUR },
    ];
    let mut waiting = assigned("waiting");
    waiting.has_request = true;
    let p = pass(
        vec![assigned("held"), assigned("over"), waiting],
        ApprovalFacts { waits: vec![wait("waiting", NOW - 73 * HOUR)], holds },
    );
    assert_eq!(p.start, ["over"], "a hold that ended no longer holds: {p:?}");
    let held = p.skipped.iter().find(|s| s.machine_id == "held").unwrap();
    assert_eq!(held.reason, SkipReason::ApprovalSkipped { until_ms: NOW + 5 * HOUR });
    let text = held.reason.to_string();
    assert!(text.contains("approval_deadline_policy = \"skip\"") && text.contains("held until"), "{text}");
    assert!(text.contains("hostfw host reprovision set"), "{text}");
    assert!(p.pending().any(|id| id == "held"), "a held host counts as pending");
    assert_eq!(p.next_window_open_ms, Some(NOW + 5 * HOUR), "the manager runs again when the hold ends");
    assert_eq!(p.approval_overdue.len(), 1);
    assert_eq!(p.approval_overdue[0].machine_id, "waiting");
    assert_eq!(p.approval_overdue[0].deadline_ms, NOW - HOUR);
}

#[test]
fn a_held_host_that_would_not_be_selected_anyway_keeps_its_first_reason() {
    let mut busy = assigned("busy");
    busy.has_request = true;
    let holds = vec![ApprovalHold { machine_id: "busy".into(), skipped_at_ms: NOW, until_ms: NOW + HOUR }];
    let p = pass(vec![busy], ApprovalFacts { waits: Vec::new(), holds });
    assert_eq!(p.skipped[0].reason, SkipReason::AlreadyRequested);
}

#[test]
fn the_site_config_defaults_to_72h_escalate_and_refuses_a_bad_policy_or_length() {
    let cfg = SiteConfig::from_toml_str(common::SITE, std::path::Path::new(common::ORIGIN)).expect("loads");
    assert_eq!(cfg.machine_updater.approval_deadline, std::time::Duration::from_secs(72 * 3600));
    assert_eq!(cfg.machine_updater.approval_deadline_policy, DeadlinePolicy::Escalate);
    let load = |extra: &str| {
        let text = format!("{}\n[machine_updater]\n{extra}\n", common::SITE);
        SiteConfig::from_toml_str(&text, std::path::Path::new(common::ORIGIN))
    };
    let skip = load("approval_deadline = \"0s\"\napproval_deadline_policy = \"skip\"").expect("loads");
    assert_eq!(skip.machine_updater.approval_deadline_policy, DeadlinePolicy::Skip);
    assert_eq!(SchedulingPolicy::from_config(&skip).approval_deadline.deadline_ms(NOW), None, "0s: none");
    let err = load("approval_deadline_policy = \"ignore\"").unwrap_err().to_string();
    assert!(err.contains("approval_deadline_policy") && err.contains("skip") && err.contains("escalate"), "{err}");
    let err = load("approval_deadline = \"721h\"").unwrap_err().to_string();
    assert!(err.contains("machine_updater.approval_deadline") && err.contains("at most 720h"), "{err}");
}
