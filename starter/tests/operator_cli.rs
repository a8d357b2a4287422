//! Operator commands end to end through `hostfw_starter::run` on a temporary site (SQLite in a temp
//! directory; no Temporal server: these commands never open a client): `machine add|import` (BMC
//! addresses: canonical form, https by default, one BMC per machine), lookups by BMC address,
//! `machine auto-update`, `managed-host start-updates`, `audit`, `firmware-config set|show|history`,
//! `firmware show`, `plan`, `compliance` and `site-explorer get-report` (with versions that are
//! not reported, and quoting).
//!
//! Owns the happy paths and the refusals (unknown machines, bad times, conflicting flags, invalid
//! documents) with the check that a refused command wrote nothing. It must not need the network.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{Duration, Local, TimeZone, Utc};
use clap::error::ErrorKind;
use clap::Parser;
use hostfw_starter::cli::Cli;
use hostfw_starter::output;
use hostfw_store::Store;

#[path = "operator_cli/catalog_change.rs"]
mod catalog_change;
#[path = "operator_cli/catalog_fallback.rs"]
mod catalog_fallback;
#[path = "operator_cli/completion_man.rs"]
mod completion_man;
#[path = "operator_cli/config_check.rs"]
mod config_check;
#[path = "operator_cli/config_reload.rs"]
mod config_reload;
#[path = "operator_cli/host_show.rs"]
mod host_show;
#[path = "operator_cli/json_stdout.rs"]
mod json_stdout;
#[path = "operator_cli/json_vocabulary.rs"]
mod json_vocabulary;
#[path = "operator_cli/maintenance.rs"]
mod maintenance;
#[path = "operator_cli/scout_package.rs"]
mod scout_package;

const SITE: &str = r#"
[site]
name = "cli-test"
database_url = "sqlite://site.db"
data_dir = "data"
secret_key_file = "site.key"

[firmware_global]
autoupdate = AUTOUPDATE
firmware_directory = "firmware"

[host_models.r760]
vendor = "Dell"
model = "PowerEdge R760"
ordering = ["bmc", "uefi"]

