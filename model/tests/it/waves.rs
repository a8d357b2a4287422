//! Canary waves (`gates::waves`): the wave sizes' syntax and checks, the cumulative sizes of a
//! target's waves, a wave opening only after its hosts finished within the error budget and
//! the soak passed, a wave that ended over the budget pausing its target, canaries first, and
//! the pass holding hosts of a full wave while their slots go to other targets.

use hostfw_model::gates::{
    check_waves, default_waves, wave_marks, wave_statuses, ErrorBudget, NextWave, Target, TargetFailure, TargetRecord,
    WaveMark, WavePolicy, WaveRecord, WaveSize,
};
use hostfw_model::{plan, CeilingLimits, ComponentType, HostView, PassInput, SchedulingPolicy, SiteConfig, SkipReason};

use crate::common;

const MIN: i64 = 60_000;

fn target(model: &str) -> Target {
    Target { vendor: "Dell Inc.".into(), model: model.into(), component: ComponentType::Uefi, version: "3.0".into() }
}

fn host(id: &str, targets: &[&Target]) -> HostView {
    common::drifted_host(id, targets.iter().map(|t| (*t).clone()).collect())
}

/// `n` drifted hosts `<prefix>01..` that would install `t`.
fn hosts(prefix: &str, n: usize, t: &Target) -> Vec<HostView> {
    (1..=n).map(|i| host(&format!("{prefix}{i:02}"), &[t])).collect()
}

fn running(mut h: HostView) -> HostView {
    h.has_request = true;
    h
}

/// The record of `t`: `done` hosts finished (the last at `last_done_ms`), `open` hosts still at
/// it, `failed` hosts failed (and finished).
fn record(t: &Target, done: &[&str], open: &[&str], failed: &[&str], last_done_ms: i64) -> TargetRecord {
    TargetRecord {
        target: t.clone(),
        attempted_hosts: u32::try_from(done.len() + open.len() + failed.len()).unwrap(),
        failures: failed
            .iter()
            .map(|m| TargetFailure { machine_id: m.to_string(), reason: "task Exception".into(), at_ms: last_done_ms })
            .collect(),
        open: open.iter().map(|m| m.to_string()).collect(),
        finished: done.iter().map(|m| m.to_string()).collect(),
        last_done_ms: Some(last_done_ms),
        last_attempt_ms: Some(last_done_ms - MIN),
        failed_last: u32::try_from(failed.len()).unwrap(),
        waves: None,
    }
}

fn waves(sizes: &[&str], soak_ms: i64) -> WavePolicy {
    WavePolicy { waves: sizes.iter().map(|s| s.parse().unwrap()).collect(), soak_ms }
}

fn policy(w: WavePolicy, ceiling: u32) -> SchedulingPolicy {
    SchedulingPolicy {
        max_hosts_in_repair: None,
        autoupdate: true,
        instance_updates_manual_tagging: false,
        host_disable_autoupdate: vec![],
        limits: CeilingLimits { absolute: Some(ceiling), percent: None },
        label_caps: Default::default(),
        error_budget: ErrorBudget { failed_hosts: 3, failed_percent: 20, min_hosts: 10 },
        waves: w,
        window_fit_min_samples: 0,
        approval_deadline: Default::default(),
    }
}

fn pass(
    w: WavePolicy,
    ceiling: u32,
    hosts: Vec<HostView>,
    targets: Vec<TargetRecord>,
    now_ms: i64,
) -> hostfw_model::Plan {
    plan(&PassInput {
        now_ms,
        policy: policy(w, ceiling),
        hosts,
        targets,
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    })
}

fn reason_of<'a>(p: &'a hostfw_model::Plan, id: &str) -> &'a SkipReason {
    &p.skipped.iter().find(|s| s.machine_id == id).unwrap_or_else(|| panic!("{id} not skipped: {p:#?}")).reason
}

