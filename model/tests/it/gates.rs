//! Scheduling gates (S6–S15): each gate alone, gates combined, the ceiling arithmetic (with the
//! NICo percent regression), firmware status over a catalog, and the policy read from config.

use crate::common;

use std::path::Path;

use common::{model, report, three_components};
use hostfw_model::gates::BOTH_UNSET;
use hostfw_model::{
    ceiling, firmware_status, plan, Catalog, CeilingLimits, ComponentType, FirmwareStatus, FleetHealth, HostState,
    HostView, PassInput, Plan, SchedulingPolicy, SiteConfig, SkipReason, Skipped, TimeWindow, UnmatchedComponent,
};
use hostfw_model::{NotReportedComponent, UnknownMember, UnknownVersion};

const NOW: i64 = 1_777_672_800_000; // 2026-05-01T22:00:00Z
const HOUR: i64 = 3_600_000;

fn drifted() -> FirmwareStatus {
    FirmwareStatus::Drifted {
        explicit_start_needed: false,
        differing: vec![ComponentType::Bmc],
        unmatched: vec![],
        not_reported: vec![],
    }
}

fn explicit_drifted() -> FirmwareStatus {
    FirmwareStatus::Drifted {
        explicit_start_needed: true,
        differing: vec![ComponentType::Bmc],
        unmatched: vec![],
        not_reported: vec![],
    }
}

fn unmatched_uefi() -> UnmatchedComponent {
    UnmatchedComponent { component: ComponentType::Uefi, matcher: "^BIOS".into() }
}

/// A drifted, unassigned, healthy Ready host with no override, window or request.
fn host(id: &str) -> HostView {
    HostView {
        repair: false,
        machine_id: id.into(),
        state: HostState::Ready,
        assigned: false,
        auto_update: None,
        window: None,
        has_request: false,
        exhausted: false,
        unhealthy: false,
        firmware: drifted(),
        labels: Default::default(),
        targets: Vec::new(),
    }
}

fn assigned(id: &str) -> HostView {
    HostView { state: HostState::Assigned, assigned: true, ..host(id) }
}

/// Site on, manual tagging on (NICo's default posture), absolute ceiling 10.
fn policy() -> SchedulingPolicy {
    SchedulingPolicy {
        max_hosts_in_repair: None,
        autoupdate: true,
        instance_updates_manual_tagging: true,
        host_disable_autoupdate: vec![],
        limits: CeilingLimits { absolute: Some(10), percent: None },
        label_caps: Default::default(),
        error_budget: Default::default(),
        waves: Default::default(),
        window_fit_min_samples: 0,
        approval_deadline: Default::default(),
    }
}

fn run(policy: SchedulingPolicy, hosts: Vec<HostView>) -> Plan {
    plan(&PassInput {
        now_ms: NOW,
        policy,
        hosts,
        targets: Vec::new(),
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    })
}

fn window(start_ms: i64, end_ms: i64) -> Option<TimeWindow> {
    Some(TimeWindow { start_ms, end_ms })
}

fn skip(id: &str, reason: SkipReason) -> Skipped {
    Skipped { machine_id: id.into(), reason }
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Start,
    Compliant,
    Skip(SkipReason),
}

fn outcome(p: &Plan) -> Outcome {
    match (p.start.as_slice(), p.skipped.as_slice(), p.compliant) {
        ([_], [], 0) => Outcome::Start,
        ([], [], 1) => Outcome::Compliant,
        ([], [s], 0) => Outcome::Skip(s.reason.clone()),
        _ => panic!("one host should have exactly one outcome: {p:?}"),
    }
}

