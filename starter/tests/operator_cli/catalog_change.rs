//! `firmware-config set` and `rollback` made safe: artifacts checked against the catalog's
//! `sha256`, `--dry-run` previews the defaults that change and the hosts the next pass would start
//! (within the ceiling), a change is refused off a terminal without `--yes`, and `rollback --to N`
//! restores an earlier document, audited. Every refusal stores nothing.

use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::{json, r760_report, Site, IMAGES, RUNTIME_DOC};

/// A site whose ceiling is 1, with m1..m3 explored and compliant with the static catalog: the
/// runtime document's new BMC default drifts all three.
async fn site_with_ceiling_one() -> Site {
    let site = Site::new();
    let mut config = std::fs::read_to_string(&site.config).unwrap();
    config.push_str("\n[machine_updater]\nmax_concurrent_machine_updates_absolute = 1\n");
    std::fs::write(&site.config, config).unwrap();
    site.add_machines(&["m1", "m2", "m3"]).await;
    let store = site.store().await;
    for (i, id) in ["m1", "m2", "m3"].iter().enumerate() {
        let report = r760_report((Some("7.10.30.00"), "Enabled"), (Some("2.3.5"), "Enabled"));
        let bmc = format!("10.0.0.{}:443", i + 1);
        store.report_put(&bmc.parse().unwrap(), Some(id), &Ok(report)).await.expect("report stored");
    }
    store.close().await;
    site
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

async fn stored_versions(site: &Site) -> usize {
    let store = site.store().await;
    let n = store.firmware_config_history(100).await.unwrap().len();
    store.close().await;
    n
}

#[tokio::test]
async fn a_dry_run_previews_defaults_artifacts_and_hosts_and_stores_nothing() {
    let site = site_with_ceiling_one().await;
    let audit_before = site.audit_count().await;
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "set", "--dry-run", "--file", doc.to_str().unwrap()]).await;
    let row = |needle: &str| out.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}:\n{out}"));
    let r760 = row("PowerEdge R760");
    assert!(r760.contains("bmc") && r760.contains("7.10.30.00") && r760.contains("7.20.10.00"), "{out}");
    let gb = row("GB200 NVL");
    assert!(gb.contains(" - ") && gb.contains("25.01"), "a new model has no old default: {out}");
    assert!(out.contains("artifacts checked: 2"), "{out}");
    assert!(out.contains(&sha256(IMAGES[0].1)), "the image's digest is shown: {out}");
    assert!(out.contains("the next pass would start 1 host(s) (ceiling 1, in flight 0): m1"), "{out}");
    assert!(out.contains("2 more host(s) would wait:"), "{out}");
    assert!(out.contains("dry run: nothing was stored"), "{out}");
    assert_eq!(stored_versions(&site).await, 0);
    assert_eq!(site.audit_count().await, audit_before);

    let preview = json(
        &site.ok(&["--format", "json", "firmware-config", "set", "--dry-run", "--file", doc.to_str().unwrap()]).await,
    );
    assert_eq!((preview["dry_run"].as_bool(), preview["stored"].as_bool()), (Some(true), Some(false)));
    assert_eq!(preview["version"], 1, "the version it would be stored as");
    assert_eq!(preview["would_start"], serde_json::json!(["m1"]));
    assert_eq!(preview["would_wait"].as_array().unwrap().len(), 2);
    assert_eq!(preview["defaults_changed"].as_array().unwrap().len(), 2);
    let digests: Vec<&str> =
        preview["artifacts_checked"].as_array().unwrap().iter().map(|a| a["sha256"].as_str().unwrap()).collect();
    assert!(digests.contains(&sha256(IMAGES[1].1).as_str()), "{preview}");
    assert_eq!(stored_versions(&site).await, 0);
}

#[tokio::test]
async fn a_missing_or_altered_artifact_is_refused_with_its_name() {
    let site = Site::new();
    std::fs::remove_file(site.dir.join("firmware").join(IMAGES[1].0)).unwrap();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    assert!(err.contains("gb200/bmc-25.01.fwpkg") && err.contains("cannot be read"), "{err}");
    assert!(err.contains("NVIDIA GB200 NVL bmc 25.01") && err.contains("nothing was stored"), "{err}");

    let wrong = "0".repeat(64);
    let right = sha256(IMAGES[0].1);
    let with_digest = |digest: &str| {
        RUNTIME_DOC.replacen(
            "filename = \"dell-r760/idrac-7.20.10.00.bin\"",
            &format!("filename = \"dell-r760/idrac-7.20.10.00.bin\"\nsha256 = \"{digest}\""),
            1,
        )
    };
    let only_r760 = |doc: String| doc[..doc.find("[host_models.gb200]").unwrap()].to_string();
    let altered = site.write("altered.toml", &only_r760(with_digest(&wrong)));
    let err = site.fails(&["firmware-config", "set", "--yes", "--file", altered.to_str().unwrap()]).await;
    assert!(err.contains(&format!("has SHA-256 {right}, but the catalog says {wrong}")), "{err}");
    assert_eq!(stored_versions(&site).await, 0);

    let good = site.write("good.toml", &only_r760(with_digest(&right)));
    let out = site.ok(&["firmware-config", "set", "--yes", "--file", good.to_str().unwrap()]).await;
    assert!(out.contains("firmware config version 1 stored"), "{out}");
}

#[tokio::test]
async fn a_change_off_a_terminal_needs_yes() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = Command::new(env!("CARGO_BIN_EXE_hostfw"))
        .args(["--config", site.config.to_str().unwrap(), "firmware-config", "set", "--file", doc.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("stdin is not a terminal, so pass --yes") && stderr.contains("nothing was changed"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("default versions that change"), "the preview comes first: {stdout}");
    assert_eq!(stored_versions(&site).await, 0);
}

#[tokio::test]
async fn rollback_restores_an_earlier_document_as_the_next_version_audited() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let empty = site.write("empty.toml", "# static catalog only\n");
    site.ok(&["firmware-config", "set", "--yes", "--file", empty.to_str().unwrap()]).await;

    let out = site.ok(&["firmware-config", "rollback", "--to", "1", "--dry-run"]).await;
    assert!(out.contains("7.20.10.00") && out.contains("dry run: nothing was stored"), "{out}");
    assert_eq!(stored_versions(&site).await, 2);

    let out = site.ok(&["firmware-config", "rollback", "--to", "1", "--yes"]).await;
    assert!(out.contains("firmware config version 3 stored"), "{out}");
    let store = site.store().await;
    let latest = store.firmware_config_latest().await.unwrap().unwrap();
    let audit = store.audit_list(1).await.unwrap();
    store.close().await;
    assert_eq!((latest.version, latest.document.as_str()), (3, RUNTIME_DOC));
    assert_eq!(audit[0].action, "firmware-config rollback");
    assert!(audit[0].detail.contains("version 3 restoring version 1"), "{:?}", audit[0]);

    let out = site.ok(&["firmware-config", "rollback", "--to", "3", "--yes"]).await;
    assert!(out.contains("unchanged"), "restoring the current document stores nothing: {out}");
    let err = site.fails(&["firmware-config", "rollback", "--to", "9", "--yes"]).await;
    assert!(err.contains("version 9 does not exist (stored versions: 1 to 3)"), "{err}");
    assert_eq!(stored_versions(&site).await, 3);
}