#[test]
fn wave_sizes_parse_and_bad_ones_are_refused_with_the_reason() {
    assert_eq!("1".parse::<WaveSize>(), Ok(WaveSize::Hosts(1)));
    assert_eq!(" 10% ".parse::<WaveSize>(), Ok(WaveSize::Percent(10)));
    for (bad, why) in [
        ("0", "0 hosts"),
        ("0%", "1% to 100%"),
        ("101%", "1% to 100%"),
        ("ten", "whole number"),
        ("5.5%", "whole percentage"),
    ] {
        let e = bad.parse::<WaveSize>().expect_err(bad);
        assert!(e.contains(why) && e.contains(bad), "{bad}: {e}");
    }
    assert_eq!(check_waves(&default_waves()), Ok(()));
    assert_eq!(check_waves(&[]), Ok(()), "an empty list turns waves off");
    let e = check_waves(&["1".parse().unwrap(), "50%".parse().unwrap()]).unwrap_err();
    assert!(e.contains("\"50%\"") && e.contains("100%"), "{e}");
    let e = check_waves(&["50%".parse().unwrap(), "10%".parse().unwrap(), "100%".parse().unwrap()]).unwrap_err();
    assert!(e.contains("10% follows 50%"), "{e}");
}

#[test]
fn the_site_config_defaults_to_one_host_then_10_50_and_all_with_a_soak_and_refuses_a_bad_list() {
    let cfg = SiteConfig::from_toml_str(common::SITE, std::path::Path::new(common::ORIGIN)).expect("loads");
    let p = SchedulingPolicy::from_config(&cfg);
    assert_eq!(p.waves.waves, default_waves());
    assert_eq!(p.waves.soak_ms, 30 * MIN);
    let text = format!("{}\n[machine_updater]\ncanary_waves = [\"1\", \"50%\"]\n", common::SITE);
    let e =
        SiteConfig::from_toml_str(&text, std::path::Path::new(common::ORIGIN)).expect_err("no 100% wave").to_string();
    assert!(e.contains("machine_updater.canary_waves") && e.contains("100%"), "{e}");
    let text = format!("{}\n[machine_updater]\ncanary_waves = [\"1\", \"x%\", \"100%\"]\n", common::SITE);
    let e = SiteConfig::from_toml_str(&text, std::path::Path::new(common::ORIGIN)).expect_err("bad size").to_string();
    assert!(e.contains("canary_waves") && e.contains("x%"), "{e}");
}

#[test]
fn percentages_round_up_and_sizes_are_cumulative() {
    assert_eq!(WaveSize::Percent(10).hosts_of(48), 5);
    assert_eq!(WaveSize::Percent(10).hosts_of(3), 1, "at least one host");
    assert_eq!(WaveSize::Percent(50).hosts_of(3), 2);
    assert_eq!(WaveSize::Percent(100).hosts_of(48), 48);
    let t = target("R760");
    let w = waves(&["1", "10%", "50%", "100%"], 0);
    let s = wave_statuses(&w, &ErrorBudget::default(), &hosts("h", 48, &t), &[], 0);
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].wave, s[0].waves, s[0].allowed, s[0].hosts, s[0].started), (1, 4, 1, 48, 0));
    assert_eq!(s[0].next, NextWave::Filling);
}

#[test]
fn the_first_wave_starts_one_host_per_model_and_the_others_wait_with_the_reason() {
    let a = target("R760");
    let b = target("R750");
    let mut fleet = hosts("a", 5, &a);
    fleet.extend(hosts("b", 5, &b));
    let p = pass(waves(&["1", "10%", "50%", "100%"], 10 * MIN), 8, fleet, vec![], 0);
    assert_eq!(p.start, vec!["a01", "b01"], "one host of each target: {p:#?}");
    match reason_of(&p, "a02") {
        SkipReason::WaveFull { target, wave: 1, waves: 4, allowed: 1, next } => {
            assert_eq!(target, &a);
            assert_eq!(next, &NextWave::AfterRunning { running: 1, soak_ms: 10 * MIN });
        }
        other => panic!("{other:?}"),
    }
    let sentence = reason_of(&p, "a02").to_string();
    assert!(sentence.contains("canary wave 1 of 4 of Dell Inc. R760 uefi 3.0 is full (1 host in all)"), "{sentence}");
    assert!(sentence.contains("opens 10m after its 1 running host finishes"), "{sentence}");
    assert!(p.pending().any(|id| id == "a02"), "a host held by its wave is pending work");
}

