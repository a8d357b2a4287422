//! DMTF's Redfish Protocol Validator (pinned in `scripts/tools.sh`) against bmc-sim: one fresh
//! BMC of the generic shape and one per captured tree, served over HTTPS (the fleet's own CA, so
//! the Basic-over-HTTPS rules apply as on a real BMC), validated at the same time. The validator
//! logs in and out, PATCHes, POSTs and sends malformed requests, so each BMC serves it alone.
//!
//! Every failure must be listed in the known-failure table of `docs/conformance.md` (targets,
//! assertion, method, URI, reason); any other fails the test and is printed. Listed failures
//! that no longer happen are printed too (the doc should then lose its row). Skipped like
//! `conformance.rs` when `../shared` or the validator is absent.

use crate::validators;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use hostfw_bmc_sim::{FirmwareSpec, FleetSpec, HostSpec, SimHost};
use validators::{shared, tools_python, tree, workspace};

const PROFILES: [&str; 4] = ["dell", "supermicro", "nvidia_viking", "nvidia_gb200"];
/// Where the known failures are listed, and the heading of their table.
const DOC: &str = "docs/conformance.md";
const TABLE_HEADING: &str = "## Protocol validator: known failures";

/// One FAIL line of the validator's TSV report.
#[derive(Debug, Clone)]
struct Failure {
    assertion: String,
    method: String,
    uri: String,
    message: String,
}

/// One row of the known-failure table.
#[derive(Debug)]
struct Known {
    targets: Vec<String>,
    assertion: String,
    method: String,
    /// Exact, or a prefix when written with a trailing `*`.
    uri: String,
    line: usize,
}

impl Known {
    fn covers(&self, target: &str, f: &Failure) -> bool {
        let uri = match self.uri.strip_suffix('*') {
            Some(prefix) => f.uri.starts_with(prefix),
            None => f.uri == self.uri,
        };
        self.targets.iter().any(|t| t == target) && self.assertion == f.assertion && self.method == f.method && uri
    }
}

/// The rows of the table under [`TABLE_HEADING`]; every row must give a reason.
fn known_failures() -> Vec<Known> {
    let path = workspace().join(DOC);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = text
        .lines()
        .position(|l| l.trim() == TABLE_HEADING)
        .unwrap_or_else(|| panic!("{}: no heading {TABLE_HEADING:?}", path.display()));
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(start + 1) {
        if line.starts_with("## ") {
            break;
        }
        let Some(inner) = line.trim().strip_prefix('|').and_then(|l| l.strip_suffix('|')) else {
            continue;
        };
        let cells: Vec<String> = inner.split('|').map(|c| c.trim().trim_matches('`').trim().to_string()).collect();
        if cells.len() != 5 || cells[1] == "assertion" || cells[1].starts_with('-') {
            continue;
        }
        assert!(!cells[4].is_empty(), "{DOC}:{}: a known failure needs its reason", i + 1);
        rows.push(Known {
            targets: cells[0].split(',').map(|t| t.trim().to_string()).collect(),
            assertion: cells[1].clone(),
            method: cells[2].clone(),
            uri: cells[3].clone(),
            line: i + 1,
        });
    }
    assert!(!rows.is_empty(), "{DOC}: the known-failure table is empty or unreadable");
    rows
}

