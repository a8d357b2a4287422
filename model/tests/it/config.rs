//! Site config: defaults, the example file, path resolution, durations, and errors naming keys.

use std::path::Path;
use std::time::Duration;

use hostfw_model::{format_duration, parse_duration, ConfigError, SiteConfig};

fn load_text(text: &str) -> Result<SiteConfig, ConfigError> {
    SiteConfig::from_toml_str(text, Path::new("/etc/hostfw/site.toml"))
}

fn err(text: &str) -> String {
    match load_text(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn minimal_config_gets_defaults() {
    let c = load_text("[site]\nname = \"demo\"\n").expect("loads");
    assert_eq!(c.site.name, "demo");
    assert_eq!(c.site.database_url, "sqlite:///etc/hostfw/data/hostfw.db");
    assert_eq!(c.site.data_dir, Path::new("/etc/hostfw/data"));
    assert_eq!(c.temporal.address, "http://127.0.0.1:7233");
    assert_eq!(c.temporal.namespace, "default");
    assert_eq!(c.temporal.task_queue, "hostfw");
    assert_eq!(c.worker.metrics_listen, "127.0.0.1:9464");
    assert_eq!(c.worker.artifact_listen, "127.0.0.1:8089");
    assert_eq!(c.worker.artifact_base_url, "http://127.0.0.1:8089");
    assert_eq!(c.credentials.default_username, None);
    assert_eq!(c.redfish.timeout, Duration::from_secs(30));
    assert_eq!(c.redfish.task_timeout, Duration::from_secs(7200));
    assert_eq!(c.host_reprovision.verify_poll_interval, Duration::from_secs(10));
    assert_eq!(c.host_reprovision.verify_max_polls, 60);
    assert_eq!(c.host_reprovision.task_poll_interval, Duration::from_secs(2));
    assert_eq!(c.host_reprovision.bmc_healthy_reads, 3);
    assert!(c.firmware_global.autoupdate);
    assert_eq!(c.firmware_global.max_uploads, 4);
    assert_eq!(c.firmware_global.firmware_directory, Path::new("/etc/hostfw/firmware"));
    assert_eq!(c.firmware_global.host_firmware_upgrade_retry_interval, Duration::from_secs(3600));
    assert!(c.firmware_global.instance_updates_manual_tagging);
    assert_eq!(c.firmware_global.hgx_bmc_gpu_reboot_delay, Duration::from_secs(30));
    assert_eq!(c.machine_updater.max_concurrent_machine_updates_absolute, None);
    assert_eq!(c.machine_updater.max_concurrent_machine_updates_percent, None);
    assert_eq!(c.machine_updater.machine_update_run_interval, Duration::from_secs(300));
    assert!(c.host_models.is_empty());
}

#[test]
fn example_file_loads_with_resolved_paths() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/site.toml");
    let c = SiteConfig::load(&path).expect("example config loads");
    let dir = path.parent().expect("has a parent");
    assert_eq!(c.source, path);
    assert_eq!(c.site.data_dir, dir.join("data"));
    assert_eq!(c.site.database_url, format!("sqlite://{}", dir.join("data/hostfw.db").display()));
    assert_eq!(c.firmware_global.firmware_directory, dir.join("firmware"));
    assert_eq!(c.worker.artifact_base_url, "http://127.0.0.1:8089");
    assert_eq!(c.credentials.default_password.as_ref().map(|p| p.expose()), Some("password"));
    assert_eq!(c.machine_updater.max_concurrent_machine_updates_percent, Some(20));
    assert_eq!(c.firmware_global.hgx_bmc_gpu_reboot_delay, Duration::from_secs(30));
    let period = c.machine_updater.instance_autoreboot_period.as_ref().expect("period");
    assert_eq!(period.start_ms, hostfw_model::parse_rfc3339("2026-01-01T00:00:00+00:00").unwrap());
    assert_eq!(c.host_models.len(), 1);
}

#[test]
fn postgres_url_is_kept_verbatim() {
    let c = load_text("[site]\nname = \"x\"\ndatabase_url = \"postgres://hostfw@db:5432/hostfw\"\n").expect("loads");
    assert_eq!(c.site.database_url, "postgres://hostfw@db:5432/hostfw");
}

#[test]
fn relative_origin_resolves_relative_to_it() {
    let c = SiteConfig::from_toml_str("[site]\nname = \"x\"\n", Path::new("config/site.toml")).expect("loads");
    assert_eq!(c.site.database_url, "sqlite://config/data/hostfw.db");
    assert_eq!(c.firmware_global.firmware_directory, Path::new("config/firmware"));
}

#[test]
fn missing_file_is_a_read_error_naming_it() {
    let e = SiteConfig::load(Path::new("/nonexistent/hostfw.toml")).expect_err("no such file");
    assert!(matches!(e, ConfigError::Read { .. }));
    assert!(e.to_string().contains("/nonexistent/hostfw.toml"), "{e}");
}

#[test]
fn site_table_is_required() {
    let e = err("[temporal]\nnamespace = \"x\"\n");
    assert!(e.contains("/etc/hostfw/site.toml") && e.contains("missing field `site`"), "{e}");
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let e = err("[site]\nname = \"x\"\n[redfish]\ntimout = \"3s\"\n");
    assert!(e.contains("/etc/hostfw/site.toml:4:1"), "{e}");
    assert!(e.contains("`redfish.timout`") && e.contains("unknown field `timout`"), "{e}");
    let e = err("[site]\nname = \"x\"\n[sitee]\n");
    assert!(e.contains("unknown field `sitee`"), "{e}");
}

#[test]
fn bad_duration_names_the_key() {
    let e = err("[site]\nname = \"x\"\n[redfish]\ntask_timeout = \"2 fortnights\"\n");
    assert!(e.contains("`redfish.task_timeout`") && e.contains("2 fortnights"), "{e}");
    let e = err("[site]\nname = \"x\"\n[machine_updater]\nmachine_update_run_interval = -5\n");
    assert!(e.contains("`machine_updater.machine_update_run_interval`"), "{e}");
    let e = err("[site]\nname = \"x\"\n[host_reprovision]\nverify_poll_interval = \"10\"\n");
    assert!(e.contains("`host_reprovision.verify_poll_interval`") && e.contains("missing unit"), "{e}");
}

#[test]
fn value_checks_name_the_key() {
    let cases = [
        ("[site]\nname = \" \"\n", "site.name"),
        ("[site]\nname = \"x\"\ndatabase_url = \"mysql://db\"\n", "site.database_url"),
        ("[site]\nname = \"x\"\n[temporal]\naddress = \"127.0.0.1:7233\"\n", "temporal.address"),
        ("[site]\nname = \"x\"\n[worker]\nmetrics_listen = \"nope\"\n", "worker.metrics_listen"),
        ("[site]\nname = \"x\"\n[worker]\nartifact_listen = \"host:99999\"\n", "worker.artifact_listen"),
        ("[site]\nname = \"x\"\n[credentials]\ndefault_username = \"a\"\n", "credentials.default_password"),
        ("[site]\nname = \"x\"\n[firmware_global]\nmax_uploads = 0\n", "firmware_global.max_uploads"),
        ("[site]\nname = \"x\"\n[host_reprovision]\nverify_max_polls = 0\n", "host_reprovision.verify_max_polls"),
        ("[site]\nname = \"x\"\n[redfish]\ntimeout = 0\n", "redfish.timeout"),
        (
            "[site]\nname = \"x\"\n[machine_updater]\nmax_concurrent_machine_updates_percent = 101\n",
            "machine_updater.max_concurrent_machine_updates_percent",
        ),
        (
            "[site]\nname = \"x\"\n[machine_updater]\nmax_concurrent_machine_updates_percent = 0\n",
            "machine_updater.max_concurrent_machine_updates_percent",
        ),
        (
            "[site]\nname = \"x\"\n[machine_updater]\ninstance_autoreboot_period = { start = \"\", end = \"2026-01-01T00:00:00Z\" }\n",
            "machine_updater.instance_autoreboot_period.start",
        ),
        (
            "[site]\nname = \"x\"\n[machine_updater]\ninstance_autoreboot_period = { start = \"2026-01-01T00:00:00Z\", end = \"soon\" }\n",
            "machine_updater.instance_autoreboot_period.end",
        ),
    ];
    for (text, key) in cases {
        let e = err(text);
        assert!(e.contains("/etc/hostfw/site.toml") && e.contains(&format!("`{key}`")), "{key}: {e}");
    }
}

#[test]
fn credentials_are_redacted_and_never_serialized() {
    let c =
        load_text("[site]\nname = \"x\"\n[credentials]\ndefault_username = \"admin\"\ndefault_password = \"s3cret\"\n")
            .expect("loads");
    assert!(!format!("{c:?}").contains("s3cret"));
    let json = serde_json::to_string(&c).expect("serializes");
    assert!(!json.contains("s3cret"), "{json}");
    assert!(json.contains("admin"));
}

#[test]
fn durations_parse() {
    let ok = |s: &str| parse_duration(s).expect(s);
    assert_eq!(ok("90s"), Duration::from_secs(90));
    assert_eq!(ok("60m"), Duration::from_secs(3600));
    assert_eq!(ok("1h"), Duration::from_secs(3600));
    assert_eq!(ok("500ms"), Duration::from_millis(500));
    assert_eq!(ok(" 2h "), Duration::from_secs(7200));
    for bad in ["", "10", "s", "1.5h", "10d", "-1s", "99999999999999999999h", "1h30m"] {
        assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
    }
    for d in [0, 1, 90, 3600, 7200, 5400] {
        let d = Duration::from_secs(d);
        assert_eq!(parse_duration(&format_duration(d)), Ok(d));
    }
    assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    assert_eq!(format_duration(Duration::from_secs(5400)), "90m");
}

#[test]
fn integer_and_string_durations_in_toml() {
    let c = load_text("[site]\nname = \"x\"\n[redfish]\ntimeout = 45\ntask_timeout = \"90m\"\n").expect("loads");
    assert_eq!(c.redfish.timeout, Duration::from_secs(45));
    assert_eq!(c.redfish.task_timeout, Duration::from_secs(5400));
}

/// A PEM certificate block (the config check looks at PEM structure only; the TLS
/// stack checks the DER when a client trusts it).
const CA_PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUVGVzdA==\n-----END CERTIFICATE-----\n";

/// Writes `site.toml` with `text` (and optionally `files`) into a fresh directory.
fn site_dir(text: &str, files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, body) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, body).expect("write");
    }
    let site = dir.path().join("site.toml");
    std::fs::write(&site, text).expect("write site.toml");
    (dir, site)
}