#[test]
fn hosts_labelled_canary_go_first() {
    let t = target("R760");
    let mut fleet = hosts("h", 4, &t);
    fleet[2].labels.insert("canary".into(), "true".into());
    let p = pass(waves(&["1", "100%"], 0), 8, fleet, vec![], 0);
    assert_eq!(p.start, vec!["h03"]);
}

#[test]
fn a_running_wave_holds_the_next_until_its_hosts_finish() {
    let t = target("R760");
    let mut fleet = hosts("h", 10, &t);
    fleet[0] = running(fleet[0].clone());
    let rec = record(&t, &[], &["h01"], &[], 0);
    let p = pass(waves(&["1", "50%", "100%"], 0), 8, fleet, vec![rec], 5 * MIN);
    assert!(p.start.is_empty(), "{p:#?}");
    assert_eq!(p.waves[0].next, NextWave::AfterRunning { running: 1, soak_ms: 0 });
    // In flight but not yet on record (the workflow has not planned its install): running too.
    let mut fleet = hosts("h", 10, &t);
    fleet[3] = running(fleet[3].clone());
    let p = pass(waves(&["1", "50%", "100%"], 0), 8, fleet, vec![], 5 * MIN);
    assert!(p.start.is_empty(), "{p:#?}");
    assert_eq!((p.waves[0].started, p.waves[0].running), (1, 1));
}

#[test]
fn the_next_wave_opens_after_the_soak_and_fills_to_its_size() {
    let t = target("R760");
    // h01 finished at minute 10 (it is compliant now: no longer among the drifted hosts).
    let fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(1).collect();
    let rec = record(&t, &["h01"], &[], &[], 10 * MIN);
    let w = waves(&["1", "50%", "100%"], 30 * MIN);
    let p = pass(w.clone(), 8, fleet.clone(), vec![rec.clone()], 39 * MIN);
    assert!(p.start.is_empty(), "still soaking: {p:#?}");
    assert_eq!(p.waves[0].next, NextWave::At { at_ms: 40 * MIN });
    assert_eq!(p.next_wave_open_ms, Some(40 * MIN), "the manager wakes when the soak ends");
    assert_eq!(p.waves[0].hosts, 10, "the finished host still counts among the target's hosts");
    let p = pass(w, 8, fleet, vec![rec], 40 * MIN);
    assert_eq!(p.waves[0].wave, 2);
    assert_eq!(p.start, vec!["h02", "h03", "h04", "h05"], "50 % of 10 in all, one already done: {p:#?}");
    assert!(matches!(reason_of(&p, "h06"), SkipReason::WaveFull { wave: 2, allowed: 5, .. }));
}

#[test]
fn the_last_wave_releases_every_host_and_small_targets_skip_empty_waves() {
    let t = target("R760");
    // Three hosts: 1, then 10 % (1 host: nothing new) then 50 % (2) then all.
    let fleet: Vec<HostView> = hosts("h", 3, &t).into_iter().skip(1).collect();
    let rec = record(&t, &["h01"], &[], &[], 0);
    let p = pass(waves(&["1", "10%", "50%", "100%"], 0), 8, fleet, vec![rec], MIN);
    assert_eq!(p.waves[0].wave, 3, "wave 2 adds no host and is passed through: {p:#?}");
    assert_eq!(p.start, vec!["h02"]);
    let fleet: Vec<HostView> = hosts("h", 3, &t).into_iter().skip(2).collect();
    let rec = record(&t, &["h01", "h02"], &[], &[], 0);
    let p = pass(waves(&["1", "10%", "50%", "100%"], 0), 8, fleet, vec![rec], MIN);
    assert_eq!(p.waves[0].next, NextWave::None);
    assert_eq!(p.start, vec!["h03"]);
}

