//! `machine auto-update` (by machine and by selector) and `abort` by selector: setting and clearing
//! the override, the effective policy printed, previews and questions, and the refusals (unknown
//! machines, a missing or doubled policy flag) that write nothing.

use clap::error::ErrorKind;

use crate::common::{json, parse_err, Site};

#[tokio::test]
async fn auto_update_sets_and_clears_the_override_and_prints_the_effective_policy() {
    let site = Site::with_autoupdate(false);
    site.add_machines(&["m1"]).await;

    let out = site.ok(&["machine", "auto-update", "--machine", "m1", "--enable"]).await;
    assert_eq!(out.trim(), "auto-update of m1: enabled (per-machine override)");
    let out = site.ok(&["machine", "auto-update", "--machine", "m1", "--disable"]).await;
    assert_eq!(out.trim(), "auto-update of m1: disabled (per-machine override)");
    let store = site.store().await;
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().auto_update, Some(false));
    store.close().await;

    let out = site.ok(&["machine", "auto-update", "--machine", "m1", "--clear"]).await;
    assert_eq!(out.trim(), "auto-update of m1: disabled (site default firmware_global.autoupdate)");
    let store = site.store().await;
    assert_eq!(store.machine_get("m1").await.unwrap().unwrap().auto_update, None);
    store.close().await;

    let out = site.ok(&["--format", "json", "machine", "auto-update", "--machine", "m1", "--enable"]).await;
    let v = json(&out);
    assert_eq!(v["machine_id"], "m1");
    assert_eq!(v["override"], true);
    assert_eq!(v["site_default"], false);
    assert_eq!(v["effective"], true);
}

/// Issue 27: the bulk form by selector, with the dry run and confirmation of `all-drifted`; the
/// machines in scope change together, the others not at all.
#[tokio::test]
async fn auto_update_by_selector_previews_asks_then_changes_every_machine_in_scope() {
    let site = Site::with_autoupdate(false);
    site.add_machines(&["m1", "m2", "m3"]).await;
    site.ok(&["machine", "label", "m1", "--set", "rack=r1"]).await;
    site.ok(&["machine", "label", "m2", "--set", "rack=r1"]).await;
    let overrides = || async {
        let store = site.store().await;
        let mut seen = Vec::new();
        for id in ["m1", "m2", "m3"] {
            seen.push(store.machine_get(id).await.unwrap().unwrap().auto_update);
        }
        store.close().await;
        seen
    };

    let out = site.ok(&["machine", "auto-update", "--selector", "label=rack=r1", "--enable", "--dry-run"]).await;
    assert!(out.starts_with("would enable auto-update on 2 machine(s) matching label=rack=r1:"), "{out}");
    let before = "disabled (site default firmware_global.autoupdate)";
    assert!(out.contains(&format!("m1  {before} -> enabled (per-machine override)")), "{out}");
    assert!(out.contains("m2  ") && !out.contains("m3"), "{out}");
    assert_eq!(overrides().await, [None, None, None], "a dry run changes nothing");

    // Not confirmed (no terminal): refused with the question, nothing changed.
    let err = site.fails(&["machine", "auto-update", "--selector", "label=rack=r1", "--enable"]).await;
    assert!(err.contains("Enable the auto-update override of 2 machine(s) matching label=rack=r1?"), "{err}");
    assert_eq!(overrides().await, [None, None, None]);

    let out = site.ok(&["machine", "auto-update", "--selector", "label=rack=r1", "--enable", "--yes"]).await;
    assert!(out.contains("auto-update enable on 2 machine(s)") && out.contains("auto-update of m2: enabled"), "{out}");
    assert_eq!(overrides().await, [Some(true), Some(true), None]);
    let v = json(&site.ok(&["--format", "json", "audit"]).await);
    let rows = v.as_array().unwrap();
    let bulk = rows.iter().filter(|r| r["detail"].as_str().is_some_and(|d| d.contains("selector label=rack=r1")));
    assert_eq!(bulk.count(), 2, "one audit row per machine: {v}");

    let none = site.ok(&["machine", "auto-update", "--selector", "label=rack=r9", "--disable", "--yes"]).await;
    assert_eq!(none.trim(), "no registered machine matches label=rack=r9; nothing to change");
    let bad = site.fails(&["machine", "auto-update", "--selector", "rack=r1", "--clear", "--yes"]).await;
    assert!(bad.contains("nothing was changed"), "{bad}");
    assert_eq!(overrides().await, [Some(true), Some(true), None]);
}