#[test]
fn redfish_tls_defaults_verify_with_built_in_roots() {
    let c = load_text("[site]\nname = \"x\"\n").expect("loads");
    assert!(!c.redfish.insecure_skip_verify);
    assert_eq!(c.redfish.ca_bundle, None);
    let c = load_text("[site]\nname = \"x\"\n[redfish]\ninsecure_skip_verify = true\n").expect("loads");
    assert!(c.redfish.insecure_skip_verify);
    let e = err("[site]\nname = \"x\"\n[redfish]\ninsecure_skip_verify = \"yes\"\n");
    assert!(e.contains("`redfish.insecure_skip_verify`"), "{e}");
}

#[test]
fn redfish_max_response_bytes_default_override_and_floor() {
    let c = load_text("[site]\nname = \"x\"\n").expect("loads");
    assert_eq!(c.redfish.max_response_bytes, 32 * 1024 * 1024);
    let c = load_text("[site]\nname = \"x\"\n[redfish]\nmax_response_bytes = 67108864\n").expect("loads");
    assert_eq!(c.redfish.max_response_bytes, 64 * 1024 * 1024);
    let e = err("[site]\nname = \"x\"\n[redfish]\nmax_response_bytes = 4096\n");
    assert!(e.contains("`redfish.max_response_bytes`"), "{e}");
    assert!(e.contains("at least 1048576"), "{e}");
    let e = err("[site]\nname = \"x\"\n[redfish]\nmax_response_bytes = \"32MiB\"\n");
    assert!(e.contains("redfish.max_response_bytes"), "{e}");
}