#[test]
fn a_wave_that_ended_over_the_budget_pauses_its_target_while_other_targets_go_on() {
    let bad = target("R760");
    let good = target("R750");
    let mut fleet: Vec<HostView> = hosts("a", 10, &bad).into_iter().skip(1).collect();
    fleet.extend(hosts("b", 10, &good).into_iter().skip(1));
    let records = vec![record(&bad, &[], &[], &["a01"], 10 * MIN), record(&good, &["b01"], &[], &[], 10 * MIN)];
    let p = pass(waves(&["1", "50%", "100%"], 0), 8, fleet, records, 11 * MIN);
    assert_eq!(p.start, vec!["b02", "b03", "b04", "b05"], "{p:#?}");
    let paused = p.paused.iter().find(|x| x.target == bad).expect("the failed canary pauses its target");
    assert!(paused.by_wave);
    assert!(paused.rule.contains("canary wave 1 of 3 ended with 1 of 1 hosts failed"), "{}", paused.rule);
    assert_eq!(paused.failures[0].machine_id, "a01");
    assert!(matches!(reason_of(&p, "a02"), SkipReason::TargetPaused { .. }));
    assert!(p.held_by_pause().any(|id| id == "a05"));
    // The budget's own count rule (3) was not reached: without waves nothing would be paused.
    let p = pass(WavePolicy::default(), 8, vec![host("a02", &[&bad])], vec![record(&bad, &[], &[], &["a01"], 0)], MIN);
    assert!(p.paused.is_empty() && p.start == vec!["a02"], "{p:#?}");
}

#[test]
fn a_host_still_retrying_keeps_its_wave_open_and_one_that_left_flight_counts_as_finished() {
    let t = target("R760");
    // h01 failed once and is at it again (open): the wave waits instead of pausing.
    let mut fleet = hosts("h", 10, &t);
    fleet[0] = running(fleet[0].clone());
    let mut rec = record(&t, &[], &[], &["h01"], 10 * MIN);
    rec.open = vec!["h01".into()];
    rec.failed_last = 0;
    let p = pass(waves(&["1", "100%"], 0), 8, fleet, vec![rec], 11 * MIN);
    assert!(p.paused.is_empty() && p.start.is_empty(), "{p:#?}");
    assert_eq!(p.waves[0].next, NextWave::AfterRunning { running: 1, soak_ms: 0 });
    // h01's attempt is open on record but the host is no longer in flight (its request was
    // removed): it does not hold the wave.
    let fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(1).collect();
    let p = pass(waves(&["1", "100%"], 0), 8, fleet, vec![record(&t, &[], &["h01"], &[], 10 * MIN)], 11 * MIN);
    assert_eq!(p.waves[0].wave, 2, "{p:#?}");
    assert_eq!(p.start.len(), 8);
}

#[test]
fn a_host_of_two_targets_waits_for_the_fuller_wave_and_its_slot_goes_to_the_next() {
    let a = target("R760");
    let b = Target { component: ComponentType::Bmc, ..target("R760") };
    // h01 (both targets) runs; h02 needs both, h03 only `b`... but `b`'s first wave is full too.
    let fleet =
        vec![running(host("h01", &[&a, &b])), host("h02", &[&a, &b]), host("h03", &[&b]), host("x01", &[&target("X")])];
    let p = pass(waves(&["1", "100%"], 0), 8, fleet, vec![], 0);
    assert_eq!(p.start, vec!["x01"], "{p:#?}");
    assert!(matches!(reason_of(&p, "h02"), SkipReason::WaveFull { .. }));
    assert!(matches!(reason_of(&p, "h03"), SkipReason::WaveFull { .. }));
}

