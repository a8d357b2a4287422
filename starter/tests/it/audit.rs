//! `audit`: each mutation with its actor and target; `--limit` bounds.

use clap::error::ErrorKind;

use crate::common::{json, parse_err, Site, RUNTIME_DOC};

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
