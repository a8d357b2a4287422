//! One output contract (docs/cli-json.md): every command's `--format json` output is one JSON
//! document in one vocabulary: a machine is `machine_id` (never `id` or `machine`), and a time is
//! an RFC 3339 UTC string (never `*_ms` milliseconds). Commands that need Temporal are covered by
//! the e2e tests; these run on the offline site.

use serde_json::Value;

use crate::common::{json, r760_report, Site, RUNTIME_DOC};

/// Every offence against the vocabulary in `v`, with its path.
fn offences(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            let is_machine = map.contains_key("bmc_address") || map.contains_key("auto_update");
            for (key, value) in map {
                let here = format!("{path}.{key}");
                if key == "machine" && value.is_string() {
                    out.push(format!("{here}: a machine is `machine_id`"));
                }
                if key == "id" && is_machine {
                    out.push(format!("{here}: a machine is `machine_id`"));
                }
                if key.ends_with("_ms") {
                    out.push(format!("{here}: times are RFC 3339 text, not milliseconds"));
                }
                let time_key = key == "at" || key.ends_with("_at") || key == "window_start" || key == "window_end";
                if let (true, Some(text)) = (time_key, value.as_str()) {
                    if !text.ends_with('Z') || hostfw_model::parse_rfc3339(text).is_err() {
                        out.push(format!("{here}: {text:?} is not RFC 3339 UTC"));
                    }
                }
                offences(value, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                offences(item, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_offline_command_speaks_one_json_vocabulary() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let doc = doc.to_str().unwrap();
    let store = site.store().await;
    store.close().await;
    let commands: Vec<Vec<&str>> = vec![
        vec!["machine", "add", "--machine", "m1", "--bmc", "10.0.0.1:443"],
        vec!["machine", "add", "--machine", "m2", "--bmc", "10.0.0.2:443"],
        vec!["machine", "list"],
        vec!["machine", "show", "m1"],
        vec!["machine", "auto-update", "--machine", "m1", "--disable"],
        vec!["managed-host", "start-updates", "--machines", "m1", "--start", "2099-01-01T00:00:00Z"],
        vec!["firmware-config", "set", "--dry-run", "--file", doc],
        vec!["firmware-config", "set", "--yes", "--file", doc],
        vec!["firmware-config", "show"],
        vec!["firmware-config", "history"],
        vec!["firmware", "show"],
        vec!["plan"],
        vec!["compliance"],
        vec!["audit"],
        vec!["notifications", "list"],
    ];
    let mut problems = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        if i == 2 {
            // An explored host, so reports and plans carry real content.
            let store = site.store().await;
            let report = r760_report((Some("7.00.00.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
            store.report_put(&"10.0.0.1:443".parse().unwrap(), Some("m1"), &Ok(report)).await.unwrap();
            store.close().await;
        }
        let mut args = vec!["--format", "json"];
        args.extend(command.iter().copied());
        let out = site.ok(&args).await;
        let value = json(&out);
        offences(&value, &command.join(" "), &mut problems);
    }
    let report = json(&site.ok(&["--format", "json", "site-explorer", "get-report", "managed-host", "10.0.0.1"]).await);
    offences(&report, "site-explorer get-report", &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