/// `host reprovision abort --selector`: the hosts with a request in scope are previewed (dry
/// run) and the change is refused until confirmed; nothing is aborted meanwhile, hosts without a
/// request or out of scope are never listed.
#[tokio::test]
async fn abort_by_selector_previews_the_requested_hosts_in_scope_and_asks_first() {
    let site = Site::new();
    site.add_machines(&["m1", "m2", "m3"]).await;
    site.ok(&["machine", "label", "m1", "--set", "rack=r1"]).await;
    site.ok(&["machine", "label", "m2", "--set", "rack=r1"]).await;
    site.ok(&["machine", "label", "m3", "--set", "rack=r2"]).await;
    let store = site.store().await;
    for id in ["m1", "m3"] {
        let new = hostfw_store::NewRequest {
            machine_id: id.into(),
            initiator: "AdminCli".into(),
            update_message: None,
            workflow_id: None,
        };
        store.request_create(&new).await.unwrap();
    }
    store.close().await;
    let audits = site.audit_count().await;

    let args = ["host", "reprovision", "abort", "--selector", "label=rack=r1", "--reason", "bad rack"];
    let out = site.ok(&[&args[..], &["--dry-run"]].concat()).await;
    assert!(out.starts_with("would abort 1 host(s) matching label=rack=r1:"), "{out}");
    assert!(out.contains("  m1  ") && !out.contains("m2") && !out.contains("m3"), "{out}");
    let err = site.fails(&args).await;
    assert!(err.contains("Abort the updates of 1 host(s) matching label=rack=r1"), "{err}");
    let none = site.ok(&["host", "reprovision", "abort", "--selector", "label=rack=r9", "--reason", "x"]).await;
    assert!(none.contains("no host with a reprovisioning request matches label=rack=r9"), "{none}");
    let store = site.store().await;
    assert!(store.request_get("m1").await.unwrap().is_some() && store.request_get("m3").await.unwrap().is_some());
    store.close().await;
    assert_eq!(site.audit_count().await, audits, "nothing was aborted or audited");
}

#[tokio::test]
async fn auto_update_clear_follows_an_enabled_site_default() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let out = site.ok(&["machine", "auto-update", "--machine", "m1", "--clear"]).await;
    assert_eq!(out.trim(), "auto-update of m1: enabled (site default firmware_global.autoupdate)");
}

/// Item 12: after `--clear`, a host on the legacy list is disabled, and every command says so
/// the same way.
#[tokio::test]
async fn auto_update_clear_on_a_legacy_listed_host_says_disabled_by_the_list() {
    let site = Site::new();
    site.reconfigure(|toml| toml.firmware_global("host_disable_autoupdate", vec!["m1"]));
    site.add_machines(&["m1"]).await;
    let out = site.ok(&["machine", "auto-update", "--machine", "m1", "--clear"]).await;
    let wording = "disabled (legacy firmware_global.host_disable_autoupdate list)";
    assert_eq!(out.trim(), format!("auto-update of m1: {wording}"));
    let v = json(&site.ok(&["--format", "json", "machine", "auto-update", "--machine", "m1", "--clear"]).await);
    assert_eq!((v["effective"].as_bool(), v["site_default"].as_bool()), (Some(false), Some(true)));
    let show = site.ok(&["machine", "show", "m1"]).await;
    assert!(show.contains(&format!("FIRMWARE AUTOUPDATE: Default, {wording}")), "{show}");
}

#[tokio::test]
async fn auto_update_of_an_unknown_machine_is_refused_and_writes_nothing() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let before = site.audit_count().await;
    let err = site.fails(&["machine", "auto-update", "--machine", "ghost", "--disable"]).await;
    assert!(err.contains("machine ghost is not registered (see `hostfw machine list`)"), "{err}");
    assert_eq!(site.audit_count().await, before);
}

#[test]
fn auto_update_needs_exactly_one_policy_flag() {
    let base = ["machine", "auto-update", "--machine", "m1"];
    let with =
        |flags: &[&'static str]| -> Vec<&'static str> { base.iter().copied().chain(flags.iter().copied()).collect() };
    assert_eq!(parse_err(&with(&["--enable", "--disable"])), ErrorKind::ArgumentConflict);
    assert_eq!(parse_err(&with(&["--disable", "--clear"])), ErrorKind::ArgumentConflict);
    assert_eq!(parse_err(&with(&[])), ErrorKind::MissingRequiredArgument);
    assert_eq!(parse_err(&["machine", "auto-update", "--enable"]), ErrorKind::MissingRequiredArgument);
}