[host_models.r760.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC\\."
[[host_models.r760.components.bmc.known_firmware]]
version = "7.10.30.00"
default = true
filename = "dell-r760/idrac-7.10.30.00.bin"

[host_models.r760.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS\\.Setup\\."
[[host_models.r760.components.uefi.known_firmware]]
version = "2.3.5"
default = true
filename = "dell-r760/bios-2.3.5.bin"
"#;

/// A runtime document that moves the R760 BMC default and adds a model needing explicit start.
const RUNTIME_DOC: &str = r#"
[host_models.r760-bmc]
vendor = "Dell"
model = "PowerEdge R760"
[[host_models.r760-bmc.components.bmc.known_firmware]]
version = "7.20.10.00"
default = true
filename = "dell-r760/idrac-7.20.10.00.bin"

[host_models.gb200]
vendor = "NVIDIA"
model = "GB200 NVL"
ordering = ["bmc"]
explicit_start_needed = true
[host_models.gb200.components.bmc]
current_version_reported_as = "^HGX_FW_BMC_0$"
[[host_models.gb200.components.bmc.known_firmware]]
version = "25.01"
default = true
filename = "gb200/bmc-25.01.fwpkg"
"#;

/// The images of `RUNTIME_DOC`'s defaults, then of `SITE`'s, under the firmware directory:
/// (path, content).
const IMAGES: &[(&str, &str)] = &[
    ("dell-r760/idrac-7.20.10.00.bin", "idrac 7.20.10.00 image"),
    ("gb200/bmc-25.01.fwpkg", "gb200 bmc 25.01 image"),
    ("dell-r760/idrac-7.10.30.00.bin", "idrac 7.10.30.00 image"),
    ("dell-r760/bios-2.3.5.bin", "bios 2.3.5 image"),
];

/// A temporary site: config file, SQLite database and a firmware directory holding [`IMAGES`].
struct Site {
    dir: PathBuf,
    config: PathBuf,
}

impl Site {
    fn new() -> Site {
        Site::with_autoupdate(true)
    }

    fn with_autoupdate(autoupdate: bool) -> Site {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "hostfw-operator-cli-{}-{nanos:x}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let config = dir.join("site.toml");
        std::fs::write(&config, SITE.replace("AUTOUPDATE", &autoupdate.to_string())).expect("site.toml");
        for (image, content) in IMAGES {
            let path = dir.join("firmware").join(image);
            std::fs::create_dir_all(path.parent().unwrap()).expect("firmware dir");
            std::fs::write(path, content).expect("image");
        }
        hostfw_store::SiteKey::generate().expect("key").write_new_file(&dir.join("site.key")).expect("site.key");
        Site { dir, config }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write file");
        path
    }

    async fn run(&self, args: &[&str]) -> (anyhow::Result<()>, String) {
        let mut full = vec!["hostfw", "--config", self.config.to_str().expect("utf-8 path"), "--local"];
        full.extend_from_slice(args);
        let cli = Cli::try_parse_from(full).unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
        output::capture(hostfw_starter::run(cli)).await
    }

    /// Runs a command that must succeed; returns what it printed.
    async fn ok(&self, args: &[&str]) -> String {
        let (res, out) = self.run(args).await;
        if let Err(e) = res {
            panic!("{args:?} failed: {e:#}\noutput:\n{out}");
        }
        out
    }

    /// Runs a command that must fail; returns the error with its causes.
    async fn fails(&self, args: &[&str]) -> String {
        let (res, out) = self.run(args).await;
        match res {
            Ok(()) => panic!("{args:?} succeeded but should fail; output:\n{out}"),
            Err(e) => format!("{e:#}"),
        }
    }

    async fn store(&self) -> Store {
        let key = hostfw_store::SiteKey::from_file(&self.dir.join("site.key")).expect("site key");
        Store::connect(&format!("sqlite://{}", self.dir.join("site.db").display()))
            .await
            .expect("open store")
            .with_site_key(Some(key))
    }

    async fn add_machines(&self, ids: &[&str]) {
        for (i, id) in ids.iter().enumerate() {
            let bmc = format!("10.0.0.{}:443", i + 1);
            self.ok(&["machine", "add", "--id", id, "--bmc", &bmc]).await;
        }
    }

    async fn audit_count(&self) -> usize {
        let store = self.store().await;
        let n = store.audit_list(10_000).await.unwrap().len();
        store.close().await;
        n
    }

    async fn window(&self, id: &str) -> (Option<i64>, Option<i64>) {
        let store = self.store().await;
        let m = store.machine_get(id).await.unwrap().expect("machine");
        store.close().await;
        (m.window.map(|w| w.start_ms), m.window.map(|w| w.end_ms))
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn parse_err(args: &[&str]) -> ErrorKind {
    let mut full = vec!["hostfw"];
    full.extend_from_slice(args);
    Cli::try_parse_from(full).expect_err("should be refused by clap").kind()
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

/// `t` in the `+0000` form and as RFC 3339 UTC.
fn utc_forms(t: chrono::DateTime<Utc>) -> (String, String) {
    (t.format("%Y-%m-%dT%H:%M:%S+0000").to_string(), t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

fn whole_second(t: chrono::DateTime<Utc>) -> chrono::DateTime<Utc> {
    Utc.timestamp_opt(t.timestamp(), 0).unwrap()
}

// ---- the API or --local ----

/// Issue 27: a command that reads or changes the site goes through the API; without `-a`, a
/// context or the break-glass `--local`, it is refused naming the ways, and opens nothing (no site
/// database is created). `--local` with `-a` is refused too.
#[test]
fn without_an_api_or_local_a_site_command_is_refused_and_opens_nothing() {
    let site = Site::new();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hostfw"))
            .env("HOSTFW_CLI_CONFIG", site.dir.join("no-cli.toml"))
            .env_remove("HOSTFW_API")
            .env_remove("HOSTFW_CONTEXT")
            .env_remove("HOSTFW_LOCAL")
            .args(["--config", site.config.to_str().unwrap()])
            .args(args)
            .output()
            .expect("hostfw runs")
    };
    for args in [&["machine", "list"][..], &["machine", "add", "--id", "m1", "--bmc", "10.0.0.1"], &["plan"]] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("goes through the hostfw API") && stderr.contains("--local"), "{args:?}: {stderr}");
    }
    assert!(!site.dir.join("site.db").exists(), "the site database was not opened");
    let both = run(&["-a", "http://127.0.0.1:1", "--local", "plan"]);
    assert!(String::from_utf8_lossy(&both.stderr).contains("give one of them"), "{both:?}");
    let local = run(&["--local", "machine", "list"]);
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
}

// ---- machine auto-update ----

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
    let mut config = std::fs::read_to_string(&site.config).unwrap();
    config = config.replace("[firmware_global]\n", "[firmware_global]\nhost_disable_autoupdate = [\"m1\"]\n");
    std::fs::write(&site.config, config).unwrap();
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

// ---- managed-host start-updates ----

#[tokio::test]
async fn start_updates_sets_one_window_on_every_machine() {
    let site = Site::new();
    site.add_machines(&["m1", "m2", "m3"]).await;
    let start = whole_second(Utc::now() + Duration::hours(1));
    let end = start + Duration::hours(4);
    let (start_arg, start_utc) = utc_forms(start);
    let (end_arg, end_utc) = utc_forms(end);
    let out = site
        .ok(&["managed-host", "start-updates", "--machines", "m1", "m2", "--start", &start_arg, "--end", &end_arg])
        .await;
    for id in ["m1", "m2"] {
        assert!(out.lines().any(|l| l.starts_with(id) && l.contains(&start_utc) && l.contains(&end_utc)), "{out}");
        assert_eq!(site.window(id).await, (Some(start.timestamp_millis()), Some(end.timestamp_millis())));
    }
    assert!(out.contains("no update request was created"), "{out}");
    assert_eq!(site.window("m3").await, (None, None));
    let store = site.store().await;
    assert!(store.request_list().await.unwrap().is_empty(), "start-updates must not create requests");
    store.close().await;
}

#[tokio::test]
async fn start_updates_defaults_to_now_for_a_day() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let before = Utc::now().timestamp_millis();
    site.ok(&["managed-host", "start-updates", "--machines", "m1"]).await;
    let after = Utc::now().timestamp_millis();
    let (Some(start), Some(end)) = site.window("m1").await else { panic!("no window") };
    assert!(before <= start && start <= after, "{before} <= {start} <= {after}");
    assert_eq!(end - start, 24 * 3_600_000);
}

#[tokio::test]
async fn start_updates_accepts_local_times() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    // Noon two days ahead: never inside a daylight-saving change.
    let day = (Local::now() + Duration::days(2)).date_naive();
    let naive = day.and_hms_opt(12, 0, 0).unwrap();
    let text = naive.format("%Y-%m-%dT%H:%M:%S").to_string();
    site.ok(&["managed-host", "start-updates", "--machines", "m1", "--start", &text]).await;
    let expected = Local.from_local_datetime(&naive).single().unwrap().timestamp_millis();
    assert_eq!(site.window("m1").await, (Some(expected), Some(expected + 24 * 3_600_000)));
}

#[tokio::test]
async fn start_updates_names_every_unknown_machine_and_writes_nothing() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    let before = site.audit_count().await;
    let err = site.fails(&["managed-host", "start-updates", "--machines", "m1", "ghost-a", "m2", "ghost-b"]).await;
    assert!(err.contains("ghost-a, ghost-b are not registered"), "{err}");
    assert!(err.contains("hostfw machine list"), "{err}");
    assert_eq!(site.window("m1").await, (None, None));
    assert_eq!(site.window("m2").await, (None, None));
    assert_eq!(site.audit_count().await, before);
    let err = site.fails(&["managed-host", "start-updates", "--machines", "ghost", "--cancel"]).await;
    assert!(err.contains("machine ghost is not registered"), "{err}");
}

#[tokio::test]
async fn start_updates_refuses_bad_times_and_writes_nothing() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let before = site.audit_count().await;
    let err = site.fails(&["managed-host", "start-updates", "--machines", "m1", "--start", "2030-01-01 10:00"]).await;
    assert!(err.contains("--start \"2030-01-01 10:00\""), "{err}");
    assert!(err.contains("YYYY-MM-DDTHH:MM:SS+0000"), "{err}");

    let err = site
        .fails(&[
            "managed-host",
            "start-updates",
            "--machines",
            "m1",
            "--start",
            "2030-01-02T00:00:00+0000",
            "--end",
            "2030-01-01T00:00:00+0000",
        ])
        .await;
    assert!(err.contains("must start before it ends"), "{err}");

    let err = site
        .fails(&[
            "managed-host",
            "start-updates",
            "--machines",
            "m1",
            "--start",
            "2020-01-01T00:00:00+0000",
            "--end",
            "2020-01-02T00:00:00+0000",
        ])
        .await;
    assert!(err.contains("in the past"), "{err}");
    assert!(err.contains("2020-01-02T00:00:00Z"), "{err}");

    assert_eq!(site.window("m1").await, (None, None));
    assert_eq!(site.audit_count().await, before);
}