#[test]
fn waves_off_start_every_host_the_ceiling_allows() {
    let t = target("R760");
    let p = pass(WavePolicy::default(), 8, hosts("h", 10, &t), vec![], 0);
    assert_eq!(p.start.len(), 8);
    assert!(p.waves.is_empty());
}

#[test]
fn a_wave_passed_earlier_is_not_soaked_again_and_a_finished_target_has_no_wave() {
    let t = target("R760");
    // Waves 1, 2 (2 hosts in all), all. The last wave opened earlier (on record), so a host
    // that finished a moment ago does not hold it for another soak.
    let fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(3).collect();
    let mut rec = record(&t, &["h01", "h02", "h03"], &[], &[], 10 * MIN);
    rec.waves = Some(WaveRecord { hosts: 10, wave: 3 });
    let p = pass(waves(&["1", "20%", "100%"], 30 * MIN), 8, fleet.clone(), vec![rec], 10 * MIN + 1);
    assert_eq!((p.waves[0].wave, &p.waves[0].next), (3, &NextWave::None), "{p:#?}");
    assert_eq!(p.start.len(), 7);
    // No wave on record (hosts started before waves were recorded, or by direct requests):
    // more started hosts than a wave holds do not open the next one; its checks and soak do.
    let rec = record(&t, &["h01", "h02", "h03"], &[], &[], 10 * MIN);
    let p = pass(waves(&["1", "20%", "100%"], 30 * MIN), 8, fleet, vec![rec], 10 * MIN + 1);
    assert_eq!((p.waves[0].wave, &p.waves[0].next), (1, &NextWave::At { at_ms: 40 * MIN }), "{p:#?}");
    assert!(p.start.is_empty());
    // Every host has taken it: nothing to show.
    let rec = record(&t, &["h01", "h02", "h03"], &[], &[], 10 * MIN);
    let p = pass(waves(&["1", "20%", "100%"], 30 * MIN), 8, vec![], vec![rec], 10 * MIN + 1);
    assert!(p.waves.is_empty() && p.next_wave_open_ms.is_none(), "{p:#?}");
}

#[test]
fn a_host_whose_retry_budget_is_spent_does_not_hold_a_wave_of_a_target_it_never_reached() {
    let bmc = Target { component: ComponentType::Bmc, ..target("R760") };
    let uefi = target("R760");
    // h01 was the canary of both; it failed on the BMC (on record) and is exhausted: it never
    // began the UEFI. The UEFI wave counts it as started and finished, not failed.
    let mut h01 = running(host("h01", &[&bmc, &uefi]));
    h01.exhausted = true;
    let mut fleet = vec![h01];
    fleet.extend((2..=5).map(|i| host(&format!("h{i:02}"), &[&uefi])));
    let rec = record(&bmc, &[], &[], &["h01"], 10 * MIN);
    // No UEFI attempt ever ended: there is nothing to soak after, the next wave opens at once.
    let p = pass(waves(&["1", "100%"], 30 * MIN), 8, fleet.clone(), vec![rec], 11 * MIN);
    let uefi_wave = p.waves.iter().find(|w| w.target == uefi).unwrap();
    assert_eq!((uefi_wave.started, uefi_wave.running, uefi_wave.wave), (1, 0, 2), "{p:#?}");
    assert_eq!(p.start, vec!["h02", "h03", "h04", "h05"]);
    // Not exhausted (still retrying): the UEFI wave waits for it.
    fleet[0].exhausted = false;
    let p = pass(waves(&["1", "100%"], 0), 8, fleet, vec![], 11 * MIN);
    assert!(p.start.is_empty(), "{p:#?}");
}