#[test]
fn ca_bundle_resolves_against_the_config_dir() {
    // Resolution alone (no file read): relative to the file's directory, absolute kept.
    let c = load_text("[site]\nname = \"x\"\n[redfish]\nca_bundle = \"tls/ca.pem\"\n").expect("loads");
    assert_eq!(c.redfish.ca_bundle.as_deref(), Some(Path::new("/etc/hostfw/tls/ca.pem")));
    let c = load_text("[site]\nname = \"x\"\n[redfish]\nca_bundle = \"/srv/pki/bmc-ca.pem\"\n").expect("loads");
    assert_eq!(c.redfish.ca_bundle.as_deref(), Some(Path::new("/srv/pki/bmc-ca.pem")));
    // `load` reads and accepts a real bundle of two certificates next to the config.
    let two = format!("{CA_PEM}{CA_PEM}");
    let (dir, site) =
        site_dir("[site]\nname = \"x\"\n[redfish]\nca_bundle = \"tls/ca.pem\"\n", &[("tls/ca.pem", &two)]);
    let c = SiteConfig::load(&site).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.redfish.ca_bundle, Some(dir.path().join("tls/ca.pem")));
}

#[test]
fn missing_or_unparsable_ca_bundle_names_the_key_and_file() {
    let text = "[site]\nname = \"x\"\n[redfish]\nca_bundle = \"tls/ca.pem\"\n";
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[], "cannot read CA bundle"),
        (&[("tls/ca.pem", "just some text\n")], "holds no PEM certificate"),
        (&[("tls/ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n")], "has no END line"),
        (
            &[("tls/ca.pem", "-----BEGIN CERTIFICATE-----\n#not base64#\n-----END CERTIFICATE-----\n")],
            "not valid base64",
        ),
        (
            &[("tls/ca.pem", "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n")],
            "holds no PEM certificate",
        ),
    ];
    for (files, problem) in cases {
        let (dir, site) = site_dir(text, files);
        let e = SiteConfig::load(&site).expect_err("bad CA bundle");
        assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
        let s = e.to_string();
        let bundle = dir.path().join("tls/ca.pem");
        assert!(
            s.contains("`redfish.ca_bundle`")
                && s.contains(&bundle.display().to_string())
                && s.contains("site.toml")
                && s.contains(problem),
            "{problem}: {s}"
        );
    }
}

