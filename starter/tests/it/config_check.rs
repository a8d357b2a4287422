//! `hostfw config check` on the offline site: every check but Temporal passes (nothing listens
//! at the configured address: FAIL, exit status 1), a missing artifact FAILs naming it, a firmware
//! directory adding no model WARNs naming what it ignored, a missing SQLite file WARNs and is not
//! created, a config that does not load FAILs with its file and key. And the site database is the
//! config directory's from any current directory.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{json, Site};

/// Nothing listens on port 1: connecting is refused at once.
/// Temporal on port 1, where nothing listens: connecting is refused at once.
fn closed_temporal(site: &Site) {
    site.reconfigure(|toml| toml.temporal_port(1));
}

/// `(status, detail)` of every check called `name`.
fn statuses(report: &Value, name: &str) -> Vec<(String, String)> {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["name"] == name)
        .map(|c| (c["status"].as_str().unwrap().to_string(), c["detail"].as_str().unwrap().to_string()))
        .collect()
}

async fn check_json(site: &Site) -> (Value, String) {
    let (res, out) = site.run(&["--format", "json", "config", "check"]).await;
    let err = res.err().map(|e| format!("{e:#}")).unwrap_or_default();
    (json(&out), err)
}

#[tokio::test]
async fn a_good_config_passes_every_check_but_an_unreachable_temporal() {
    let site = Site::new();
    closed_temporal(&site);
    site.add_machines(&["m1"]).await;

    let (report, err) = check_json(&site).await;
    assert!(err.contains("config checks failed"), "{err}");
    assert_eq!(report["ok"], false);
    for name in ["site config", "site key", "site database", "catalog", "artifacts", "scout scripts directory"] {
        let found = statuses(&report, name);
        assert_eq!(found.len(), 1, "{name}: {report:#}");
        assert_eq!(found[0].0, "ok", "{name}: {}", found[0].1);
    }
    assert!(statuses(&report, "site database")[0].1.contains("1 machine(s)"), "{report:#}");
    assert!(statuses(&report, "artifacts")[0].1.starts_with("2 default entries"), "{report:#}");
    let temporal = statuses(&report, "temporal");
    assert_eq!(temporal[0].0, "fail");
    assert!(temporal[0].1.contains("127.0.0.1:1"), "the detail names the address: {}", temporal[0].1);
    assert!(statuses(&report, "search attributes").is_empty(), "not listed when Temporal is unreachable");

    // The binary: a table, exit status 1.
    let out = Command::new(env!("CARGO_BIN_EXE_hostfw"))
        .args(["--config", site.config.to_str().unwrap(), "config", "check"])
        .output()
        .expect("run hostfw");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("FAIL") && l.contains("temporal")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("ok") && l.contains("artifacts")), "{stdout}");
}

#[tokio::test]
async fn a_missing_artifact_fails_naming_it() {
    let site = Site::new();
    closed_temporal(&site);
    std::fs::remove_file(site.dir.join("firmware/dell-r760/bios-2.3.5.bin")).unwrap();

    let (report, _) = check_json(&site).await;
    let artifacts = statuses(&report, "artifacts");
    assert_eq!(artifacts.len(), 1, "{report:#}");
    assert_eq!(artifacts[0].0, "fail");
    assert!(artifacts[0].1.contains("dell-r760/bios-2.3.5.bin"), "{}", artifacts[0].1);
    assert!(artifacts[0].1.contains("PowerEdge R760") && artifacts[0].1.contains("2.3.5"), "{}", artifacts[0].1);
}

