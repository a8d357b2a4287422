//! `--format json` never prints prose on stdout (issue 26 item 12): the real `hostfw` binary runs
//! every verb that works on an offline site (no Temporal server, no BMC) with `--format json`,
//! and its whole stdout must parse as one JSON document; prose belongs on stderr. Verbs that need
//! Temporal are covered by the e2e tests.

use std::process::Command;

use crate::common::{r760_report, Site, RUNTIME_DOC};

#[tokio::test]
async fn every_offline_verb_prints_only_json_on_stdout() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let doc = doc.to_str().unwrap().to_string();
    let dir = site.dir.to_str().unwrap().to_string();
    let man = format!("{dir}/man");
    let key = format!("{dir}/new.key");
    let scout_key = format!("{dir}/scout-signing");
    let commands: Vec<Vec<&str>> = vec![
        vec!["machine", "add", "--machine", "m1", "--bmc", "10.0.0.1:443"],
        vec!["machine", "list"],
        vec!["machine", "show", "m1"],
        vec!["machine", "label", "--machine", "m1", "--set", "rack=r1"],
        vec!["machine", "auto-update", "--machine", "m1", "--disable"],
        vec!["managed-host", "start-updates", "--machines", "m1", "--start", "2099-01-01T00:00:00Z"],
        vec!["managed-host", "show", "m1"],
        vec!["firmware-config", "set", "--dry-run", "--file", &doc],
        vec!["firmware-config", "set", "--yes", "--file", &doc],
        vec!["firmware-config", "show"],
        vec!["firmware-config", "history"],
        vec!["firmware", "show"],
        vec!["plan"],
        vec!["compliance"],
        vec!["budget", "list"],
        vec!["host", "reprovision", "list"],
        vec!["audit"],
        vec!["notifications", "list"],
        vec!["site-explorer", "get-report", "managed-host", "10.0.0.1"],
        vec!["config", "check"],
        vec!["site-key", "generate", "--out", &key],
        vec!["scout-package", "keygen", "--out", &scout_key],
        vec!["completion", "bash"],
        vec!["man", "--out", &man],
    ];
    let mut problems = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        if i == 2 {
            let store = site.store().await;
            let report = r760_report((Some("7.00.00.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
            store.report_put(&"10.0.0.1:443".parse().unwrap(), Some("m1"), &Ok(report)).await.unwrap();
            store.close().await;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_hostfw"))
            .args(["--config", site.config.to_str().unwrap(), "--local", "--format", "json"])
            .args(command)
            .output()
            .expect("hostfw runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = command.join(" ");
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&stdout) {
            problems.push(format!(
                "`{name}` (exit {:?}): stdout is not one JSON document ({e}):\n{stdout}\nstderr:\n{stderr}",
                out.status.code()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