/// Run the protocol validator against `base_url`; its summary line and its FAILs.
fn validate(validator: &Path, host: &SimHost, ca: &Path, report: &Path) -> (String, Vec<Failure>) {
    let base_url = &host.base_url;
    let output = Command::new(validator)
        .args(["--rhost", base_url, "--user", &host.username])
        .args(["--password", host.password.expose()])
        .arg("--ca-bundle")
        .arg(ca)
        .arg("--report-dir")
        .arg(report)
        .args(["--report-type", "tsv"])
        // requests lets these variables win over the validator's own `verify=<ca>`.
        .env("REQUESTS_CA_BUNDLE", ca)
        .env("CURL_CA_BUNDLE", ca)
        .output()
        .expect("the protocol validator starts");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let tsv = std::fs::read_dir(report)
        .ok()
        .and_then(|d| d.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "tsv")));
    let Some(tsv) = tsv else {
        panic!(
            "the protocol validator wrote no report for {base_url} ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let failures = std::fs::read_to_string(tsv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|c| c.len() >= 6 && c[4] == "FAIL")
        .map(|c| Failure { assertion: c[0].into(), method: c[1].into(), uri: c[3].into(), message: c[5].into() })
        .collect();
    let summary = stdout.lines().find(|l| l.starts_with("Summary")).unwrap_or("(no summary)").to_string();
    (summary, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_failure_is_a_known_one() {
    let Some(shared) = shared() else { return };
    let Some(python) = tools_python("redfish_protocol_validator") else {
        return;
    };
    let validator = python.with_file_name("rf_protocol_validator");
    let known = known_failures();

    let any = "127.0.0.1:0".parse().unwrap();
    let mut hosts = vec![HostSpec::new(
        "generic",
        "Dell",
        "PowerEdge R760",
        any,
        vec![FirmwareSpec::new("BMC", "1.0"), FirmwareSpec::new("BIOS", "2.0")],
    )];
    for name in PROFILES {
        let Some(dir) = tree(&shared, name) else {
            return;
        };
        hosts.push(HostSpec::from_profile(name, any, dir).unwrap());
    }
    let mut spec = FleetSpec::new(hosts);
    spec.tls = true;
    let fleet = hostfw_bmc_sim::start(spec).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let ca = work.path().join("ca.pem");
    std::fs::write(&ca, fleet.ca_pem().expect("a TLS fleet has a CA")).unwrap();

    let hosts = fleet.hosts();
    let runs = hosts.iter().map(|h| {
        let (validator, ca, host) = (validator.clone(), ca.clone(), h.clone());
        let report = work.path().join(&h.id);
        tokio::task::spawn_blocking(move || (host.id.clone(), validate(&validator, &host, &ca, &report)))
    });
    let mut results: BTreeMap<String, (String, Vec<Failure>)> =
        futures::future::join_all(runs).await.into_iter().map(|r| r.unwrap()).collect();
    // A request the validator could not complete at all (it reports HTTP status 600: a transport
    // error, e.g. its short socket timeout on a busy machine) says nothing about the protocol.
    // Such a target is validated once more, alone; a real failure fails both runs.
    for host in &hosts {
        let Some((_, failures)) = results.get(&host.id) else { continue };
        let unknown: Vec<&Failure> = failures.iter().filter(|f| !known.iter().any(|k| k.covers(&host.id, f))).collect();
        if !unknown.is_empty() && unknown.iter().all(|f| f.message.contains("status code 600")) {
            eprintln!(
                "protocol: {}: {} transport errors (status 600); validating it once more",
                host.id,
                unknown.len()
            );
            let report = work.path().join(format!("{}-again", host.id));
            let (validator, ca, again) = (validator.clone(), ca.clone(), host.clone());
            let rerun = tokio::task::spawn_blocking(move || validate(&validator, &again, &ca, &report)).await.unwrap();
            results.insert(host.id.clone(), rerun);
        }
    }
    drop(hosts);
    fleet.shutdown().await;

    let mut unknown = Vec::new();
    for (target, (summary, failures)) in &results {
        eprintln!("protocol: {target}: {summary}");
        for f in failures {
            if !known.iter().any(|k| k.covers(target, f)) {
                unknown.push(format!("  {target}  {}  {}  {}\n      {}", f.assertion, f.method, f.uri, f.message));
            }
        }
    }
    for k in &known {
        let seen = k.targets.iter().any(|t| results.get(t).is_some_and(|(_, fs)| fs.iter().any(|f| k.covers(t, f))));
        if !seen {
            eprintln!(
                "protocol: {DOC}:{} ({} {} {}) no longer fails: drop its row",
                k.line, k.assertion, k.method, k.uri
            );
        }
    }
    assert!(
        unknown.is_empty(),
        "{} protocol validator failures are not in the known-failure table of {DOC}:\n{}",
        unknown.len(),
        unknown.join("\n")
    );
}
