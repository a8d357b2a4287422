//! The waits inside activities as site-config keys: their defaults (the values that were
//! constants), overrides, and the refusal of a config whose waits cannot fit (a task bound shorter
//! than its poll interval, a wait beyond its hard cap, a concurrency of 0), naming the key.

use std::path::Path;
use std::time::Duration;

use hostfw_model::SiteConfig;

fn load(extra: &str) -> Result<SiteConfig, String> {
    SiteConfig::from_toml_str(&format!("[site]\nname = \"x\"\n{extra}"), Path::new("/etc/hostfw/site.toml"))
        .map_err(|e| e.to_string())
}

fn refused(extra: &str, key: &str) -> String {
    let e = load(extra).expect_err(&format!("refused:\n{extra}"));
    assert!(e.contains(&format!("`{key}`")), "the error names `{key}`: {e}");
    e
}

#[test]
fn defaults_are_the_former_constants() {
    let c = load("").expect("loads");
    assert_eq!(c.redfish.inventory_concurrency, 4);
    assert!(c.redfish.expand, "$expand is used where advertised unless turned off");
    assert_eq!(c.redfish.reset_task_timeout, Duration::from_secs(300));
    assert_eq!(c.host_reprovision.bmc_reachable_within, Duration::from_secs(600));
    assert_eq!(c.host_reprovision.power_state_within, Duration::from_secs(600));
    assert_eq!(c.host_reprovision.bmc_goes_down_within, Duration::from_secs(30));
}

#[test]
fn waits_and_concurrency_can_be_configured() {
    let c = load(
        "[redfish]\ninventory_concurrency = 2\nexpand = false\nreset_task_timeout = \"90s\"\n\
         [host_reprovision]\nbmc_reachable_within = \"20m\"\npower_state_within = \"15m\"\nbmc_goes_down_within = \"1m\"\n",
    )
    .expect("loads");
    assert_eq!(c.redfish.inventory_concurrency, 2);
    assert!(!c.redfish.expand);
    assert_eq!(c.redfish.reset_task_timeout, Duration::from_secs(90));
    assert_eq!(c.host_reprovision.bmc_reachable_within, Duration::from_secs(1200));
    assert_eq!(c.host_reprovision.power_state_within, Duration::from_secs(900));
    assert_eq!(c.host_reprovision.bmc_goes_down_within, Duration::from_secs(60));
}

#[test]
fn a_task_timeout_shorter_than_its_poll_interval_is_refused() {
    let e = refused(
        "[redfish]\ntask_timeout = \"1s\"\n[host_reprovision]\ntask_poll_interval = \"5s\"\n",
        "redfish.task_timeout",
    );
    assert!(e.contains("task_poll_interval"), "{e}");
}

#[test]
fn waits_beyond_their_hard_caps_are_refused() {
    refused("[redfish]\ntimeout = \"20m\"\n", "redfish.timeout");
    refused("[redfish]\ntask_timeout = \"30h\"\n", "redfish.task_timeout");
    let e = refused("[host_reprovision]\nbmc_reachable_within = \"10h\"\n", "host_reprovision.bmc_reachable_within");
    assert!(e.contains("hard cap"), "{e}");
    refused("[host_reprovision]\npower_state_within = \"3h\"\n", "host_reprovision.power_state_within");
    refused("[host_reprovision]\nbmc_goes_down_within = \"0s\"\n", "host_reprovision.bmc_goes_down_within");
    refused("[redfish]\nreset_task_timeout = \"5h\"\n", "redfish.reset_task_timeout");
}

#[test]
fn inventory_concurrency_is_bounded() {
    refused("[redfish]\ninventory_concurrency = 0\n", "redfish.inventory_concurrency");
    let e = refused("[redfish]\ninventory_concurrency = 33\n", "redfish.inventory_concurrency");
    assert!(e.contains("1..=32"), "{e}");
}