#[tokio::test]
async fn start_updates_cancel_clears_the_window() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    site.ok(&["managed-host", "start-updates", "--machines", "m1", "m2"]).await;
    assert!(site.window("m1").await.0.is_some());
    let out = site.ok(&["managed-host", "start-updates", "--machines", "m1", "--cancel"]).await;
    assert!(out.contains("cancelled"), "{out}");
    assert_eq!(site.window("m1").await, (None, None));
    assert!(site.window("m2").await.0.is_some());
}

#[test]
fn start_updates_cancel_conflicts_with_times_and_machines_are_required() {
    let cancel_start =
        ["managed-host", "start-updates", "--machines", "m1", "--cancel", "--start", "2030-01-01T00:00:00"];
    assert_eq!(parse_err(&cancel_start), ErrorKind::ArgumentConflict);
    let cancel_end = ["managed-host", "start-updates", "--machines", "m1", "--end", "2030-01-01T00:00:00", "--cancel"];
    assert_eq!(parse_err(&cancel_end), ErrorKind::ArgumentConflict);
    assert_eq!(parse_err(&["managed-host", "start-updates"]), ErrorKind::MissingRequiredArgument);
}

#[tokio::test]
async fn start_updates_json_output_parses() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    let end = whole_second(Utc::now() + Duration::hours(2));
    let (end_arg, end_utc) = utc_forms(end);
    let out = site
        .ok(&["--format", "json", "managed-host", "start-updates", "--machines", "m2", "m1", "--end", &end_arg])
        .await;
    let v = json(&out);
    let rows = v.as_array().expect("an array");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["machine_id"], "m2");
    assert_eq!(rows[1]["window_end"], end_utc.as_str());
    assert!(rows[1].get("window_end_ms").is_none(), "times are RFC 3339 only: {out}");
}

// ---- audit ----

#[tokio::test]
async fn audit_shows_each_mutation_with_actor_and_target() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    site.ok(&["machine", "auto-update", "--machine", "m1", "--disable"]).await;
    site.ok(&["managed-host", "start-updates", "--machines", "m1", "m2"]).await;
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;

    let out = site.ok(&["--format", "json", "audit"]).await;
    let entries = json(&out);
    let entries = entries.as_array().expect("an array");
    let seen: Vec<(String, String)> = entries
        .iter()
        .map(|e| (e["action"].as_str().unwrap().to_string(), e["target"].as_str().unwrap().to_string()))
        .collect();
    let expected = [
        ("firmware-config set", "firmware-config"),
        ("managed-host start-updates", "m2"),
        ("managed-host start-updates", "m1"),
        ("machine auto-update", "m1"),
        ("machine add", "m2"),
        ("machine add", "m1"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(a, t)| (a.to_string(), t.to_string())).collect();
    assert_eq!(seen, expected);
    assert!(entries.iter().all(|e| e["actor"].as_str().unwrap().starts_with("cli:")), "{out}");
    assert!(entries.iter().all(|e| hostfw_model::parse_rfc3339(e["at"].as_str().unwrap()).unwrap() > 0), "{out}");
    assert_eq!(entries[3]["detail"], "disable");

    let out = site.ok(&["audit", "--target", "m1"]).await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("SEQ") && lines[0].contains("WHO") && lines[0].contains("TARGET"), "{out}");
    assert_eq!(lines.len(), 4, "header + 3 entries for m1:\n{out}");
    assert!(lines[1].contains("managed-host start-updates") && lines[3].contains("machine add"), "{out}");

    let out = site.ok(&["--format", "json", "audit", "--limit", "2"]).await;
    assert_eq!(json(&out).as_array().unwrap().len(), 2);
    assert_eq!(parse_err(&["audit", "--limit", "0"]), ErrorKind::ValueValidation);
}

// ---- firmware-config ----

#[tokio::test]
async fn firmware_config_set_show_history() {
    let site = Site::new();
    let out = site.ok(&["firmware-config", "show"]).await;
    assert!(out.contains("no firmware config stored"), "{out}");
    assert!(out.lines().any(|l| l.contains("bmc") && l.contains("7.10.30.00") && l.contains("static config")), "{out}");

    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    assert!(out.contains("firmware config version 1 stored (2 host model tables"), "{out}");

    let out = site.ok(&["firmware-config", "show"]).await;
    assert!(out.starts_with("firmware config version 1 (stored "), "{out}");
    assert!(out.contains(" by cli:"), "{out}");
    let line = |needle: &str| {
        out.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}:\n{out}")).to_string()
    };
    assert!(line("7.20.10.00").contains("firmware-config v1"), "{out}");
    assert!(line("2.3.5").contains("static config"), "{out}");
    assert!(line("25.01").contains("NVIDIA") && line("25.01").contains("true"), "{out}");
    assert!(!out.contains("7.10.30.00"), "the runtime default replaces the static one:\n{out}");

    // `firmware show` uses the same effective catalog.
    let out = site.ok(&["firmware", "show"]).await;
    assert!(out.contains("7.20.10.00") && out.contains("GB200 NVL"), "{out}");

    // An empty document is a valid new version: back to the static catalog (a downgrade of the
    // R760 BMC default, so it needs --allow-downgrade).
    let empty = site.write("empty.toml", "# no runtime models\n");
    let out =
        site.ok(&["firmware-config", "set", "--yes", "--allow-downgrade", "--file", empty.to_str().unwrap()]).await;
    assert!(out.contains("version 2 stored (0 host model tables"), "{out}");
    let out = site.ok(&["firmware", "show"]).await;
    assert!(out.contains("7.10.30.00") && !out.contains("GB200"), "{out}");

    let out = site.ok(&["firmware-config", "history"]).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("VERSION"), "{out}");
    assert!(lines[1].starts_with('2') && lines[2].starts_with('1'), "{out}");
    let out = site.ok(&["firmware-config", "history", "--limit", "1"]).await;
    assert_eq!(out.lines().count(), 2, "{out}");
}