type Row = (&'static str, fn(&mut SchedulingPolicy, &mut HostView), Outcome);

/// One host, one setting changed from the baseline (which starts): the expected first failing gate.
#[test]
fn each_gate_alone() {
    use SkipReason as R;
    let rows: Vec<Row> = vec![
        ("baseline starts", |_, _| {}, Outcome::Start),
        ("compliant", |_, h| h.firmware = FirmwareStatus::Compliant, Outcome::Compliant),
        ("not explored", |_, h| h.firmware = FirmwareStatus::NotExplored, Outcome::Skip(R::NotExplored)),
        (
            "explore failed",
            |_, h| h.firmware = FirmwareStatus::ExploreFailed { error: "timeout".into() },
            Outcome::Skip(R::ExploreFailed { error: "timeout".into() }),
        ),
        (
            "no catalog entry",
            |_, h| h.firmware = FirmwareStatus::NoCatalogEntry { vendor: "V".into(), model: "M".into() },
            Outcome::Skip(R::NoCatalogEntry { vendor: "V".into(), model: "M".into() }),
        ),
        (
            "only unmatched components (S54)",
            |_, h| {
                h.firmware = FirmwareStatus::Drifted {
                    explicit_start_needed: false,
                    differing: vec![],
                    unmatched: vec![unmatched_uefi()],
                    not_reported: vec![],
                }
            },
            Outcome::Skip(R::NoInventoryMatch { unmatched: vec![unmatched_uefi()] }),
        ),
        (
            "differing and unmatched is eligible",
            |_, h| {
                h.firmware = FirmwareStatus::Drifted {
                    explicit_start_needed: false,
                    differing: vec![ComponentType::Bmc],
                    unmatched: vec![unmatched_uefi()],
                    not_reported: vec![],
                }
            },
            Outcome::Start,
        ),
        ("site autoupdate off (S6)", |p, _| p.autoupdate = false, Outcome::Skip(R::AutoUpdateOffSite)),
        ("override disable (S6)", |_, h| h.auto_update = Some(false), Outcome::Skip(R::AutoUpdateOffHost)),
        (
            "override enable with site off (S6)",
            |p, h| {
                p.autoupdate = false;
                h.auto_update = Some(true);
            },
            Outcome::Start,
        ),
        (
            "legacy disable list (S15)",
            |p, _| p.host_disable_autoupdate = vec!["h".into()],
            Outcome::Skip(R::LegacyDisableList),
        ),
        (
            "legacy list compares machine ids exactly",
            |p, _| p.host_disable_autoupdate = vec!["H".into(), "h ".into()],
            Outcome::Start,
        ),
        ("assigned with manual tagging (S7)", |_, h| *h = assigned("h"), Outcome::Skip(R::AssignedManualTagging)),
        (
            "Ready but tenant flag set, manual tagging",
            |_, h| h.assigned = true,
            Outcome::Skip(R::AssignedManualTagging),
        ),
        (
            "assigned without manual tagging (S7)",
            |p, h| {
                p.instance_updates_manual_tagging = false;
                *h = assigned("h");
            },
            Outcome::Start,
        ),
        ("existing request (S8)", |_, h| h.has_request = true, Outcome::Skip(R::AlreadyRequested)),
        (
            "updating without request (S9)",
            |_, h| h.state = HostState::HostReprovision,
            Outcome::Skip(R::Busy { state: HostState::HostReprovision }),
        ),
        (
            "maintenance without request (S9)",
            |_, h| h.state = HostState::Maintenance,
            Outcome::Skip(R::Busy { state: HostState::Maintenance }),
        ),
        (
            "explicit start, no window (S10)",
            |_, h| h.firmware = explicit_drifted(),
            Outcome::Skip(R::WindowClosed { window: None }),
        ),
        (
            "explicit start, window open (S10)",
            |_, h| {
                h.firmware = explicit_drifted();
                h.window = window(NOW - HOUR, NOW + HOUR);
            },
            Outcome::Start,
        ),
        (
            "explicit start, window opens exactly now",
            |_, h| {
                h.firmware = explicit_drifted();
                h.window = window(NOW, NOW + HOUR);
            },
            Outcome::Start,
        ),
        (
            "explicit start, window ended exactly now",
            |_, h| {
                h.firmware = explicit_drifted();
                h.window = window(NOW - HOUR, NOW);
            },
            Outcome::Skip(R::WindowClosed { window: window(NOW - HOUR, NOW) }),
        ),
        (
            "no explicit start: a closed window does not matter",
            |_, h| h.window = window(NOW + HOUR, NOW + 2 * HOUR),
            Outcome::Start,
        ),
        (
            "both limits unset (S13)",
            |p, _| p.limits = CeilingLimits::default(),
            Outcome::Skip(R::CeilingZero { how: BOTH_UNSET.into() }),
        ),
        (
            "absolute ceiling 0",
            |p, _| p.limits.absolute = Some(0),
            Outcome::Skip(R::CeilingZero {
                how: "absolute 0 (max_concurrent_machine_updates_percent is unset) = 0".into(),
            }),
        ),
        (
            "unhealthy host still eligible; percent 100 of 1 minus 1 unhealthy = 0",
            |p, h| {
                h.unhealthy = true;
                p.limits = CeilingLimits { absolute: None, percent: Some(100) };
            },
            Outcome::Skip(R::CeilingZero {
                how: "percent: ceil(100% of 1 hosts) = 1 − 1 unhealthy = 0 \
                      (max_concurrent_machine_updates_absolute is unset)"
                    .into(),
            }),
        ),
    ];
    let mut failures = Vec::new();
    for (name, change, want) in rows {
        let mut p = policy();
        let mut h = host("h");
        change(&mut p, &mut h);
        let got = outcome(&run(p, vec![h]));
        if got != want {
            failures.push(format!("{name}: want {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn gates_apply_in_seed_order() {
    // Fails every gate at once: the firmware gate is named first, then each in turn.
    let mut p = policy();
    p.autoupdate = false;
    let mut h = assigned("h");
    h.has_request = true;
    h.firmware = FirmwareStatus::NotExplored;
    assert_eq!(outcome(&run(p.clone(), vec![h.clone()])), Outcome::Skip(SkipReason::NotExplored));
    h.firmware = explicit_drifted();
    assert_eq!(outcome(&run(p.clone(), vec![h.clone()])), Outcome::Skip(SkipReason::AutoUpdateOffSite));
    p.autoupdate = true;
    assert_eq!(outcome(&run(p.clone(), vec![h.clone()])), Outcome::Skip(SkipReason::AssignedManualTagging));
    h = HostView { has_request: true, ..host("h") };
    h.firmware = explicit_drifted();
    assert_eq!(outcome(&run(p.clone(), vec![h.clone()])), Outcome::Skip(SkipReason::AlreadyRequested));
    h.has_request = false;
    let want = SkipReason::WindowClosed { window: None };
    assert_eq!(outcome(&run(p.clone(), vec![h.clone()])), Outcome::Skip(want));
    h.window = window(NOW, NOW + 1);
    p.limits = CeilingLimits::default();
    let want = SkipReason::CeilingZero { how: BOTH_UNSET.into() };
    assert_eq!(outcome(&run(p, vec![h])), Outcome::Skip(want));
}

#[test]
fn override_enable_beats_site_off_and_the_legacy_list() {
    let mut p = policy();
    p.autoupdate = false;
    p.host_disable_autoupdate = vec!["a".into(), "b".into(), "c".into()];
    let mut a = host("a");
    a.auto_update = Some(true);
    let b = host("b");
    let mut c = host("c");
    c.auto_update = Some(false);
    let d = host("d");
    let plan = run(p, vec![a, b, c, d]);
    assert_eq!(plan.start, ["a"]);
    assert_eq!(
        plan.skipped,
        [
            skip("b", SkipReason::LegacyDisableList),
            skip("c", SkipReason::AutoUpdateOffHost),
            skip("d", SkipReason::AutoUpdateOffSite),
        ]
    );
}

/// NICo ends the whole pass at a matching legacy entry; hostfw skips that host only (S15).
#[test]
fn legacy_entry_for_one_host_does_not_stop_the_others() {
    let mut p = policy();
    p.host_disable_autoupdate = vec!["a".into()];
    let plan = run(p, vec![host("a"), host("b"), host("c")]);
    assert_eq!(plan.start, ["b", "c"]);
    assert_eq!(plan.skipped, [skip("a", SkipReason::LegacyDisableList)]);
}

#[test]
fn without_manual_tagging_unassigned_hosts_are_considered_first() {
    let mut p = policy();
    p.instance_updates_manual_tagging = false;
    p.limits.absolute = Some(1);
    let plan = run(p.clone(), vec![assigned("a1"), host("u1")]);
    assert_eq!(plan.start, ["u1"]);
    let full = SkipReason::CeilingReached { limit: 1, in_flight: 1 };
    assert_eq!(plan.skipped, [skip("a1", full)]);

    // Each group keeps input order; skipped hosts are listed in input order.
    p.limits.absolute = Some(3);
    let hosts = vec![assigned("a1"), host("u1"), assigned("a2"), host("u2")];
    let plan = run(p, hosts);
    assert_eq!(plan.start, ["u1", "u2", "a1"]);
    let full = SkipReason::CeilingReached { limit: 3, in_flight: 3 };
    assert_eq!(plan.skipped, [skip("a2", full)]);
}

#[test]
fn with_manual_tagging_assigned_hosts_are_never_selected() {
    let plan = run(policy(), vec![assigned("a1"), host("u1")]);
    assert_eq!(plan.start, ["u1"]);
    assert_eq!(plan.skipped, [skip("a1", SkipReason::AssignedManualTagging)]);
}

#[test]
fn explicit_start_windows_open_closed_absent_and_next_opening() {
    let with = |id: &str, w: Option<TimeWindow>| HostView { firmware: explicit_drifted(), window: w, ..host(id) };
    let mut disabled_later = with("off", window(NOW + 10, NOW + HOUR));
    disabled_later.auto_update = Some(false);
    let mut plain_later = host("plain");
    plain_later.window = window(NOW + 20, NOW + HOUR);
    let hosts = vec![
        with("open", window(NOW - HOUR, NOW + HOUR)),
        with("later", window(NOW + 2 * HOUR, NOW + 3 * HOUR)),
        with("sooner", window(NOW + HOUR, NOW + 3 * HOUR)),
        with("past", window(NOW - 2 * HOUR, NOW - HOUR)),
        with("absent", None),
        disabled_later,
        plain_later,
    ];
    let plan = run(policy(), hosts);
    assert_eq!(plan.start, ["open", "plain"]);
    let closed = |w| SkipReason::WindowClosed { window: w };
    assert_eq!(
        plan.skipped,
        [
            skip("later", closed(window(NOW + 2 * HOUR, NOW + 3 * HOUR))),
            skip("sooner", closed(window(NOW + HOUR, NOW + 3 * HOUR))),
            skip("past", closed(window(NOW - 2 * HOUR, NOW - HOUR))),
            skip("absent", closed(None)),
            skip("off", SkipReason::AutoUpdateOffHost),
        ]
    );
    // Only hosts waiting for their window count; "off" (NOW + 10) is skipped for another reason.
    assert_eq!(plan.next_window_open_ms, Some(NOW + HOUR));

    let plan = run(policy(), vec![with("past", window(NOW - 2 * HOUR, NOW - HOUR))]);
    assert_eq!(plan.next_window_open_ms, None);
}

/// S9: requests, updates and maintenance use slots whether the host is drifted or not.
#[test]
fn in_flight_hosts_consume_the_budget() {
    let mut maintenance = host("maint");
    maintenance.state = HostState::Maintenance;
    maintenance.firmware = FirmwareStatus::Compliant;
    let mut updating = host("upd");
    updating.state = HostState::HostReprovision;
    let mut requested = host("req");
    requested.has_request = true;
    requested.firmware = FirmwareStatus::Compliant;
    let fleet = vec![maintenance, updating, requested, host("new"), host("new2")];

    let mut p = policy();
    p.limits.absolute = Some(3);
    let plan = run(p.clone(), fleet.clone());
    assert_eq!((plan.in_flight, plan.available), (3, 0));
    assert!(plan.start.is_empty());
    let full = SkipReason::CeilingReached { limit: 3, in_flight: 3 };
    let busy = SkipReason::Busy { state: HostState::HostReprovision };
    assert_eq!(plan.skipped, [skip("upd", busy.clone()), skip("new", full.clone()), skip("new2", full)]);
    assert_eq!(plan.compliant, 2);

    p.limits.absolute = Some(4);
    let plan = run(p.clone(), fleet.clone());
    assert_eq!((plan.in_flight, plan.available), (3, 1));
    assert_eq!(plan.start, ["new"]);
    let full = SkipReason::CeilingReached { limit: 4, in_flight: 4 };
    assert_eq!(plan.skipped, [skip("upd", busy), skip("new2", full)]);

    p.limits.absolute = Some(2);
    let plan = run(p, fleet);
    assert_eq!((plan.in_flight, plan.available), (3, 0), "saturates at 0");
}

#[test]
fn plan_reports_fleet_ceiling_and_counts() {
    let mut sick = host("sick");
    sick.unhealthy = true;
    sick.firmware = FirmwareStatus::Compliant;
    let mut p = policy();
    p.limits = CeilingLimits { absolute: Some(10), percent: Some(50) };
    let plan = run(p, vec![sick, host("a"), host("b"), host("c")]);
    assert_eq!(plan.fleet, FleetHealth { total: 4, unhealthy: 1 });
    assert_eq!(plan.ceiling.limit, 1);
    assert_eq!(plan.ceiling.how, "min(absolute 10, percent: ceil(50% of 4 hosts) = 2 − 1 unhealthy = 1) = 1");
    assert_eq!(plan.start, ["a"]);
    assert_eq!(plan.compliant, 1);
    assert_eq!(plan.skipped.len(), 2);
    let json = serde_json::to_string(&plan).expect("serializes");
    let back: Plan = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, plan);
}

fn limits(absolute: Option<u32>, percent: Option<u32>) -> CeilingLimits {
    CeilingLimits { absolute, percent }
}

fn fleet(total: u32, unhealthy: u32) -> FleetHealth {
    FleetHealth { total, unhealthy }
}

#[test]
fn ceiling_arithmetic() {
    let c = ceiling(limits(Some(7), None), fleet(100, 50));
    assert_eq!(c.limit, 7, "absolute ignores health");
    assert!(c.how.contains("absolute 7"), "{}", c.how);

    assert_eq!(ceiling(limits(None, Some(20)), fleet(60, 0)).limit, 12);
    assert_eq!(ceiling(limits(None, Some(10)), fleet(15, 0)).limit, 2, "1.5 rounds up");
    assert_eq!(ceiling(limits(None, Some(1)), fleet(1, 0)).limit, 1, "0.01 rounds up");
    assert_eq!(ceiling(limits(None, Some(10)), fleet(0, 0)).limit, 0);
    assert_eq!(ceiling(limits(None, Some(20)), fleet(60, 2)).limit, 10);
    let c = ceiling(limits(None, Some(10)), fleet(10, 5));
    assert_eq!(c.limit, 0, "unhealthy subtraction saturates at 0");
    assert!(c.how.contains("= 1 − 5 unhealthy = 0"), "{}", c.how);
    let big = ceiling(limits(None, Some(100)), fleet(u32::MAX, 0));
    assert_eq!(big.limit, u32::MAX, "u64 math, no overflow");

    let c = ceiling(limits(Some(10), Some(20)), fleet(60, 2));
    assert_eq!(c.limit, 10);
    assert_eq!(c.how, "min(absolute 10, percent: ceil(20% of 60 hosts) = 12 − 2 unhealthy = 10) = 10");
    assert_eq!(ceiling(limits(Some(3), Some(20)), fleet(60, 2)).limit, 3);
    assert_eq!(ceiling(limits(Some(30), Some(20)), fleet(60, 2)).limit, 10);

    let c = ceiling(limits(None, None), fleet(100, 0));
    assert_eq!(c.limit, 0);
    assert_eq!(c.how, BOTH_UNSET);
    assert!(c.how.contains("unset") && c.how.contains("no automatic update starts"));
}

/// Regression (S12): NICo passes (unhealthy, total) in reverse and always gets 0.
#[test]
fn percent_ceiling_uses_total_and_unhealthy_in_the_right_roles() {
    let percent = limits(None, Some(10));
    assert_eq!(ceiling(percent, fleet(100, 2)).limit, 8);
    let swapped = FleetHealth { total: 2, unhealthy: 100 };
    assert_eq!(ceiling(percent, swapped).limit, 0, "NICo's swapped arguments");

    let hosts: Vec<HostView> = (0..100).map(|i| HostView { unhealthy: i < 2, ..host(&format!("m{i:03}")) }).collect();
    let mut p = policy();
    p.limits = percent;
    let plan = run(p, hosts);
    assert_eq!(plan.fleet, FleetHealth { total: 100, unhealthy: 2 });
    assert_eq!(plan.ceiling.limit, 8);
    assert_eq!(plan.available, 8);
    assert_eq!(plan.start.len(), 8);
    assert_eq!(plan.start[0], "m000");
    assert_eq!(plan.skipped.len(), 92);
}

/// A catalog with the R760 (bmc 1.0, uefi 2.0, nic without default) and an explicit-start GB200.
fn catalog() -> Catalog {
    let gb200 = model(
        r#"
[host_models.g]
vendor = "Nvidia"
model = "GB200"
explicit_start_needed = true
[host_models.g.components.bmc]
current_version_reported_as = "^BMC"
[[host_models.g.components.bmc.known_firmware]]
version = "5.0"
default = true
filename = "g.bin"
"#,
    );
    Catalog::from_models(vec![three_components("[]"), gb200])
}

#[test]
fn firmware_status_over_a_catalog() {
    let cat = catalog();
    let status = |v: Option<&str>, m: Option<&str>, r, e| firmware_status(&cat, v, m, r, e);
    let (dell, r760) = (Some("Dell"), Some("PowerEdge R760"));
    let ok = report(&[("BMC_0", "1.0"), ("BIOS_0", "2.0")]);

    assert_eq!(status(dell, r760, Some(&ok), None), FirmwareStatus::Compliant);
    assert_eq!(
        status(Some(" dell "), Some("poweredge r760"), Some(&ok), None),
        FirmwareStatus::Compliant,
        "lookup is trimmed and case-insensitive"
    );
    assert_eq!(status(dell, r760, None, None), FirmwareStatus::NotExplored);
    assert_eq!(status(None, r760, Some(&ok), None), FirmwareStatus::NotExplored);
    assert_eq!(status(dell, None, Some(&ok), None), FirmwareStatus::NotExplored);
    let failed = FirmwareStatus::ExploreFailed { error: "401".into() };
    assert_eq!(status(dell, r760, Some(&ok), Some("401")), failed, "stale report not used");
    assert_eq!(status(None, None, None, Some("401")), failed);
    assert_eq!(
        status(Some("Dell"), Some("R660"), Some(&ok), None),
        FirmwareStatus::NoCatalogEntry { vendor: "Dell".into(), model: "R660".into() }
    );

    let both = report(&[("BMC_0", "0.9")]);
    assert_eq!(
        status(dell, r760, Some(&both), None),
        FirmwareStatus::Drifted {
            explicit_start_needed: false,
            differing: vec![ComponentType::Bmc],
            unmatched: vec![unmatched_uefi()],
            not_reported: vec![],
        }
    );
    let only_unmatched = report(&[("BMC_0", "1.0")]);
    assert_eq!(
        status(dell, r760, Some(&only_unmatched), None),
        FirmwareStatus::Drifted {
            explicit_start_needed: false,
            differing: vec![],
            unmatched: vec![unmatched_uefi()],
            not_reported: vec![],
        }
    );
    let gb = report(&[("BMC_0", "4.0")]);
    assert_eq!(
        status(Some("Nvidia"), Some("GB200"), Some(&gb), None),
        FirmwareStatus::Drifted {
            explicit_start_needed: true,
            differing: vec![ComponentType::Bmc],
            unmatched: vec![],
            not_reported: vec![],
        }
    );
}

#[test]
fn policy_is_read_from_the_site_config() {
    let text = r#"
[site]
name = "t"
[firmware_global]
autoupdate = true
instance_updates_manual_tagging = false
host_disable_autoupdate = ["m1", "m2"]
host_enable_autoupdate = ["m3"]
[machine_updater]
max_concurrent_machine_updates_absolute = 4
max_concurrent_machine_updates_percent = 25
"#;
    let cfg = SiteConfig::from_toml_str(text, Path::new(common::ORIGIN)).expect("config loads");
    let p = SchedulingPolicy::from_config(&cfg);
    assert_eq!(
        p,
        SchedulingPolicy {
            max_hosts_in_repair: Some(10),
            autoupdate: true,
            instance_updates_manual_tagging: false,
            host_disable_autoupdate: vec!["m1".into(), "m2".into()],
            limits: limits(Some(4), Some(25)),
            label_caps: Default::default(),
            error_budget: hostfw_model::gates::ErrorBudget { failed_hosts: 3, failed_percent: 20, min_hosts: 10 },
            waves: hostfw_model::gates::WavePolicy {
                waves: hostfw_model::gates::default_waves(),
                soak_ms: 30 * 60 * 1000
            },
            window_fit_min_samples: 3,
            approval_deadline: hostfw_model::gates::ApprovalDeadline {
                after_ms: 72 * 3_600_000,
                policy: hostfw_model::gates::DeadlinePolicy::Escalate,
            },
        }
    );
    let defaults = SiteConfig::from_toml_str(common::SITE, Path::new(common::ORIGIN)).expect("loads");
    let p = SchedulingPolicy::from_config(&defaults);
    assert_eq!(p.limits, CeilingLimits::default(), "both unset by default (S13)");
    assert!(p.host_disable_autoupdate.is_empty());
}

#[test]
fn lifecycle_names_and_window_bounds() {
    for s in HostState::ALL {
        assert_eq!(s.as_str().parse::<HostState>(), Ok(*s));
    }
    assert!("ready".parse::<HostState>().is_err(), "state names are exact");
    assert!(HostState::HostReprovision.is_busy() && HostState::Maintenance.is_busy());
    assert!(!HostState::Ready.is_busy() && !HostState::Assigned.is_busy());
    let w = TimeWindow { start_ms: 10, end_ms: 20 };
    assert!(!w.contains(9));
    assert!(w.contains(10));
    assert!(w.contains(19));
    assert!(!w.contains(20));
}

#[test]
fn every_reason_is_one_line_naming_what_changes_it() {
    let reasons = [
        (SkipReason::NotExplored, "site-explorer explore"),
        (SkipReason::ExploreFailed { error: "401 Unauthorized".into() }, "401 Unauthorized"),
        (SkipReason::NoCatalogEntry { vendor: "V".into(), model: "M".into() }, "host_models"),
        (SkipReason::NoInventoryMatch { unmatched: vec![unmatched_uefi()] }, "uefi (`^BIOS`)"),
        (
            SkipReason::VersionNotReported {
                not_reported: vec![NotReportedComponent {
                    component: ComponentType::Uefi,
                    desired: "2.0".into(),
                    members: vec![UnknownMember {
                        id: "BIOS_0".into(),
                        raw_version: "N/A".into(),
                        reason: UnknownVersion::Placeholder,
                    }],
                }],
            },
            "get-report managed-host",
        ),
        (SkipReason::AutoUpdateOffSite, "firmware_global.autoupdate"),
        (SkipReason::AutoUpdateOffHost, "machine auto-update"),
        (SkipReason::LegacyDisableList, "host_disable_autoupdate"),
        (SkipReason::AssignedManualTagging, "instance_updates_manual_tagging"),
        (SkipReason::AlreadyRequested, "host reprovision list"),
        (SkipReason::Busy { state: HostState::Maintenance }, "Maintenance"),
        (SkipReason::WindowClosed { window: None }, "managed-host start-updates"),
        (SkipReason::WindowClosed { window: window(NOW, NOW + HOUR) }, "[2026-05-01T22:00:00Z, 2026-05-01T23:00:00Z)"),
        (SkipReason::CeilingZero { how: BOTH_UNSET.into() }, "are unset"),
        (SkipReason::CeilingReached { limit: 3, in_flight: 3 }, "max_concurrent_machine_updates"),
    ];
    for (reason, needle) in reasons {
        let line = reason.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains(needle), "{line:?} should contain {needle:?}");
    }
    let s = skip("m1", SkipReason::AlreadyRequested).to_string();
    assert!(s.starts_with("m1: a reprovisioning request"), "{s}");
}

fn in_rack(id: &str, rack: &str) -> HostView {
    HostView { labels: [("rack".to_string(), rack.to_string())].into(), ..host(id) }
}

fn rack_caps(limit: u32) -> SchedulingPolicy {
    SchedulingPolicy { label_caps: [("rack".to_string(), limit)].into(), ..policy() }
}

fn rack_full(rack: &str, limit: u32, in_flight: u32) -> SkipReason {
    SkipReason::LabelCapReached { key: "rack".into(), value: rack.into(), limit, in_flight }
}

#[test]
fn a_failure_domain_cap_starts_one_host_per_rack_and_names_the_cap() {
    let hosts = vec![in_rack("a1", "r1"), in_rack("a2", "r1"), in_rack("a3", "r1"), in_rack("b1", "r2"), host("c1")];
    let p = run(rack_caps(1), hosts.clone());
    assert_eq!(p.start, vec!["a1", "b1", "c1"], "one per rack; an unlabelled host is not capped");
    assert_eq!(p.skipped, vec![skip("a2", rack_full("r1", 1, 1)), skip("a3", rack_full("r1", 1, 1))]);
    let text = rack_full("r1", 1, 1).to_string();
    assert!(text.contains("rack=r1") && text.contains("max_concurrent_per_label.rack = 1"), "{text}");
    assert!(!text.contains("  "), "one line of single-spaced words: {text:?}");

    let p = run(rack_caps(2), hosts.clone());
    assert_eq!(p.start, vec!["a1", "a2", "b1", "c1"]);
    assert_eq!(p.skipped, vec![skip("a3", rack_full("r1", 2, 2))]);

    let p = run(policy(), hosts);
    assert_eq!(p.start.len(), 5, "no caps: only the ceiling");
}

#[test]
fn hosts_in_flight_fill_their_rack_and_a_capped_host_leaves_its_slot_to_the_next() {
    let busy = HostView { has_request: true, ..in_rack("a0", "r1") };
    let maintenance = HostView { state: HostState::Maintenance, ..in_rack("b0", "r2") };
    let hosts =
        vec![busy, maintenance, in_rack("a1", "r1"), in_rack("b1", "r2"), in_rack("c1", "r3"), in_rack("c2", "r3")];
    let limited = SchedulingPolicy { limits: CeilingLimits { absolute: Some(3), percent: None }, ..rack_caps(1) };
    let p = run(limited, hosts);
    assert_eq!(p.in_flight, 2);
    assert_eq!(p.start, vec!["c1"], "r1 and r2 are full; the third slot is c1's, c2 is capped by c1");
    let reasons: Vec<(String, SkipReason)> = p
        .skipped
        .into_iter()
        .filter(|s| s.machine_id != "a0" && s.machine_id != "b0")
        .map(|s| (s.machine_id, s.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            ("a1".to_string(), rack_full("r1", 1, 1)),
            ("b1".to_string(), rack_full("r2", 1, 1)),
            ("c2".to_string(), rack_full("r3", 1, 1)),
        ]
    );
}

#[test]
fn the_ceiling_still_bounds_hosts_of_different_racks() {
    let hosts: Vec<HostView> = (0..6).map(|i| in_rack(&format!("h{i}"), &format!("r{i}"))).collect();
    let two = SchedulingPolicy { limits: CeilingLimits { absolute: Some(2), percent: None }, ..rack_caps(1) };
    let p = run(two, hosts);
    assert_eq!(p.start, vec!["h0", "h1"]);
    assert!(p.skipped.iter().all(|s| s.reason.kind() == "CeilingReached"), "{:?}", p.skipped);
}

#[test]
fn pending_is_started_or_held_only_by_the_ceiling_or_a_window() {
    // Ceiling 2 with `e` in flight: `a` starts, `b` waits for the ceiling, `c` for its window;
    // `d` (auto-update off) and `e` (requested) are not pending.
    let mut p = policy();
    p.limits = CeilingLimits { absolute: Some(2), percent: None };
    let hosts = vec![
        host("a"),
        HostView { firmware: explicit_drifted(), ..host("c") },
        host("b"),
        HostView { auto_update: Some(false), ..host("d") },
        HostView { has_request: true, ..host("e") },
    ];
    let planned = run(p.clone(), hosts.clone());
    assert_eq!(planned.start, ["a"]);
    assert_eq!(planned.pending().collect::<Vec<_>>(), ["a", "c", "b"], "{planned:?}");
    // A ceiling of 0 holds every candidate: they are pending, the others still are not.
    p.limits = CeilingLimits { absolute: None, percent: None };
    let planned = run(p, hosts);
    assert!(planned.start.is_empty());
    assert_eq!(planned.pending().collect::<Vec<_>>(), ["a", "c", "b"], "{planned:?}");
    for (reason, pending) in [
        (SkipReason::CeilingReached { limit: 1, in_flight: 1 }, true),
        (SkipReason::CeilingZero { how: BOTH_UNSET.into() }, true),
        (SkipReason::WindowClosed { window: None }, true),
        (SkipReason::LabelCapReached { key: "rack".into(), value: "r1".into(), limit: 1, in_flight: 1 }, true),
        (SkipReason::AlreadyRequested, false),
        (SkipReason::AutoUpdateOffSite, false),
        (SkipReason::NotExplored, false),
    ] {
        assert_eq!(reason.held_only_for_capacity_or_window(), pending, "{reason:?}");
    }
}
