//! The simulator's view of the fleet file ([`FleetSpec`]): defaults, every key's type and
//! value rules, round trips through TOML, and errors that name the file, host and key.

use std::path::Path;

use hostfw_fleet::*;

const GOOD: &str = r#"
[defaults]
username = "root"
task_style = "dell"
firmware = [ { id = "BMC", version = "1.0" } ]

[[host]]
id = "host-001"
vendor = "Dell"
model = "PowerEdge R760"
serial = "SN001"
bmc_address = "127.0.0.11:8000"
firmware = [ { id = "Installed-25227-7.00.00.00__iDRAC.Embedded.1-1", version = "7.00.00.00" },
             { id = "Installed-159-2.1.0__BIOS.Setup.1-1", version = "2.1.0", name = "BIOS" } ]

[[host]]
id = "host-002"
vendor = "Supermicro"
model = "X13"
bmc_address = "127.0.0.12:8000"
task_style = "bmcweb"
apply_time = "OnReset"
"#;

fn err_of(text: &str) -> String {
    FleetSpec::from_toml_str(text).expect_err("must fail").to_string()
}

#[test]
fn defaults_merge_and_host_overrides() {
    let f = FleetSpec::from_toml_str(GOOD).unwrap();
    assert_eq!(f.hosts.len(), 2);
    let (a, b) = (&f.hosts[0], &f.hosts[1]);
    assert_eq!(a.username, "root");
    assert_eq!(a.password.expose(), DEFAULT_PASSWORD);
    assert_eq!(a.task_style, TaskStyle::Dell);
    assert_eq!(a.firmware.len(), 2);
    assert_eq!(a.firmware[1].name.as_deref(), Some("BIOS"));
    assert_eq!(b.task_style, TaskStyle::Bmcweb);
    assert_eq!(b.apply_time, ApplyTime::OnReset);
    assert_eq!(b.firmware, vec![FirmwareSpec::new("BMC", "1.0")]);
    assert_eq!(b.task_seconds, DEFAULT_TASK_SECONDS);
}

#[test]
fn round_trips_through_toml() {
    let f = FleetSpec::from_toml_str(GOOD).unwrap();
    let again = FleetSpec::from_toml_str(&f.to_toml_string()).unwrap();
    assert_eq!(f, again);
}

#[test]
fn unknown_host_key_names_host_and_key() {
    let e = err_of(&GOOD.replace("serial = \"SN001\"", "serail = \"SN001\""));
    assert!(e.contains("host \"host-001\"") && e.contains("serail"), "{e}");
}

#[test]
fn wrong_type_names_key() {
    let e = err_of(&GOOD.replace("apply_time = \"OnReset\"", "task_seconds = \"slow\""));
    assert!(e.contains("host \"host-002\"") && e.contains("key `task_seconds`"), "{e}");
    let e = err_of(&GOOD.replace("version = \"2.1.0\"", "version = 2"));
    assert!(e.contains("firmware[1].version"), "{e}");
}

#[test]
fn bad_enum_and_missing_key() {
    let e = err_of(&GOOD.replace("\"bmcweb\"", "\"ilo\""));
    assert!(e.contains("host-002") && e.contains("task_style") && e.contains("ilo"), "{e}");
    let e = err_of(&GOOD.replace("bmc_address = \"127.0.0.12:8000\"", ""));
    assert!(e.contains("host-002") && e.contains("key `bmc_address`"), "{e}");
}

#[test]
fn defaults_errors_blame_defaults() {
    let e = err_of(&GOOD.replace("username = \"root\"", "id = \"x\""));
    assert!(e.contains("[defaults]") && e.contains("`id`"), "{e}");
    let e = err_of(&GOOD.replace("task_style = \"dell\"", "task_seconds = -1"));
    assert!(e.contains("task_seconds"), "{e}");
}

#[test]
fn fleet_rules() {
    let e = err_of(&GOOD.replace("host-002", "host-001"));
    assert!(e.contains("duplicate host id"), "{e}");
    let e = err_of(&GOOD.replace("127.0.0.12:8000", "127.0.0.11:8000"));
    assert!(e.contains("bmc_address") && e.contains("already used"), "{e}");
    let e = err_of("[defaults]\nusername = \"a\"\n");
    assert!(e.contains("no [[host]]"), "{e}");
    let e = err_of(&GOOD.replace("id = \"BMC\"", "id = \"B/MC\""));
    assert!(e.contains("firmware[0].id"), "{e}");
    let e = err_of("[[hosts]]\nid = \"a\"\n");
    assert!(e.contains("hosts"), "{e}");
}

#[test]
fn tls_is_a_top_level_key_off_by_default() {
    let f = FleetSpec::from_toml_str(GOOD).unwrap();
    assert!(!f.tls);
    assert!(f.to_toml_string().starts_with("tls = false\n"), "written out for `machine import`");
    let f = FleetSpec::from_toml_str(&format!("tls = true\n{GOOD}")).unwrap();
    assert!(f.tls);
    let again = FleetSpec::from_toml_str(&f.to_toml_string()).unwrap();
    assert_eq!(f, again);
    let e = err_of(&format!("tls = \"yes\"\n{GOOD}"));
    assert!(e.contains("tls"), "{e}");
    // a host-level `tls` is not a thing: the whole fleet is HTTPS or none of it
    let e = err_of(&GOOD.replace("serial = \"SN001\"", "tls = true"));
    assert!(e.contains("host-001") && e.contains("tls"), "{e}");
}

