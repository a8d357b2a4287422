//! Every activity timeout fits the configured waits inside it, for the default settings and for a
//! configured site. The expected waits are written out here from the settings' fields, not taken
//! from `waits`, so a budget that forgets a wait fails. (Before the timeouts were derived:
//! activation 15 min against 10 + 10 min of waits, inventory 60 s against 111 × 30 s GETs.)

use std::time::Duration;

use temporalio_workflow::ActivityOptions;

use crate::contracts::{ActivationStep, PlatformStep};
use crate::host::settings::{BmcWaits, ReprovisionSettings};

fn start_to_close(o: &ActivityOptions) -> Duration {
    o.close_timeouts.start_to_close().expect("a start-to-close timeout")
}

/// A site with waits unlike the defaults: long reboots, a slow BMC, a cautious concurrency.
fn configured() -> ReprovisionSettings {
    ReprovisionSettings {
        task_timeout_secs: 3 * 3600,
        heartbeat_timeout_secs: 45,
        bmc_waits: BmcWaits {
            request_timeout_ms: 90_000,
            inventory_concurrency: 2,
            reset_task_within_ms: 20 * 60_000,
            reachable_within_ms: 40 * 60_000,
            power_state_within_ms: 25 * 60_000,
            goes_down_within_ms: 2 * 60_000,
            task_poll_interval_ms: 15_000,
        },
        ..ReprovisionSettings::default()
    }
}

fn sites() -> Vec<(&'static str, ReprovisionSettings)> {
    vec![("default", ReprovisionSettings::default()), ("configured", configured())]
}

fn steps() -> Vec<ActivationStep> {
    vec![
        ActivationStep::SystemReset { reset_type: "ForceRestart".into() },
        ActivationStep::ManagerReset { reset_type: "ForceRestart".into(), healthy_reads: 3 },
        ActivationStep::PowerOff,
        ActivationStep::PowerOn,
        ActivationStep::AcPowerCycle,
    ]
}

/// The configured waits one activation step runs through (activities/src/activation.rs), each
/// with one request that may be in flight when it runs out.
fn activation_waits(step: &ActivationStep, w: &BmcWaits) -> Duration {
    let ms = Duration::from_millis;
    let req = ms(w.request_timeout_ms);
    let (task, up, power, down) =
        (ms(w.reset_task_within_ms), ms(w.reachable_within_ms), ms(w.power_state_within_ms), ms(w.goes_down_within_ms));
    match step {
        ActivationStep::SystemReset { .. } => task + req + up + req + power + req,
        ActivationStep::ManagerReset { .. } => task + req + down + req + up + req,
        ActivationStep::PowerOff | ActivationStep::PowerOn => task + req + power + req,
        // ForceOff (its Task) + Off, the AC action, BMC back, On (its Task) + On.
        ActivationStep::AcPowerCycle => task + req + power + req + req + up + req + task + req + power + req,
    }
}

#[test]
fn every_activation_step_fits_its_waits() {
    for (site, settings) in sites() {
        for step in steps() {
            let o = super::activation(&step, &settings);
            let waits = activation_waits(&step, &settings.bmc_waits);
            assert!(start_to_close(&o) >= waits, "{site} {step:?}: timeout {:?} < waits {waits:?}", start_to_close(&o));
            assert_eq!(o.heartbeat_timeout, Some(settings.heartbeat()), "{site} {step:?} heartbeats");
        }
    }
}

#[test]
fn every_platform_step_fits_its_waits() {
    for (site, settings) in sites() {
        let w = settings.bmc_waits;
        let req = Duration::from_millis(w.request_timeout_ms);
        let boot = req * 2
            + Duration::from_millis(w.reset_task_within_ms)
            + req
            + Duration::from_millis(w.power_state_within_ms)
            + req;
        for (step, waits) in [
            (PlatformStep::DiscoveryBoot, boot),
            (PlatformStep::BootToOs, boot),
            (PlatformStep::Lockdown { enabled: true }, req * 4),
        ] {
            let o = super::platform(&step, &settings);
            assert!(start_to_close(&o) >= waits, "{site} {step:?}: timeout {:?} < waits {waits:?}", start_to_close(&o));
            assert!(o.heartbeat_timeout.is_some(), "{site} {step:?} heartbeats");
        }
    }
}

#[test]
fn the_inventory_read_fits_the_captured_supermicro_and_heartbeats() {
    for (site, settings) in sites() {
        let w = settings.bmc_waits;
        // ServiceRoot, Systems + 1, UpdateService, the collection; 111 members k at a time.
        let gets = 5 + 111u32.div_ceil(w.inventory_concurrency);
        let waits = Duration::from_millis(w.request_timeout_ms) * gets;
        let o = super::inventory(&settings);
        assert!(
            start_to_close(&o) >= waits,
            "{site}: inventory timeout {:?} < {gets} GETs = {waits:?}",
            start_to_close(&o)
        );
        assert_eq!(o.heartbeat_timeout, Some(settings.heartbeat()), "{site}: the inventory read heartbeats");
    }
}

#[test]
fn following_a_task_outlasts_the_task_timeout_by_a_poll() {
    for (site, settings) in sites() {
        let w = settings.bmc_waits;
        let waits = Duration::from_secs(settings.task_timeout_secs)
            + Duration::from_millis(w.task_poll_interval_ms)
            + Duration::from_millis(w.request_timeout_ms);
        let o = super::wait_task(&settings);
        assert!(start_to_close(&o) >= waits, "{site}: task wait timeout {:?} < {waits:?}", start_to_close(&o));
    }
}

#[test]
fn a_history_without_the_waits_decodes_to_the_former_constants() {
    let old = serde_json::json!({
        "verify_poll_interval_secs": 10, "verify_max_polls": 60, "task_timeout_secs": 7200, "bmc_healthy_reads": 3
    });
    let s: ReprovisionSettings = serde_json::from_value(old).expect("old settings decode");
    assert_eq!(s.bmc_waits, BmcWaits::default());
    assert_eq!(s.bmc_waits.reachable_within(), Duration::from_secs(600));
    assert_eq!(s.bmc_waits.power_state_within(), Duration::from_secs(600));
    assert_eq!(s.bmc_waits.goes_down_within(), Duration::from_secs(30));
    let input: crate::contracts::ActivateInput =
        serde_json::from_value(serde_json::json!({"machine_id": "m", "step": "PowerOn"})).expect("old input decodes");
    assert_eq!(input.waits, BmcWaits::default());
}

#[test]
fn the_default_numbers_the_readme_quotes() {
    let s = ReprovisionSettings::default();
    let restart = super::activation(&ActivationStep::SystemReset { reset_type: "ForceRestart".into() }, &s);
    assert_eq!(start_to_close(&restart), Duration::from_secs(29 * 60 + 10));
    assert_eq!(start_to_close(&super::inventory(&s)), Duration::from_secs(41 * 60));
}