#[test]
fn a_host_that_recovered_on_a_retry_does_not_hold_the_next_wave() {
    let t = target("R760");
    let fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(1).collect();
    // h01 failed its first try and succeeded on its retry: a failure on record, none at the end.
    let mut rec = record(&t, &[], &[], &["h01"], 10 * MIN);
    rec.failed_last = 0;
    let p = pass(waves(&["1", "50%", "100%"], 0), 8, fleet.clone(), vec![rec], 11 * MIN);
    assert!(p.paused.is_empty(), "{p:#?}");
    assert_eq!((p.waves[0].wave, p.start.len()), (2, 4));
    // Its retry failed too: the wave ended over the budget's share.
    let p = pass(waves(&["1", "50%", "100%"], 0), 8, fleet, vec![record(&t, &[], &[], &["h01"], 10 * MIN)], 11 * MIN);
    assert!(p.start.is_empty() && p.paused.len() == 1, "{p:#?}");
}

#[test]
fn a_drifted_host_in_maintenance_has_not_started_on_the_target() {
    // m1 is in maintenance (a slot of the ceiling, not an update): the canary slot is m2's.
    let t = target("R760");
    let mut m1 = host("m1", &[&t]);
    m1.state = hostfw_model::HostState::Maintenance;
    let p = pass(waves(&["1", "100%"], 30 * MIN), 5, vec![m1, host("m2", &[&t])], vec![], 0);
    assert_eq!(p.start, vec!["m2".to_string()], "{p:#?}");
    assert_eq!((p.waves[0].started, p.waves[0].running), (0, 0), "{:?}", p.waves[0]);
}

#[test]
fn a_failed_canary_waiting_for_its_retry_holds_its_wave_open_and_pauses_it_once_its_budget_is_spent() {
    let t = target("R760");
    // h01 failed its first try; its request waits for the retry interval (in flight, not open).
    let mut fleet = hosts("h", 10, &t);
    fleet[0] = running(fleet[0].clone());
    let rec = record(&t, &[], &[], &["h01"], 10 * MIN);
    let p = pass(waves(&["1", "100%"], 0), 8, fleet.clone(), vec![rec.clone()], 11 * MIN);
    assert!(p.paused.is_empty() && p.start.is_empty(), "not paused between two tries: {p:#?}");
    assert_eq!(p.waves[0].next, NextWave::AfterRunning { running: 1, soak_ms: 0 });
    // Its retry budget is spent: the failure holds the wave, and the target is paused.
    fleet[0].exhausted = true;
    let p = pass(waves(&["1", "100%"], 0), 8, fleet, vec![rec], 11 * MIN);
    assert!(p.start.is_empty() && p.paused.len() == 1, "{p:#?}");
    assert!(matches!(p.waves[0].next, NextWave::Held { failed: 1, attempted: 1, .. }), "{:?}", p.waves[0].next);
}

#[test]
fn a_target_whose_hosts_shrink_while_its_wave_runs_does_not_open_the_next_wave_early() {
    let t = target("R760");
    let w = waves(&["1", "50%", "100%"], 30 * MIN);
    // Ten hosts; h01 (wave 1) finished at minute 10; after the soak wave 2 (5 in all) opens.
    let fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(1).collect();
    let rec = record(&t, &["h01"], &[], &[], 10 * MIN);
    let p = pass(w.clone(), 8, fleet, vec![rec], 40 * MIN);
    assert_eq!(p.start, vec!["h02", "h03", "h04", "h05"], "{p:#?}");
    // h02..h05 run. Four hosts that had still to take it fail exploration (no target any more):
    // the hosts left are h02..h06 and the finished h01.
    let mut fleet: Vec<HostView> = hosts("h", 6, &t).into_iter().skip(1).collect();
    for h in fleet.iter_mut().take(4) {
        *h = running(h.clone());
    }
    // The pass that opened wave 2 recorded it, and the 10 hosts of the first wave.
    let mut rec = record(&t, &["h01"], &["h02", "h03", "h04", "h05"], &[], 10 * MIN);
    rec.last_attempt_ms = Some(40 * MIN);
    rec.waves = Some(WaveRecord { hosts: 10, wave: 2 });
    let p = pass(w.clone(), 8, fleet.clone(), vec![rec.clone()], 41 * MIN);
    assert!(p.start.is_empty(), "h06 must wait for wave 2's running hosts: {p:#?}");
    assert_eq!(p.waves[0].wave, 2, "{:?}", p.waves[0]);
    assert_eq!(p.waves[0].next, NextWave::AfterRunning { running: 4, soak_ms: 30 * MIN });
    // They finish at minute 50: the soak still applies before the last wave opens.
    let fleet: Vec<HostView> = hosts("h", 6, &t).into_iter().skip(5).collect();
    let mut rec = record(&t, &["h01", "h02", "h03", "h04", "h05"], &[], &[], 50 * MIN);
    rec.waves = Some(WaveRecord { hosts: 10, wave: 2 });
    let p = pass(w.clone(), 8, fleet.clone(), vec![rec.clone()], 51 * MIN);
    assert!(p.start.is_empty(), "soaking: {p:#?}");
    assert_eq!(p.waves[0].next, NextWave::At { at_ms: 80 * MIN });
}

