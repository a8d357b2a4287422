//! DMTF conformance: DMTF's Redfish Service Validator (pinned in `scripts/tools.sh`, run through
//! `scripts/conformance/service_validator.py`) against simulated BMCs:
//! - the generic shape (one host per upload style): no failure at all;
//! - one BMC per captured tree: no failure beyond those of the tree itself as captured, i.e. the
//!   lines of `tests/conformance/<tree>.txt` (`scripts/conformance_baseline.sh` writes them:
//!   the same validator on the tree served by `sushy-static`).
//!
//! Before the validator runs, each BMC goes through its simulated parts so that the validator
//! sees them too: a session is open, the System was reset and its boot override PATCHed, and an
//! update ran to completion (a finished Task; an image staged for the next reset where the host
//! applies on reset). See docs/conformance.md.
//!
//! Skipped ("skipped: ...") when `../shared` or the validator (`.tools`, from `scripts/tools.sh`)
//! is absent; `make test` sets `HOSTFW_CONFORMANCE_REQUIRED=1`, which turns an absent validator
//! into a failure.

use crate::common;
use crate::validators;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use hostfw_bmc_sim::{firmware_image, ApplyTime, FleetSpec, HostSpec, Profile, SimHost, TaskStyle, UploadStyle};
use reqwest::StatusCode;
use serde_json::json;
use validators::{shared, tools_python, tree, workspace};

/// One failure the validator reported: its key (URI, property, failure class) and message.
struct Failure {
    key: String,
    message: String,
}

/// What one validator run found: every failure, and the URIs it validated.
struct Report {
    failures: Vec<Failure>,
    validated: BTreeSet<String>,
}

impl Report {
    /// The validator saw each of `uris` (the simulated parts): else their passing proves nothing.
    fn assert_validated(&self, host: &str, uris: &[String]) {
        let seen = |u: &String| {
            let u = u.trim_end_matches('/');
            self.validated.iter().any(|v| v.trim_end_matches('/') == u)
        };
        let missed: Vec<&String> = uris.iter().filter(|u| !seen(u)).collect();
        assert!(missed.is_empty(), "{host}: the validator did not reach {missed:?}");
    }
}