#[test]
fn ports_zero_may_repeat() {
    let text = GOOD.replace("127.0.0.11:8000", "127.0.0.1:0").replace("127.0.0.12:8000", "127.0.0.1:0");
    assert!(FleetSpec::from_toml_str(&text).is_ok());
}

#[test]
fn lockdown_defaults_to_true() {
    let f = FleetSpec::from_toml_str(GOOD).unwrap();
    assert!(f.hosts.iter().all(|h| h.lockdown));
    let f = FleetSpec::from_toml_str(&GOOD.replace("username = \"root\"", "lockdown = false")).unwrap();
    assert!(f.hosts.iter().all(|h| !h.lockdown));
}

#[test]
fn faults_in_defaults_inline_and_subtable() {
    let text = GOOD
        .replace("version = \"1.0\" } ]\n", "version = \"1.0\" } ]\n[defaults.faults]\nslow_response_secs = 0.25\n")
        .replace(
            "serial = \"SN001\"",
            "serial = \"SN001\"\nfaults = { fail_next_tasks = 2, http_errors = { count = 1, status = 500 } }",
        )
        + "[host.faults]\nhide_members = [\"BMC\"]\nversion_never_changes = true\n";
    let f = FleetSpec::from_toml_str(&text).unwrap();
    let (a, b) = (&f.hosts[0].faults, &f.hosts[1].faults);
    assert_eq!(a.fail_next_tasks, 2);
    assert_eq!(a.http_errors.unwrap().status, 500);
    assert_eq!(a.slow_response_secs, 0.0, "a host's faults replace the default ones");
    assert_eq!(b.hide_members, vec!["BMC".to_string()]);
    assert!(b.version_never_changes);
    let again = FleetSpec::from_toml_str(&f.to_toml_string()).unwrap();
    assert_eq!(f, again);

    let only_defaults = GOOD
        .replace("version = \"1.0\" } ]\n", "version = \"1.0\" } ]\n[defaults.faults]\nslow_response_secs = 0.25\n");
    let f = FleetSpec::from_toml_str(&only_defaults).unwrap();
    assert!(f.hosts.iter().all(|h| h.faults.slow_response_secs == 0.25));
}

#[test]
fn fault_errors_name_the_key() {
    let e = err_of(&format!("{GOOD}[host.faults]\nhide_members = [\"CPLD\"]\n"));
    assert!(e.contains("host-002") && e.contains("faults.hide_members[0]") && e.contains("CPLD"), "{e}");
    let e = err_of(&format!("{GOOD}[host.faults]\nfail_next_task = 1\n"));
    assert!(e.contains("host-002") && e.contains("fail_next_task"), "{e}");
    let e = err_of(&format!("{GOOD}[host.faults]\nhttp_errors = {{ count = 1, status = 302 }}\n"));
    assert!(e.contains("faults.http_errors.status"), "{e}");
    let e = err_of(&GOOD.replace("username = \"root\"", "faults = { slow = 1 }"));
    assert!(e.contains("[defaults]") && e.contains("slow"), "{e}");
}

#[test]
fn default_labels_are_merged_under_a_hosts_own() {
    let text = GOOD
        .replace("username = \"root\"", "labels = { rack = \"r1\", site = \"lab\" }")
        .replace("serial = \"SN001\"", "serial = \"SN001\"\nlabels = { rack = \"r12\" }");
    let f = FleetSpec::from_toml_str(&text).unwrap();
    let labels = |i: usize| hostfw_model::labels_text(&f.hosts[i].labels);
    assert_eq!(labels(0), "rack=r12,site=lab", "the host's own value wins, key by key");
    assert_eq!(labels(1), "rack=r1,site=lab");
    assert_eq!(FleetSpec::from_toml_str(&f.to_toml_string()).unwrap(), f);
    let e = err_of(&GOOD.replace("username = \"root\"", "labels = { Rack = \"r1\" }"));
    assert!(e.contains("labels") && e.contains("Rack"), "{e}");
}

/// The fuzz seed of the fleet file writes `labels` in `[defaults]`: both views read it alike.
#[test]
fn both_views_read_the_fuzz_seed_with_default_labels() {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz-targets/seeds/fleet_file/defaults.toml");
    let text = std::fs::read_to_string(seed).unwrap();
    // Its `profile = "dell"` names no folder here: the first host alone is read.
    let text = text.split("\n[[host]]\nid = \"h2\"").next().unwrap().to_string()
        + "firmware = [ { id = \"BMC\", version = \"1\" } ]\n";
    let spec = FleetSpec::from_toml_str(&text).unwrap();
    let roster = FleetRoster::from_toml_str_in(&text, Path::new(".")).unwrap();
    assert_eq!(hostfw_model::labels_text(&spec.hosts[0].labels), "rack=r12");
    assert_eq!(roster.hosts[0].labels.as_ref().map(hostfw_model::labels_text).as_deref(), Some("rack=r12"));
}

#[test]
fn port_zero_is_a_listen_address_for_the_simulator_only() {
    let text = GOOD.replace("127.0.0.11:8000", "127.0.0.1:0");
    assert!(FleetSpec::from_toml_str(&text).is_ok(), "bmc-sim picks a free port");
    let err = FleetRoster::from_toml_str_in(&text, Path::new(".")).unwrap_err().to_string();
    assert!(err.contains("host \"host-001\"") && err.contains("key `bmc_address`") && err.contains("port 0"), "{err}");
}