/// The pass whose view is `hosts` and `targets` at `now_ms`, and the records as the site
/// database holds them after the manager pass stored its wave marks.
fn pass_and_mark(
    w: &WavePolicy,
    hosts: Vec<HostView>,
    mut targets: Vec<TargetRecord>,
    now_ms: i64,
) -> (hostfw_model::Plan, Vec<WaveMark>, Vec<TargetRecord>) {
    let input = PassInput {
        now_ms,
        policy: policy(w.clone(), 8),
        hosts,
        targets: targets.clone(),
        update_durations: Vec::new(),
        approvals: Default::default(),
        brakes: Default::default(),
    };
    let p = plan(&input);
    let marks = wave_marks(&input, &p);
    for m in &marks {
        match targets.iter_mut().find(|r| r.target == m.target) {
            Some(r) => r.waves = Some(m.record),
            None => {
                let mut r = record(&m.target, &[], &[], &[], 0);
                r.last_done_ms = None;
                r.last_attempt_ms = None;
                r.waves = Some(m.record);
                targets.push(r);
            }
        }
    }
    (p, marks, targets)
}

#[test]
fn the_host_count_is_frozen_when_the_first_wave_starts_and_the_wave_reached_is_recorded() {
    let t = target("R760");
    let w = waves(&["1", "50%", "100%"], 30 * MIN);
    // The pass that starts the canary freezes 10 hosts and wave 1; nothing on record before.
    let (p, marks, recs) = pass_and_mark(&w, hosts("h", 10, &t), vec![], 0);
    assert_eq!(p.start, vec!["h01"]);
    assert_eq!(
        marks,
        vec![WaveMark { target: t.clone(), record: WaveRecord { hosts: 10, wave: 1 }, attempted_hosts: 0 }]
    );
    // A pass that changes nothing writes nothing.
    let mut fleet = hosts("h", 10, &t);
    fleet[0] = running(fleet[0].clone());
    let (_, marks, _) = pass_and_mark(&w, fleet, recs.clone(), MIN);
    assert!(marks.is_empty(), "{marks:?}");

    // h01 finished at minute 10; after the soak wave 2 opens: recorded with the 4 hosts it starts.
    let mut rec = record(&t, &["h01"], &[], &[], 10 * MIN);
    rec.waves = recs[0].waves;
    let fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(1).collect();
    let (p, marks, recs) = pass_and_mark(&w, fleet, vec![rec], 40 * MIN);
    assert_eq!(p.start, vec!["h02", "h03", "h04", "h05"]);
    assert_eq!(marks[0].record, WaveRecord { hosts: 10, wave: 2 });
    assert_eq!(marks[0].attempted_hosts, 1);

    // Wave 2's four hosts ran and finished at minute 50, and then 4 of the 5 hosts left failed
    // exploration: 6 hosts now. The waves stay sized for 10: wave 2 is full, the soak applies.
    let mut rec = record(&t, &["h01", "h02", "h03", "h04", "h05"], &[], &[], 50 * MIN);
    rec.waves = recs[0].waves;
    let left = vec![host("h06", &[&t])];
    let (p, marks, _) = pass_and_mark(&w, left.clone(), vec![rec.clone()], 51 * MIN);
    assert_eq!((p.waves[0].wave, p.waves[0].hosts, p.waves[0].hosts_now, p.waves[0].allowed), (2, 10, 6, 5));
    assert_eq!(p.waves[0].next, NextWave::At { at_ms: 80 * MIN }, "{p:#?}");
    assert!(p.start.is_empty() && marks.is_empty(), "{p:#?} {marks:?}");
    let (p, marks, _) = pass_and_mark(&w, left, vec![rec.clone()], 80 * MIN);
    assert_eq!(p.start, vec!["h06"]);
    assert_eq!(marks[0].record, WaveRecord { hosts: 10, wave: 3 });

    // Instead, 6 new hosts joined (16 now): the count grows, and the open wave with it (8 in all).
    let mut fleet: Vec<HostView> = hosts("h", 10, &t).into_iter().skip(5).collect();
    fleet.extend(hosts("n", 6, &t));
    let mut rec = record(&t, &["h01"], &["h02", "h03", "h04", "h05"], &[], 10 * MIN);
    rec.waves = Some(WaveRecord { hosts: 10, wave: 2 });
    for h in fleet.iter_mut() {
        if ["h02", "h03", "h04", "h05"].contains(&h.machine_id.as_str()) {
            *h = running(h.clone());
        }
    }
    let (p, marks, _) = pass_and_mark(&w, fleet, vec![rec], 41 * MIN);
    assert_eq!((p.waves[0].wave, p.waves[0].hosts, p.waves[0].allowed), (2, 16, 8), "{p:#?}");
    assert_eq!(p.start, vec!["h06", "h07", "h08"], "{p:#?}");
    assert_eq!(marks[0].record, WaveRecord { hosts: 16, wave: 2 });
}