#[test]
fn site_key_file_resolves_and_artifact_url_lifetime_defaults() {
    let c = load_text("[site]\nname = \"x\"\n").expect("loads");
    assert_eq!(c.site.secret_key_file, None);
    assert_eq!(c.worker.artifact_url_lifetime, Duration::from_secs(6 * 3600));
    let c = load_text(
        "[site]\nname = \"x\"\nsecret_key_file = \"keys/site.key\"\n[worker]\nartifact_url_lifetime = \"90m\"\n",
    )
    .expect("loads");
    assert_eq!(c.site.secret_key_file.as_deref(), Some(Path::new("/etc/hostfw/keys/site.key")));
    assert_eq!(c.worker.artifact_url_lifetime, Duration::from_secs(90 * 60));
    let c = load_text("[site]\nname = \"x\"\nsecret_key_file = \"/run/secrets/k\"\n").expect("loads");
    assert_eq!(c.site.secret_key_file.as_deref(), Some(Path::new("/run/secrets/k")));
    let e = err("[site]\nname = \"x\"\n[worker]\nartifact_url_lifetime = \"0s\"\n");
    assert!(e.contains("worker.artifact_url_lifetime"), "{e}");
}

/// The pre-1.0 history-shape switch is refused with a message that says why (a literal TOML: the
/// test is about the key in the file), as are a zero approval recheck and a pin of workflow
/// changes that is not a number.
#[test]
fn removed_and_new_workflow_keys_are_checked() {
    let e = load_text("[site]\nname = \"x\"\n[host_reprovision]\nlean_history = true\n").expect_err("removed key");
    let s = e.to_string();
    assert!(s.contains("`host_reprovision.lean_history`") && s.contains("removed in hostfw 1.0"), "{s}");
    assert!(s.contains("delete the key"), "{s}");
    let e = load_text("[site]\nname = \"x\"\n[host_reprovision]\napproval_recheck = \"0s\"\n").expect_err("zero");
    assert!(e.to_string().contains("`host_reprovision.approval_recheck`"), "{e}");
    let e =
        load_text("[site]\nname = \"x\"\n[worker]\nworkflow_changes_through = \"all\"\n").expect_err("not a number");
    assert!(e.to_string().contains("worker.workflow_changes_through"), "{e}");
    let c = load_text("[site]\nname = \"x\"\n[worker]\nworkflow_changes_through = 3\n").expect("a number");
    assert_eq!(c.worker.workflow_changes_through, Some(3));
    let c = load_text("[site]\nname = \"x\"\n").expect("defaults");
    assert_eq!(
        (c.worker.workflow_changes_through, c.host_reprovision.approval_recheck),
        (None, Duration::from_secs(3600))
    );
}
