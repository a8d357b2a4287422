//! A broken `metadata.toml` in the firmware directory does not blind the read commands (issue 26
//! item 12): `plan`, `compliance`, `budget list` and `managed-host show` answer on the catalog
//! without that file and say so, naming the file and what is wrong; with `--format json` the
//! warning is a `catalog_warnings` field of the document. Commands that change something still
//! refuse a catalog that does not load.

use crate::common::{json, r760_report, Site};

/// A firmware-directory overlay adding a second model, then broken by an edit.
const OVERLAY: &str = r#"
vendor = "NVIDIA"
model = "GB200 NVL"
ordering = ["bmc"]
[components.bmc]
current_version_reported_as = "^HGX_FW_BMC_0$"
[[components.bmc.known_firmware]]
version = "25.01"
default = true
filename = "gb200/bmc-25.01.fwpkg"
"#;

#[tokio::test]
async fn plan_compliance_budget_and_show_answer_on_the_catalog_without_a_broken_file() {
    let site = Site::new();
    site.add_machines(&["m1"]).await;
    let store = site.store().await;
    let report = r760_report((Some("7.00.00.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
    store.report_put(&"10.0.0.1:443".parse().unwrap(), Some("m1"), &Ok(report)).await.unwrap();
    store.close().await;
    let overlay_dir = site.dir.join("firmware/gb200");
    std::fs::create_dir_all(&overlay_dir).unwrap();
    let metadata = overlay_dir.join("metadata.toml");
    std::fs::write(&metadata, OVERLAY).unwrap();
    site.ok(&["plan"]).await;
    // Broken: a version that is not a string.
    std::fs::write(&metadata, OVERLAY.replace("version = \"25.01\"", "version = 25.01")).unwrap();
    let file = metadata.display().to_string();

    for command in [&["plan"][..], &["compliance"], &["budget", "list"], &["managed-host", "show", "m1"]] {
        let out = site.ok(command).await;
        let first = out.lines().next().unwrap_or_default();
        assert!(first.starts_with("WARNING: the catalog file") && first.contains(&file), "{command:?}: {out}");
        assert!(out.contains("known_firmware[0].version"), "{command:?} says what is wrong: {out}");
        assert!(out.contains("(modified 20"), "{command:?} says since when: {out}");
    }
    let plan = site.ok(&["plan"]).await;
    assert!(plan.lines().any(|l| l.starts_with("m1") && l.contains("ceiling is 0")), "m1 still planned: {plan}");

    for command in [&["plan"][..], &["compliance"], &["managed-host", "show", "m1"]] {
        let mut args = vec!["--format", "json"];
        args.extend_from_slice(command);
        let doc = json(&site.ok(&args).await);
        let warning = &doc["catalog_warnings"][0];
        assert_eq!(warning["file"], file.as_str(), "{command:?}: {doc}");
        assert!(warning["problem"].as_str().unwrap().contains("known_firmware[0].version"), "{doc}");
        assert!(warning["modified_at"].as_str().unwrap().ends_with('Z'), "{doc}");
    }
    let compliance = json(&site.ok(&["--format", "json", "compliance"]).await);
    assert_eq!(compliance["components"][0]["model"], "PowerEdge R760", "{compliance}");
    // `budget list --format json` is an array of targets (none on record here): still JSON.
    assert!(json(&site.ok(&["--format", "json", "budget", "list"]).await).is_array());

    // A command that changes something still needs the whole catalog.
    let refused = site.fails(&["host", "reprovision", "all-drifted", "--bypass-ceiling", "--dry-run"]).await;
    assert!(refused.contains(&file), "{refused}");

    // Fixed: no warning any more.
    std::fs::write(&metadata, OVERLAY).unwrap();
    let out = site.ok(&["plan"]).await;
    assert!(!out.contains("WARNING"), "{out}");
    assert!(json(&site.ok(&["--format", "json", "plan"]).await).get("catalog_warnings").is_none());
}