#[tokio::test]
async fn a_firmware_directory_adding_no_model_warns_naming_what_it_ignored() {
    let site = Site::new();
    closed_temporal(&site);
    // The images are there, but no subdirectory has a metadata.toml.
    let (report, _) = check_json(&site).await;
    let fw = statuses(&report, "firmware directory");
    assert_eq!(fw[0].0, "warn", "{report:#}");
    assert!(fw[0].1.contains("ignored: dell-r760/, gb200/ (no metadata.toml)"), "{}", fw[0].1);

    let empty = site.dir.join("empty-firmware");
    std::fs::create_dir_all(&empty).unwrap();
    site.reconfigure(|toml| toml.firmware_global("firmware_directory", "empty-firmware"));
    let (report, _) = check_json(&site).await;
    let fw = statuses(&report, "firmware directory");
    assert_eq!(fw[0].0, "warn");
    assert!(fw[0].1.contains("empty-firmware adds no host models"), "{}", fw[0].1);
}

#[tokio::test]
async fn a_missing_sqlite_file_warns_and_is_not_created() {
    let site = Site::new();
    closed_temporal(&site);
    let (report, _) = check_json(&site).await;
    let db = statuses(&report, "site database");
    assert_eq!(db[0].0, "warn");
    assert!(db[0].1.contains("site.db does not exist") && db[0].1.contains("site.database_url"), "{}", db[0].1);
    assert!(!site.dir.join("site.db").exists(), "config check changes nothing");
}

#[tokio::test]
async fn a_config_that_does_not_load_fails_with_its_file_and_key() {
    let site = Site::new();
    // Literal TOML: the test is about a misspelled key in the text.
    let mut config = std::fs::read_to_string(&site.config).unwrap();
    config.push_str("\n[worker]\nmetrics_listne = \"x\"\n");
    std::fs::write(&site.config, config).unwrap();
    let (report, err) = check_json(&site).await;
    assert!(err.contains("1 of 1 config checks failed"), "{err}");
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "nothing else is checked: {report:#}");
    let detail = checks[0]["detail"].as_str().unwrap();
    assert!(detail.contains("site.toml") && detail.contains("metrics_listne"), "{detail}");
}

#[test]
fn the_site_database_is_the_config_directorys_from_any_current_directory() {
    let site = Site::new();
    let parent = site.dir.parent().unwrap();
    let dir_name = site.dir.file_name().unwrap().to_str().unwrap();
    let hostfw = |cwd: &Path, config: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_hostfw"))
            .current_dir(cwd)
            .args(["--config", config, "--local"])
            .args(args)
            .output()
            .expect("run hostfw");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    hostfw(&site.dir, "site.toml", &["machine", "add", "--id", "m1", "--bmc", "10.0.0.1"]);
    assert!(site.dir.join("site.db").is_file());
    let listed = hostfw(parent, &format!("{dir_name}/site.toml"), &["--format", "json", "machine", "list"]);
    assert!(listed.contains("\"m1\""), "the same database, opened from another directory: {listed}");
    assert!(!parent.join("site.db").exists(), "no database next to the current directory");
}

/// Issue 26 item 12: a site key file that is configured but missing fails the check (the worker
/// could decrypt no password), naming the key and the file; the key itself is never printed.
#[tokio::test]
async fn a_missing_site_key_file_fails() {
    let site = Site::new();
    closed_temporal(&site);
    let (report, _) = check_json(&site).await;
    let key = statuses(&report, "site key");
    assert_eq!(key[0].0, "ok", "{report:#}");
    assert!(key[0].1.starts_with("site key ") && key[0].1.contains("site.secret_key_file"), "{}", key[0].1);
    let secret = std::fs::read_to_string(site.dir.join("site.key")).unwrap();
    assert!(!report.to_string().contains(secret.trim()), "the key is never printed");

    std::fs::remove_file(site.dir.join("site.key")).unwrap();
    let (report, err) = check_json(&site).await;
    let key = statuses(&report, "site key");
    assert_eq!(key[0].0, "fail", "{report:#}");
    assert!(key[0].1.contains("site.secret_key_file") && key[0].1.contains("site.key"), "{}", key[0].1);
    assert!(err.contains("config checks failed"), "{err}");
}