#[tokio::test]
async fn firmware_config_invalid_document_names_the_key_and_stores_nothing() {
    let site = Site::new();
    let good = site.write("good.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", good.to_str().unwrap()]).await;
    let audit_before = site.audit_count().await;

    let unknown_key = site.write(
        "unknown-key.toml",
        "[host_models.x]\nvendor = \"V\"\nmodel = \"M\"\n[host_models.x.components.bmc]\ncurrent_version_reported_as = \"^B$\"\nbogus = 1\n",
    );
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", unknown_key.to_str().unwrap()]).await;
    assert!(err.contains("unknown-key.toml") && err.contains("host_models.x.components.bmc"), "{err}");
    assert!(err.contains("bogus") && err.contains("nothing was stored"), "{err}");

    // Parses, but the merged model is invalid: a second default for the same component.
    let two_defaults = site.write(
        "two-defaults.toml",
        "[host_models.d]\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n\
         [[host_models.d.components.uefi.known_firmware]]\nversion = \"2.4\"\ndefault = true\n\
         [[host_models.d.components.uefi.known_firmware]]\nversion = \"2.5\"\ndefault = true\n",
    );
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", two_defaults.to_str().unwrap()]).await;
    assert!(err.contains("host_models.d.components.uefi.known_firmware[1].default"), "{err}");

    let bad_component = site.write(
        "bad-component.toml",
        "[host_models.z]\nvendor = \"V\"\nmodel = \"M\"\n[host_models.z.components.toaster]\n",
    );
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", bad_component.to_str().unwrap()]).await;
    assert!(err.contains("host_models.z.components.toaster"), "{err}");

    let missing = site.dir.join("missing.toml");
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", missing.to_str().unwrap()]).await;
    assert!(err.contains("missing.toml"), "{err}");

    let out = site.ok(&["--format", "json", "firmware-config", "history"]).await;
    let versions = json(&out);
    assert_eq!(versions.as_array().unwrap().len(), 1, "{out}");
    assert_eq!(versions[0]["document"], RUNTIME_DOC);
    assert_eq!(site.audit_count().await, audit_before);
}

#[tokio::test]
async fn firmware_config_identical_document_is_unchanged() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let audit_before = site.audit_count().await;
    let copy = site.write("copy.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "set", "--yes", "--file", copy.to_str().unwrap()]).await;
    assert!(out.contains("unchanged") && out.contains("version 1"), "{out}");
    let out = site.ok(&["--format", "json", "firmware-config", "set", "--yes", "--file", copy.to_str().unwrap()]).await;
    let v = json(&out);
    assert_eq!((v["changed"].as_bool(), v["version"].as_i64()), (Some(false), Some(1)));

    let store = site.store().await;
    let history = store.firmware_config_history(10).await.unwrap();
    store.close().await;
    assert_eq!(history.len(), 1);
    assert_eq!(site.audit_count().await, audit_before);
}

#[tokio::test]
async fn firmware_config_json_outputs_parse() {
    let site = Site::new();
    let out = site.ok(&["--format", "json", "firmware-config", "show"]).await;
    let v = json(&out);
    assert!(v["version"].is_null(), "{out}");
    assert_eq!(v["catalog"]["models"].as_array().unwrap().len(), 1);

    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["--format", "json", "firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let set = json(&out);
    assert_eq!((set["changed"].as_bool(), set["version"].as_i64()), (Some(true), Some(1)));
    assert_eq!(set["sha256"].as_str().unwrap().len(), 64);

    let out = site.ok(&["--format", "json", "firmware-config", "show"]).await;
    let v = json(&out);
    assert_eq!(v["version"]["version"], 1);
    assert!(v["version"]["actor"].as_str().unwrap().starts_with("cli:"));
    assert_eq!(v["version"]["sha256"], set["sha256"]);
    assert_eq!(v["catalog"]["models"].as_array().unwrap().len(), 2);
    let defaults = v["defaults"].as_array().unwrap();
    let bmc = defaults.iter().find(|d| d["vendor"] == "Dell" && d["component"] == "bmc").unwrap();
    assert_eq!((bmc["version"].as_str(), bmc["layer"].as_str()), (Some("7.20.10.00"), Some("firmware-config v1")));

    let out = site.ok(&["--format", "json", "firmware-config", "history"]).await;
    assert_eq!(json(&out)[0]["version"], 1);
    assert!(Path::new(&site.config).exists());
}

#[tokio::test]
async fn plan_explains_the_ceiling_and_why_each_host_waits() {
    let site = Site::new();
    site.add_machines(&["m1", "m2"]).await;
    let out = site.ok(&["plan"]).await;
    assert!(out.contains("ceiling: 0"), "{out}");
    assert!(out.contains("unset"), "both limits unset is said: {out}");
    assert!(out.contains("would start: none"), "{out}");
    for id in ["m1", "m2"] {
        assert!(out.lines().any(|l| l.starts_with(id)), "{id} has its reason: {out}");
        // Issue 26 item 12: the remedy names the host, ready to run.
        assert!(out.contains(&format!("site-explorer explore --machine {id}`")), "{out}");
    }
    assert!(!out.contains("<machine-id>"), "{out}");
    let plan = json(&site.ok(&["--format", "json", "plan"]).await);
    assert_eq!(plan["ceiling"]["limit"], 0);
    assert_eq!(plan["fleet"]["total"], 2);
    let reasons: Vec<String> = plan["skipped"].as_array().unwrap().iter().map(|s| s["reason"].to_string()).collect();
    assert!(reasons.iter().all(|r| r.contains("NotExplored")), "{reasons:?}");
    assert_eq!(site.audit_count().await, 2, "plan writes nothing (only the two machine adds)");
}

const IDRAC: &str = "Installed-25227__iDRAC.Embedded.1-1";
const BIOS: &str = "Installed-159-2.1.0__BIOS.Setup.1-1";

/// An R760 report with these (Version as sent, Status.State) for its iDRAC and BIOS members,
/// read the way the crawl reads them.
fn r760_report(idrac: (Option<&str>, &str), bios: (Option<&str>, &str)) -> hostfw_model::InventoryReport {
    let member = |id: &str, (version, state): (Option<&str>, &str)| {
        hostfw_model::InventoryMember::reported(
            id,
            format!("/redfish/v1/UpdateService/FirmwareInventory/{id}"),
            version,
            Some(state),
        )
    };
    hostfw_model::InventoryReport {
        vendor: "Dell".into(),
        model: "PowerEdge R760".into(),
        serial: None,
        power_state: Some("On".into()),
        members: vec![member(IDRAC, idrac), member(BIOS, bios)],
    }
}

/// m1: iDRAC `Version: null`, BIOS padded but equal (only unknown: never started); m2: iDRAC
/// drifted, BIOS "Not Present"; m3: compliant with an NBSP after the BIOS version.
async fn site_with_unreported_versions() -> Site {
    let site = Site::new();
    site.add_machines(&["m1", "m2", "m3"]).await;
    let store = site.store().await;
    let reports = [
        ("10.0.0.1:443", "m1", r760_report((None, "Enabled"), (Some("2.3.5 "), "Enabled"))),
        ("10.0.0.2:443", "m2", r760_report((Some("7.00.00.00"), "Enabled"), (Some("Not Present"), "Enabled"))),
        ("10.0.0.3:443", "m3", r760_report((Some("7.10.30.00"), "Enabled"), (Some("2.3.5\u{a0}"), "Enabled"))),
    ];
    for (bmc, id, report) in reports {
        store.report_put(&bmc.parse().unwrap(), Some(id), &Ok(report)).await.expect("report stored");
    }
    store.close().await;
    site
}

#[tokio::test]
async fn plan_says_version_not_reported_for_hosts_and_components() {
    let site = site_with_unreported_versions().await;
    let out = site.ok(&["plan"]).await;
    assert!(out.contains("compliant: 1"), "only m3 is compliant: {out}");
    let m1 = out.lines().find(|l| l.starts_with("m1")).unwrap_or_else(|| panic!("m1 has a reason: {out}"));
    assert!(
        m1.contains(&format!("version not reported: bmc ({IDRAC}: no Version)")),
        "m1 waits because a version is not reported, not for the ceiling: {m1}"
    );
    let m2 = out.lines().find(|l| l.starts_with("m2")).unwrap_or_else(|| panic!("m2 has a reason: {out}"));
    assert!(m2.contains("ceiling is 0"), "m2 drifts (bmc) and waits for a slot: {m2}");
    assert!(out.contains("version not reported (left out of drift"), "{out}");
    let section: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("version not reported (")).collect();
    assert!(section.iter().any(|l| l.starts_with("m1") && l.contains("bmc") && l.contains("no Version")), "{out}");
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("m2") && l.contains("uefi") && l.contains("\"Not Present\": placeholder Version")),
        "{out}"
    );
    assert!(!section.iter().any(|l| l.starts_with("m3")), "{out}");

    let plan = json(&site.ok(&["--format", "json", "plan"]).await);
    assert_eq!(plan["compliant"], 1);
    let skipped = plan["skipped"].as_array().unwrap();
    let m1 = skipped.iter().find(|s| s["machine_id"] == "m1").expect("m1 skipped");
    let typed = &m1["reason"]["VersionNotReported"]["not_reported"][0];
    assert_eq!(typed["component"], "bmc");
    assert_eq!(typed["members"][0]["id"], IDRAC);
    assert_eq!(typed["members"][0]["reason"]["reason"], "missing");
    let reasons = plan["reasons"].as_array().unwrap();
    let m1_says = |r: &serde_json::Value| r[0] == "m1" && r[1].as_str().unwrap().starts_with("version not reported");
    assert!(reasons.iter().any(m1_says), "{reasons:?}");
    let hosts: Vec<&str> =
        plan["version_not_reported"].as_array().unwrap().iter().map(|h| h["machine_id"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["m1", "m2"]);
}