/// Issue 31 (found by the property `properties::waves`): a host whose attempt ended without
/// failing but that still has to take the target (aborted to maintenance mid-install, or a
/// catalog default that changed back) is one of the target's hosts, not two. The site database's
/// record used to name only the open and the failed hosts, so the pass counted such a host both
/// among the hosts that still have to take the target and among the finished attempts: here 7
/// hosts instead of 6, and wave 2 (50 %) let 4 hosts start instead of 3, before the soak. The
/// record now names the finished hosts too (`TargetRecord::finished`).
#[test]
fn a_host_that_finished_an_attempt_and_still_has_to_take_the_target_is_one_host() {
    let t = target("R760");
    let w = waves(&["1", "50%", "75%", "100%"], 30 * MIN);
    // Six hosts; h01 (wave 1) and h03 finished and are compliant; h02 was aborted to
    // maintenance during its install (its attempt finished, it still has to take the target).
    let mut h02 = host("h02", &[&t]);
    h02.state = hostfw_model::HostState::Maintenance;
    let fleet = vec![h02, host("h04", &[&t]), host("h05", &[&t]), host("h06", &[&t])];
    let mut rec = record(&t, &["h01", "h02", "h03"], &[], &[], 50 * MIN);
    rec.waves = Some(WaveRecord { hosts: 6, wave: 2 });
    let p = pass(w, 8, fleet, vec![rec], 51 * MIN);
    assert!(p.start.is_empty(), "wave 2 (3 of 6 hosts) is full and soaking: {p:#?}");
    assert_eq!((p.waves[0].hosts, p.waves[0].allowed), (6, 3), "{p:#?}");
    assert_eq!(p.waves[0].next, NextWave::At { at_ms: 80 * MIN });
}