/// Run the service validator against `host` (the whole tree it links).
async fn validate(python: &Path, shared: &Path, host: &SimHost) -> Report {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("failures.txt");
    let mut cmd = Command::new(python);
    cmd.arg(workspace().join("scripts/conformance/service_validator.py"))
        .args(["--rhost", &host.base_url])
        .args(["--user", &host.username, "--password", host.password.expose()])
        .arg("--schema-dir")
        .arg(shared.join("csdl"))
        .arg("--report-dir")
        .arg(work.path().join("report"))
        .arg("--out")
        .arg(&out);
    let started = std::time::Instant::now();
    let output = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().expect("the validator starts");
    assert!(
        output.status.success(),
        "the validator failed to run on {} ({}):\n{}{}",
        host.id,
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{} ({:.0} s)", String::from_utf8_lossy(&output.stdout).trim(), started.elapsed().as_secs_f64());
    let read = |ext: &str| std::fs::read_to_string(format!("{}.{ext}", out.display())).unwrap();
    let validated = read("resources").lines().map(str::to_string).collect();
    let failures = read("messages")
        .lines()
        .map(|line| {
            let mut fields = line.splitn(4, '\t');
            let key: Vec<&str> = fields.by_ref().take(3).collect();
            Failure { key: key.join("\t"), message: fields.next().unwrap_or_default().to_string() }
        })
        .collect();
    Report { failures, validated }
}

fn listing(failures: &[&Failure]) -> String {
    failures
        .iter()
        .map(|f| format!("  {}\n      {}", f.key.replace('\t', "  "), f.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A session, a system reset, a boot override PATCH and an update, on a running BMC. Returns the
/// URIs of the resources it made: the Session and the Task.
async fn exercise(c: &mut Client, system: &str, reset: (&str, &str), upload: Upload<'_>) -> Vec<String> {
    let login = c.login().await;
    assert_eq!(login.status, StatusCode::CREATED, "login: {}", login.raw);
    let session = login.header("Location").expect("session Location").to_string();
    let (target, reset_type) = reset;
    let r = c.post(target, json!({ "ResetType": reset_type })).await;
    assert!(r.status.is_success(), "reset: {} {}", r.status, r.raw);
    eventually("the host is on again", || async { (c.resource(system).await["PowerState"] == "On").then_some(()) })
        .await;
    let boot = json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}});
    let r = c.patch(system, boot).await;
    assert!(r.status.is_success(), "boot PATCH: {} {}", r.status, r.raw);
    let accepted = match upload {
        Upload::Multipart { uri, member } => {
            let image = firmware_image(&format!("^{}$", regex::escape(member.0)), "9.9.9", 1024);
            let params = json!({ "Targets": [member.1] });
            c.push_multipart_to(uri, image, params).await
        }
        Upload::HttpPush => c.push_http(firmware_image("^BIOS$", "9.9.9", 1024)).await,
        Upload::Simple => {
            let image = firmware_image("^BIOS$", "9.9.9", 1024);
            let base = serve_files(vec![("/bios.bin", image)]).await;
            c.simple_update(json!({"ImageURI": format!("{base}/bios.bin"), "TransferProtocol": "HTTP"})).await
        }
    };
    let task = c.wait_task(&accepted).await;
    assert_eq!(task["TaskState"], "Completed", "{task}");
    vec![session, task["@odata.id"].as_str().unwrap().to_string()]
}

enum Upload<'a> {
    /// To this push URI, for the member `(Id, URI)`.
    Multipart {
        uri: &'a str,
        member: (&'a str, &'a str),
    },
    HttpPush,
    Simple,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generic_shape_has_no_failure() {
    let Some(shared) = shared() else { return };
    let Some(python) = tools_python("redfish_service_validator") else {
        return;
    };
    let styles = [
        (UploadStyle::Multipart, TaskStyle::Spec, ApplyTime::OnReset),
        (UploadStyle::HttpPush, TaskStyle::Dell, ApplyTime::Immediate),
        (UploadStyle::SimpleUpdate, TaskStyle::Bmcweb, ApplyTime::Immediate),
    ];
    let hosts = styles
        .iter()
        .enumerate()
        .map(|(i, (upload, task, apply))| {
            let mut h = common::host(&format!("generic-{i}"));
            h.firmware.push(hostfw_bmc_sim::FirmwareSpec::new("BIOS", "1.0"));
            (h.upload_style, h.task_style, h.apply_time) = (*upload, *task, *apply);
            h
        })
        .collect();
    let fleet = hostfw_bmc_sim::start(FleetSpec::new(hosts)).await.unwrap();
    let member = "/redfish/v1/UpdateService/FirmwareInventory/BIOS";
    let mut all = Vec::new();
    for (h, (style, _, apply)) in fleet.hosts().iter().zip(styles) {
        let mut c = Client::new(h);
        let upload = match style {
            UploadStyle::Multipart => {
                Upload::Multipart { uri: "/redfish/v1/UpdateService/upload", member: ("BIOS", member) }
            }
            UploadStyle::HttpPush => Upload::HttpPush,
            UploadStyle::SimpleUpdate => Upload::Simple,
        };
        let mut made = exercise(&mut c, SYSTEM, (SYSTEM_RESET, "ForceRestart"), upload).await;
        if apply == ApplyTime::OnReset {
            let staged = c.resource(&format!("{member}-Staged")).await;
            assert_eq!(staged["Version"], "9.9.9", "an image is staged: {staged}");
            made.push(format!("{member}-Staged"));
        }
        let report = validate(&python, &shared, h).await;
        report.assert_validated(&h.id, &made);
        all.extend(report.failures.into_iter().map(|f| Failure { key: format!("{}: {}", h.id, f.key), ..f }));
    }
    fleet.shutdown().await;
    let listed: Vec<&Failure> = all.iter().collect();
    assert!(
        all.is_empty(),
        "the generic shape must pass the service validator; {} failures:\n{}",
        all.len(),
        listing(&listed)
    );
}

/// Start a BMC on the captured tree `name`, drive its simulated parts, validate it, and compare with
/// the tree's baseline.
async fn profile_adds_no_failure(name: &str) {
    let Some(shared) = shared() else { return };
    let Some(dir) = tree(&shared, name) else {
        return;
    };
    let Some(python) = tools_python("redfish_service_validator") else {
        return;
    };
    let baseline_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let read_lines = |file: &str| -> BTreeSet<String> {
        let path = baseline_dir.join(file);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (scripts/conformance_baseline.sh)", path.display()))
            .lines()
            .map(str::to_string)
            .collect()
    };
    let baseline_file = baseline_dir.join(format!("{name}.txt"));
    let baseline = read_lines(&format!("{name}.txt"));
    let captured_resources = read_lines(&format!("{name}.resources"));

    let mut spec = HostSpec::from_profile(name, "127.0.0.1:0".parse().unwrap(), &dir).unwrap();
    (spec.apply_time, spec.task_seconds, spec.reset_seconds) = (ApplyTime::OnReset, 0.2, 0.2);
    let fleet = start_fleet(vec![spec]).await;
    let shape = Profile::load(&dir).unwrap().shape.clone();
    let member = shape
        .members
        .iter()
        .find(|m| m.updateable && m.version.is_some())
        .expect("an updateable member with a version");
    let reset_type = ["ForceRestart", "GracefulRestart", "PowerCycle"]
        .into_iter()
        .find(|t| shape.system_reset_types.iter().any(|a| a == t))
        .expect("a restart among the System's reset types");
    let mut c = Client::new(&fleet.hosts()[0]);
    let upload = Upload::Multipart {
        uri: shape.multipart_push.as_deref().expect("a MultipartHttpPushUri"),
        member: (&member.id, &member.uri),
    };
    let reset_target = shape.system_reset_target.as_deref().unwrap();
    let mut made = exercise(&mut c, &shape.system, (reset_target, reset_type), upload).await;
    let staged = format!("{}-Staged", member.uri);
    let staged_version = c.resource(&staged).await["Version"].clone();
    assert_eq!(staged_version, "9.9.9", "an image is staged for the next reset");
    made.push(staged);
    let report = validate(&python, &shared, &fleet.hosts()[0]).await;
    fleet.shutdown().await;
    report.assert_validated(name, &made);
    // Everything the validator reached on the tree as captured, it reaches on the BMC too, but
    // the captured Sessions: the BMC lists its own.
    let replaced = |u: &&String| {
        let sessions = shape.sessions.as_deref().unwrap_or("/none");
        u.strip_prefix(sessions).is_some_and(|rest| rest.starts_with('/'))
    };
    let failures = &report.failures;
    let unreached: Vec<&String> =
        captured_resources.iter().filter(|u| !replaced(u) && !report.validated.contains(*u)).collect();

    let new: Vec<&Failure> = failures.iter().filter(|f| !baseline.contains(&f.key)).collect();
    eprintln!(
        "conformance: {name}: {} failures as captured (baseline), {} on bmc-sim, {} new; \
         {} resources reached as captured, {} on bmc-sim, {} not reached",
        baseline.len(),
        failures.len(),
        new.len(),
        captured_resources.len(),
        report.validated.len(),
        unreached.len()
    );
    assert!(
        new.is_empty(),
        "{name}: {} failures that the captured tree does not have ({}):\n{}",
        new.len(),
        baseline_file.display(),
        listing(&new)
    );
    assert!(
        unreached.is_empty(),
        "{name}: {} resources validated on the tree as captured were not reached on bmc-sim, e.g. {:?}",
        unreached.len(),
        unreached.iter().take(10).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dell_adds_no_failure_to_the_captured_tree() {
    profile_adds_no_failure("dell").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn supermicro_adds_no_failure_to_the_captured_tree() {
    profile_adds_no_failure("supermicro").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nvidia_viking_adds_no_failure_to_the_captured_tree() {
    profile_adds_no_failure("nvidia_viking").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nvidia_gb200_adds_no_failure_to_the_captured_tree() {
    profile_adds_no_failure("nvidia_gb200").await;
}