/// `compliance` over `site_with_unreported_versions` plus m4 (iDRAC drifted, its request's budget
/// spent) and m5 (never explored); the ceiling is 0, so m2 is held only by it: pending.
#[tokio::test]
async fn compliance_counts_versions_and_statuses_per_model_and_component() {
    let site = site_with_unreported_versions().await;
    for (id, bmc) in [("m4", "10.0.0.4:443"), ("m5", "10.0.0.5:443")] {
        site.ok(&["machine", "add", "--id", id, "--bmc", bmc]).await;
    }
    let store = site.store().await;
    let report = r760_report((Some("7.00.00.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
    store.report_put(&"10.0.0.4:443".parse().unwrap(), Some("m4"), &Ok(report)).await.unwrap();
    let new = hostfw_store::NewRequest {
        machine_id: "m4".into(),
        initiator: "AdminCli".into(),
        update_message: None,
        workflow_id: None,
    };
    store.request_create(&new).await.unwrap();
    store.request_mark_started("m4", 1_000).await.unwrap();
    store.request_record_retry("m4", 5, true).await.unwrap();
    store.close().await;
    let audits = site.audit_count().await;

    let view = json(&site.ok(&["--format", "json", "compliance"]).await);
    assert_eq!((view["not_explored"].as_u64(), view["no_catalog_entry"].as_u64()), (Some(1), Some(0)), "{view}");
    let rows = view["components"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{view}");
    let bmc = &rows[0];
    assert_eq!((bmc["vendor"].as_str(), bmc["model"].as_str()), (Some("Dell"), Some("PowerEdge R760")));
    assert_eq!((bmc["component"].as_str(), bmc["desired"].as_str()), (Some("bmc"), Some("7.10.30.00")));
    assert_eq!(
        bmc["versions"],
        serde_json::json!([
            { "version": "7.00.00.00", "hosts": 2 },
            { "version": "7.10.30.00", "hosts": 1 },
            { "version": null, "hosts": 1 },
        ])
    );
    let counts = |row: &serde_json::Value| -> Vec<u64> {
        ["hosts", "compliant", "drifted", "pending", "active", "failed", "exhausted", "not_reported", "unmatched"]
            .iter()
            .map(|k| row[*k].as_u64().unwrap_or_else(|| panic!("{k} in {row}")))
            .collect()
    };
    assert_eq!(counts(bmc), [4, 1, 2, 1, 0, 0, 1, 1, 0], "{bmc}");
    let uefi = &rows[1];
    assert_eq!((uefi["component"].as_str(), uefi["desired"].as_str()), (Some("uefi"), Some("2.3.5")));
    assert_eq!(
        uefi["versions"],
        serde_json::json!([{ "version": "2.3.5", "hosts": 3 }, { "version": null, "hosts": 1 }])
    );
    assert_eq!(counts(uefi), [4, 3, 0, 0, 0, 0, 0, 1, 0], "{uefi}");

    let table = site.ok(&["compliance"]).await;
    let cells = |line: &str| -> Vec<String> {
        line.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
    };
    let mut lines = table.lines();
    assert_eq!(
        cells(lines.next().unwrap()),
        [
            "MODEL",
            "COMPONENT",
            "DESIRED",
            "RUNNING (HOSTS)",
            "HOSTS",
            "COMPLIANT",
            "DRIFTED",
            "PENDING",
            "ACTIVE",
            "FAILED",
            "EXHAUSTED",
            "PAUSED",
            "NOT REPORTED",
            "UNMATCHED"
        ],
        "{table}"
    );
    assert_eq!(
        cells(lines.next().unwrap()),
        [
            "Dell PowerEdge R760",
            "bmc",
            "7.10.30.00",
            "7.00.00.00 (2), 7.10.30.00 (1), (not reported) (1)",
            "4",
            "1",
            "2",
            "1",
            "0",
            "0",
            "1",
            "0",
            "1",
            "0"
        ],
        "{table}"
    );
    assert!(table.contains("not explored (no inventory stored): 1 hosts"), "{table}");
    assert_eq!(site.audit_count().await, audits, "compliance writes nothing");
}

#[tokio::test]
async fn get_report_quotes_versions_and_says_which_are_not_reported() {
    let site = site_with_unreported_versions().await;

    let m1 = site.ok(&["site-explorer", "get-report", "managed-host", "10.0.0.1:443"]).await;
    assert!(m1.contains(r#"bmc: (none) (no Version) / "7.10.30.00"  [version not reported]"#), "{m1}");
    assert!(m1.contains(r#"uefi: "2.3.5 " / "2.3.5"  [ok]"#), "padding shows, and is no difference: {m1}");
    let row = m1.lines().find(|l| l.contains(IDRAC)).expect("inventory row");
    assert!(row.contains("(none)") && row.contains("version not reported: no Version"), "{row}");

    let m2 = site.ok(&["site-explorer", "get-report", "managed-host", "10.0.0.2:443"]).await;
    assert!(m2.contains(r#"bmc: "7.00.00.00" / "7.10.30.00"  [DRIFT]"#), "{m2}");
    assert!(m2.contains(r#"uefi: "Not Present" (placeholder Version) / "2.3.5"  [version not reported]"#), "{m2}");

    let m3 = site.ok(&["site-explorer", "get-report", "managed-host", "10.0.0.3:443"]).await;
    assert!(m3.contains(r#"uefi: "2.3.5\u{a0}" / "2.3.5"  [ok]"#), "the NBSP shows: {m3}");

    let j = json(&site.ok(&["--format", "json", "site-explorer", "get-report", "managed-host", "10.0.0.1:443"]).await);
    let components = j["components"].as_array().expect("components");
    let bmc = components.iter().find(|c| c["component"] == "bmc").unwrap();
    assert_eq!(bmc["status"], "version not reported");
    assert_eq!(bmc["desired"], "7.10.30.00");
    assert_eq!(bmc["members"][0]["reported"], "");
    assert_eq!(bmc["members"][0]["version_unknown"]["reason"], "missing");
    let uefi = components.iter().find(|c| c["component"] == "uefi").unwrap();
    assert_eq!(uefi["status"], "compliant");
    assert_eq!(uefi["members"][0]["reported"], "2.3.5 ", "the raw value");
    assert!(uefi["members"][0].get("version_unknown").is_none());
    assert_eq!(j["report"]["members"][0]["version_unknown"]["reason"], "missing");
    assert_eq!(j["report"]["members"][1]["version_raw"], "2.3.5 ");
}

#[tokio::test]
async fn re_explore_of_an_unknown_bmc_is_refused() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let err = site.fails(&["site-explorer", "re-explore", "10.9.9.9:443"]).await;
    assert!(err.contains("10.9.9.9:443"), "{err}");
    assert!(err.contains("machine list"), "{err}");
}

#[tokio::test]
async fn the_shipped_site_config_and_catalog_load() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/site.toml");
    let mut site = hostfw_model::SiteConfig::load(&config).unwrap_or_else(|e| panic!("{e}"));
    let catalog = hostfw_model::Catalog::load(&site).unwrap_or_else(|e| panic!("{e}"));
    // The captured hardware (../shared/redfish/vendor-mockups), as those BMCs name themselves.
    for (vendor, model) in [
        ("Dell Inc.", "PowerEdge R750"),
        ("Supermicro", "SYS-821GE-TNHR"),
        ("NVIDIA", "DGXH100"),
        ("NVIDIA", "GB200 NVL"),
    ] {
        assert!(catalog.find(vendor, model).is_some(), "{vendor} {model} in {:?}", catalog.models());
    }
    let smc = catalog.find("Supermicro", "SYS-821GE-TNHR").unwrap();
    assert!(smc.explicit_start_needed, "the demo's explicit-start model");
    for (vendor, model) in [("Dell Inc.", "PowerEdge R750"), ("Supermicro", "SYS-821GE-TNHR"), ("NVIDIA", "DGXH100")] {
        assert!(catalog.find(vendor, model).unwrap().lockdown.is_some(), "{model}: lockdown setting");
    }
    assert!(catalog.find("NVIDIA", "GB200 NVL").unwrap().ac_cycle.is_some(), "GB200: ac_cycle setting");
    assert_eq!(site.machine_updater.max_concurrent_machine_updates_absolute, Some(8));

    // `make demo` without the captured trees: the generic fleet's catalog (firmware-generic/).
    site.firmware_global.firmware_directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/firmware-generic");
    let generic = hostfw_model::Catalog::load(&site).unwrap_or_else(|e| panic!("{e}"));
    for (vendor, model) in
        [("Dell", "PowerEdge R760"), ("Supermicro", "SYS-821GE-TNHR"), ("Nvidia", "DGX H100"), ("Nvidia", "GB200 NVL")]
    {
        assert!(generic.find(vendor, model).is_some(), "{vendor} {model} in {:?}", generic.models());
    }
    assert!(generic.find("Nvidia", "GB200 NVL").unwrap().ac_cycle.is_none(), "the generic GB200 needs no power drain");
}

// ---- machine add / import: BMC addresses ----

/// The stored BMC address of every machine, by id.
async fn stored_bmcs(site: &Site) -> Vec<(String, String)> {
    let store = site.store().await;
    let rows = store.machine_list().await.unwrap().into_iter().map(|m| (m.id, m.bmc_address.to_string())).collect();
    store.close().await;
    rows
}

#[tokio::test]
async fn machine_add_stores_the_canonical_form_and_a_bare_address_is_https() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "readme", "--bmc", "10.0.4.17:443"]).await;
    site.ok(&["machine", "add", "--id", "bare", "--bmc", "10.0.4.18"]).await;
    site.ok(&["machine", "add", "--id", "plain", "--bmc", "HTTP://10.0.4.19:8000/"]).await;
    site.ok(&["machine", "add", "--id", "named", "--bmc", "https://BMC-20.Example"]).await;
    assert_eq!(
        stored_bmcs(&site).await,
        [
            ("bare".to_string(), "https://10.0.4.18:443".to_string()),
            ("named".to_string(), "https://bmc-20.example:443".to_string()),
            ("plain".to_string(), "http://10.0.4.19:8000".to_string()),
            ("readme".to_string(), "https://10.0.4.17:443".to_string()),
        ]
    );
    let list = site.ok(&["machine", "list"]).await;
    assert!(list.contains("https://10.0.4.17:443") && list.contains("http://10.0.4.19:8000"), "{list}");
}

#[tokio::test]
async fn machine_add_refuses_bad_addresses_naming_them_and_writes_nothing() {
    let site = Site::new();
    for (bmc, why) in [
        ("ftp://10.0.0.1", "unknown scheme \"ftp\""),
        ("10.0.0.1:0", "port 0"),
        ("10.0.0.1:http", "not a number"),
        ("https://", "no host"),
        ("https://10.0.0.1/redfish?x=1", "query"),
        ("https://10.0.0.1#top", "fragment"),
    ] {
        let err = site.fails(&["machine", "add", "--id", "m1", "--bmc", bmc]).await;
        assert!(err.contains(&format!("{bmc:?}")) && err.contains(why), "{bmc}: {err}");
    }
    let err = site.fails(&["machine", "add", "--id", "m1", "--bmc", "https://root:hunter2@10.0.0.1"]).await;
    assert!(err.contains("user-info") && !err.contains("hunter2"), "{err}");
    assert!(stored_bmcs(&site).await.is_empty());
    assert_eq!(site.audit_count().await, 0);
}

/// Finding 11: one BMC written four ways was four machines. Now the first registration wins and
/// every other spelling (or the other scheme on the same port) is refused, naming the address as
/// given and the machine that has it; nothing is written.
#[tokio::test]
async fn machine_add_refuses_a_bmc_another_machine_has_in_any_spelling() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "first", "--bmc", "http://10.0.4.17:8000"]).await;
    for (n, bmc) in [
        "10.0.4.17:8000",
        "http://10.0.4.17:8000/",
        "HTTP://10.0.4.17:8000",
        "HTTP://10.0.4.17:8000/",
        "https://10.0.4.17:8000",
    ]
    .iter()
    .enumerate()
    {
        let id = format!("dup-{n}");
        let err = site.fails(&["machine", "add", "--id", &id, "--bmc", bmc]).await;
        assert!(err.contains(&format!("{bmc:?}")), "names the address as given: {err}");
        assert!(err.contains("registered to machine first") && err.contains("http://10.0.4.17:8000"), "{err}");
    }
    assert_eq!(stored_bmcs(&site).await, [("first".to_string(), "http://10.0.4.17:8000".to_string())]);
    assert_eq!(site.audit_count().await, 1, "only the first add is audited");

    // Re-adding the same machine with its own address (any spelling) stays a refresh.
    site.ok(&[
        "machine",
        "add",
        "--id",
        "first",
        "--bmc",
        "HTTP://10.0.4.17:8000/",
        "--state",
        "Assigned",
        "--instance",
        "i-1",
    ])
    .await;
    let store = site.store().await;
    let first = store.machine_get("first").await.unwrap().unwrap();
    assert_eq!(
        (first.bmc_address.to_string(), first.state.as_str()),
        ("http://10.0.4.17:8000".to_string(), "Assigned")
    );
    store.close().await;
    // A machine may not move onto another machine's BMC either.
    site.ok(&["machine", "add", "--id", "second", "--bmc", "10.0.4.18"]).await;
    let err = site.fails(&["machine", "add", "--id", "second", "--bmc", "http://10.0.4.17:8000"]).await;
    assert!(err.contains("registered to machine first"), "{err}");
    assert_eq!(stored_bmcs(&site).await[1], ("second".to_string(), "https://10.0.4.18:443".to_string()));
}

/// A fleet file in bmc-sim's format; `hosts` are `(id, listen address)`.
fn fleet_file(tls: bool, hosts: &[(&str, &str)]) -> String {
    let mut text = format!("tls = {tls}\n");
    for (id, addr) in hosts {
        text.push_str(&format!(
            "[[host]]\nid = \"{id}\"\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\nbmc_address = \"{addr}\"\n\
             password = \"pw-{id}\"\nfirmware = [ {{ id = \"BMC\", version = \"1.0\" }} ]\n"
        ));
    }
    text
}

#[tokio::test]
async fn machine_import_writes_the_scheme_and_is_all_or_nothing() {
    let site = Site::new();
    let plain = site.write("plain.toml", &fleet_file(false, &[("a", "127.0.0.1:9001"), ("b", "127.0.0.1:9002")]));
    site.ok(&["machine", "import", "--fleet", plain.to_str().unwrap()]).await;
    let tls = site.write("tls.toml", &fleet_file(true, &[("t", "127.0.0.2:9443")]));
    site.ok(&["machine", "import", "--fleet", tls.to_str().unwrap()]).await;
    let expected = [
        ("a".to_string(), "http://127.0.0.1:9001".to_string()),
        ("b".to_string(), "http://127.0.0.1:9002".to_string()),
        ("t".to_string(), "https://127.0.0.2:9443".to_string()),
    ];
    assert_eq!(stored_bmcs(&site).await, expected, "tls = false registers plain http, the scheme written out");
    // Importing the same file again is a refresh.
    site.ok(&["machine", "import", "--fleet", plain.to_str().unwrap()]).await;
    assert_eq!(stored_bmcs(&site).await, expected);
    let audits = site.audit_count().await;

    // A host on a BMC another machine has: the whole file is refused, its other hosts included.
    let clash = site.write("clash.toml", &fleet_file(false, &[("c", "127.0.0.1:9003"), ("d", "127.0.0.1:9001")]));
    let err = site.fails(&["machine", "import", "--fleet", clash.to_str().unwrap()]).await;
    assert!(err.contains("clash.toml") && err.contains("host d") && err.contains("registered to machine a"), "{err}");
    assert!(err.contains("nothing was imported"), "{err}");
    // Two hosts of one file on one BMC: refused too (the fleet file itself forbids it).
    let twice = site.write("twice.toml", &fleet_file(false, &[("e", "127.0.0.1:9005"), ("f", "127.0.0.1:9005")]));
    let err = site.fails(&["machine", "import", "--fleet", twice.to_str().unwrap()]).await;
    assert!(err.contains("twice.toml") && err.contains("127.0.0.1:9005"), "{err}");
    // Port 0 (pick a free port) is a listen address, not one a BMC can be reached at.
    let zero = site.write("zero.toml", &fleet_file(false, &[("g", "127.0.0.1:9007"), ("h", "127.0.0.1:0")]));
    let err = site.fails(&["machine", "import", "--fleet", zero.to_str().unwrap()]).await;
    assert!(err.contains("host h") && err.contains("port 0"), "{err}");

    assert_eq!(stored_bmcs(&site).await, expected, "nothing of a refused file is written");
    let store = site.store().await;
    for id in ["c", "e", "g"] {
        assert_eq!(store.credentials_get(id).await.unwrap(), None, "no login of a refused file is stored");
    }
    assert_eq!(store.credentials_get("a").await.unwrap().unwrap().password.expose(), "pw-a");
    store.close().await;
    assert_eq!(site.audit_count().await, audits);

    // A file that does not say: https, as `machine add` means by a bare address.
    let said = fleet_file(false, &[("u", "127.0.0.3:9443")]);
    let unsaid = site.write("unsaid.toml", said.trim_start_matches("tls = false\n"));
    site.ok(&["machine", "import", "--fleet", unsaid.to_str().unwrap()]).await;
    let machines = stored_bmcs(&site).await;
    assert!(machines.contains(&("u".to_string(), "https://127.0.0.3:9443".to_string())), "{machines:?}");
}

/// Lookups by address accept any spelling: the stored (canonical) address is found from a bare
/// host, host:port, or a URL with a trailing slash.
#[tokio::test]
async fn get_report_finds_the_bmc_by_any_spelling_of_its_address() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "m1", "--bmc", "10.0.4.17:443"]).await;
    site.ok(&["machine", "add", "--id", "sim", "--bmc", "http://127.0.0.1:8000"]).await;
    let store = site.store().await;
    for m in store.machine_list().await.unwrap() {
        let report = hostfw_model::InventoryReport {
            vendor: "Dell".into(),
            model: "PowerEdge R760".into(),
            serial: None,
            power_state: None,
            members: vec![],
        };
        store.report_put(&m.bmc_address, Some(&m.id), &Ok(report)).await.unwrap();
    }
    store.close().await;
    for form in ["10.0.4.17", "10.0.4.17:443", "https://10.0.4.17", "HTTPS://10.0.4.17:443/"] {
        let out = site.ok(&["site-explorer", "get-report", "managed-host", form]).await;
        assert!(out.contains("BMC:         https://10.0.4.17:443") && out.contains("Machine:     m1"), "{form}: {out}");
    }
    for form in ["127.0.0.1:8000", "127.0.0.1", "http://127.0.0.1:8000/"] {
        let out = site.ok(&["site-explorer", "get-report", "managed-host", form]).await;
        assert!(out.contains("Machine:     sim"), "{form}: {out}");
    }
    let err = site.fails(&["site-explorer", "get-report", "managed-host", "https://127.0.0.1:8000"]).await;
    assert!(err.contains("no exploration report"), "a written scheme is taken at its word: {err}");
    let err = site.fails(&["site-explorer", "get-report", "managed-host", "ftp://10.0.4.17"]).await;
    assert!(err.contains("\"ftp://10.0.4.17\"") && err.contains("unknown scheme"), "{err}");
    let err = site.fails(&["site-explorer", "re-explore", "ftp://10.0.4.17"]).await;
    assert!(err.contains("unknown scheme"), "{err}");
}

#[tokio::test]
async fn site_key_generate_and_rotate_key_re_encrypt_every_password() {
    let site = Site::new();
    site.ok(&["machine", "add", "--id", "m1", "--bmc", "10.0.0.1", "--bmc-username", "root", "--bmc-password", "pw1"])
        .await;
    // A row written before encryption existed.
    use sqlx::Connection as _;
    let mut conn = sqlx::AnyConnection::connect(&format!("sqlite://{}", site.dir.join("site.db").display()))
        .await
        .expect("raw connection");
    sqlx::query(
        "INSERT INTO credentials (machine_id, username, password, updated_at_ms) VALUES ('old', 'u', 'legacy-pw', 0)",
    )
    .execute(&mut conn)
    .await
    .expect("legacy row");

    let new_key = site.dir.join("new.key");
    let out = site.ok(&["site-key", "generate", "--out", new_key.to_str().unwrap()]).await;
    assert!(out.contains("new.key") && out.contains("mode 0600"), "{out}");
    let err = site.fails(&["site-key", "generate", "--out", new_key.to_str().unwrap()]).await;
    assert!(err.contains("refusing to overwrite") && err.contains("new.key"), "{err}");

    let out = site.ok(&["machine", "rotate-key", "--new-key-file", new_key.to_str().unwrap()]).await;
    assert!(out.contains("re-encrypted 2 BMC passwords (1 were plaintext)"), "{out}");
    let rows: Vec<(String,)> = sqlx::query_as("SELECT password FROM credentials").fetch_all(&mut conn).await.unwrap();
    let id = hostfw_store::SiteKey::from_file(&new_key).unwrap().id().to_string();
    assert!(rows.iter().all(|(p,)| p.starts_with(&format!("hostfw-enc:v1:{id}:"))), "{rows:?}");

    // The configured (old) key no longer opens them; the new one does.
    let err = site.store().await.credentials_get("m1").await.expect_err("old key").to_string();
    assert!(err.contains(&id), "{err}");
    std::fs::rename(&new_key, site.dir.join("site.key")).unwrap();
    let store = site.store().await;
    assert_eq!(store.credentials_get("old").await.unwrap().unwrap().password.expose(), "legacy-pw");
    assert_eq!(store.audit_list(1).await.unwrap()[0].action, "credentials rekey");
}

#[tokio::test]
async fn a_site_without_a_key_refuses_to_store_a_password() {
    let site = Site::new();
    std::fs::remove_file(site.dir.join("site.key")).unwrap();
    let config = std::fs::read_to_string(&site.config).unwrap().replace("secret_key_file = \"site.key\"\n", "");
    std::fs::write(&site.config, config).unwrap();
    let err = site
        .fails(&["machine", "add", "--id", "m1", "--bmc", "10.0.0.1", "--bmc-username", "root", "--bmc-password", "pw"])
        .await;
    assert!(err.contains("hostfw site-key generate --out FILE") && err.contains("\"m1\""), "{err}");
}
