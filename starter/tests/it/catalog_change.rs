//! `firmware-config set` and `rollback` made safe: artifacts checked against the catalog's
//! `sha256`, `--dry-run` previews the defaults that change and the hosts the next pass would start
//! (within the ceiling), a change is refused off a terminal without `--yes`, and `rollback --to N`
//! restores an earlier document, audited. Issue 27 (safe catalog changes): every default that
//! moves is a row marked UPGRADE, DOWNGRADE, ADDED, REMOVED or CHANGE with its host count, a
//! downgrade needs `--allow-downgrade`, `unset` removes the runtime layer (previewed, a version
//! that `rollback` can undo), `diff` stores nothing, `--message` is kept with the version and
//! the audit entry, and with `require_second_admin` a change waits until another actor approves
//! it. Every refusal stores nothing.

use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::common::{json, r760_report, Site, IMAGES, RUNTIME_DOC};

/// A site whose ceiling is 1, with m1..m3 explored and compliant with the static catalog: the
/// runtime document's new BMC default drifts all three.
async fn site_with_ceiling_one() -> Site {
    let site = Site::new();
    site.reconfigure(|toml| toml.machine_updater("max_concurrent_machine_updates_absolute", 1));
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
        .args(["--config", site.config.to_str().unwrap(), "--local", "firmware-config", "set", "--file"])
        .arg(doc.to_str().unwrap())
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
    site.ok(&["firmware-config", "set", "--yes", "--allow-downgrade", "--file", empty.to_str().unwrap()]).await;

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

fn row<'a>(out: &'a str, needles: &[&str]) -> &'a str {
    out.lines()
        .find(|l| needles.iter().all(|n| l.contains(n)))
        .unwrap_or_else(|| panic!("no line with {needles:?}:\n{out}"))
}

/// Versions stored and audit entries written.
async fn counts(site: &Site) -> (usize, usize) {
    (stored_versions(site).await, site.audit_count().await)
}

#[tokio::test]
async fn a_document_that_leaves_a_model_out_lists_its_downgrade_and_needs_allow_downgrade() {
    let site = site_with_ceiling_one().await;
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "set", "--dry-run", "--file", doc.to_str().unwrap()]).await;
    assert!(row(&out, &["PowerEdge R760", "7.10.30.00", "7.20.10.00"]).contains("UPGRADE"), "{out}");
    assert!(row(&out, &["PowerEdge R760", "7.10.30.00"]).trim_end().ends_with(" 3"), "3 hosts are R760s: {out}");
    assert!(row(&out, &["GB200 NVL", "25.01"]).contains("ADDED"), "{out}");
    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;

    // Only the R760 BIOS: the R760 BMC falls back to its static default, the GB200 disappears.
    let partial = site.write(
        "partial.toml",
        "[host_models.r760]\nvendor = \"Dell\"\nmodel = \"PowerEdge R760\"\n\
         [[host_models.r760.components.uefi.known_firmware]]\nversion = \"2.3.5\"\ndefault = true\n\
         filename = \"dell-r760/bios-2.3.5.bin\"\n",
    );
    let partial = partial.to_str().unwrap();
    let before = counts(&site).await;
    let out = site.ok(&["firmware-config", "set", "--dry-run", "--file", partial]).await;
    let bmc = row(&out, &["PowerEdge R760", "bmc", "7.20.10.00", "7.10.30.00"]);
    assert!(bmc.contains("DOWNGRADE") && bmc.trim_end().ends_with(" 3"), "{out}");
    assert!(row(&out, &["GB200 NVL", "bmc", "25.01"]).contains("REMOVED"), "{out}");
    assert!(out.contains("1 default(s) move to an older version (needs --allow-downgrade)"), "{out}");
    assert!(out.contains("without --allow-downgrade this change is refused"), "{out}");

    let preview = json(&site.ok(&["--format", "json", "firmware-config", "set", "--dry-run", "--file", partial]).await);
    let kinds: Vec<&str> =
        preview["defaults_changed"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["DOWNGRADE", "REMOVED"], "{preview}");
    assert_eq!(preview["downgrades"][0]["hosts"], 3, "{preview}");
    assert_eq!(preview["downgrades"][0]["from"], "7.20.10.00", "{preview}");

    let err = site.fails(&["firmware-config", "set", "--yes", "--file", partial]).await;
    assert!(err.contains("this change downgrades 1 default(s), which needs --allow-downgrade"), "{err}");
    assert!(err.contains("Dell PowerEdge R760 bmc 7.20.10.00 -> 7.10.30.00 (DOWNGRADE, 3 host(s))"), "{err}");
    assert!(!err.contains("GB200"), "only the downgraded rows are listed: {err}");
    assert!(err.contains("nothing was stored"), "{err}");
    assert_eq!(counts(&site).await, before, "a refused downgrade stores and audits nothing");

    let out = site
        .ok(&[
            "firmware-config",
            "set",
            "--yes",
            "--allow-downgrade",
            "--message",
            "CHG-7 back to 7.10",
            "--file",
            partial,
        ])
        .await;
    assert!(out.contains("firmware config version 2 stored"), "{out}");
    let store = site.store().await;
    let audit = store.audit_list(1).await.unwrap();
    store.close().await;
    assert_eq!(audit[0].action, "firmware-config set");
    let detail = &audit[0].detail;
    assert!(detail.contains("2 default(s) changed: 1 DOWNGRADE, 1 REMOVED; downgrade allowed"), "{detail}");
    assert!(detail.ends_with("; message: CHG-7 back to 7.10"), "{detail}");
}

#[tokio::test]
async fn versions_that_cannot_be_ordered_are_a_change_not_a_downgrade() {
    let site = site_with_ceiling_one().await;
    std::fs::write(site.dir.join("firmware/dell-r760/idrac-hf.bin"), "idrac hotfix").unwrap();
    let hotfix = RUNTIME_DOC.replacen("7.20.10.00\"", "7.10.30.00-hf1\"", 1).replacen(
        "dell-r760/idrac-7.20.10.00.bin",
        "dell-r760/idrac-hf.bin",
        1,
    );
    let doc = site.write("hotfix.toml", &hotfix[..hotfix.find("[host_models.gb200]").unwrap()]);
    let out = site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    assert!(row(&out, &["PowerEdge R760", "7.10.30.00", "7.10.30.00-hf1"]).contains("CHANGE"), "{out}");
    assert!(out.contains("firmware config version 1 stored"), "{out}");
}

#[tokio::test]
async fn unset_is_previewed_refused_as_a_downgrade_and_stored_as_a_version_rollback_can_undo() {
    let site = site_with_ceiling_one().await;
    let out = site.ok(&["firmware-config", "unset", "--yes"]).await;
    assert!(out.contains("no runtime layer is stored; nothing stored"), "{out}");
    assert_eq!(counts(&site).await.0, 0);

    let doc = site.write("runtime.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let before = counts(&site).await;
    let out = site.ok(&["firmware-config", "unset", "--dry-run"]).await;
    assert!(out.contains("the runtime layer is removed"), "{out}");
    assert!(row(&out, &["PowerEdge R760", "7.20.10.00", "7.10.30.00"]).contains("DOWNGRADE"), "{out}");
    assert!(row(&out, &["GB200 NVL", "25.01"]).contains("REMOVED"), "{out}");
    assert!(out.contains("dry run: nothing was stored"), "{out}");
    let err = site.fails(&["firmware-config", "unset", "--yes"]).await;
    assert!(err.contains("needs --allow-downgrade") && err.contains("nothing was stored"), "{err}");
    assert_eq!(counts(&site).await, before);

    let out = site.ok(&["firmware-config", "unset", "--yes", "--allow-downgrade", "-m", "CHG-9 static only"]).await;
    assert!(out.contains("firmware config version 2 stored: the runtime layer is removed"), "{out}");
    let out = site.ok(&["firmware-config", "show"]).await;
    assert!(out.contains("version 2") && out.contains("removed the runtime layer"), "{out}");
    assert!(out.contains("message: CHG-9 static only"), "{out}");
    assert!(row(&out, &["bmc", "7.10.30.00"]).contains("static config"), "{out}");
    assert!(!out.contains("GB200"), "{out}");
    let store = site.store().await;
    let latest = store.firmware_config_latest().await.unwrap().unwrap();
    let audit = store.audit_list(1).await.unwrap();
    store.close().await;
    assert!(latest.removes_layer && latest.document.is_empty(), "{latest:?}");
    assert_eq!(audit[0].action, "firmware-config unset");
    assert!(
        audit[0].detail.starts_with("version 2 removing the runtime layer (removes the runtime layer"),
        "{:?}",
        audit[0]
    );

    let out = site.ok(&["firmware-config", "unset", "--yes", "--allow-downgrade"]).await;
    assert!(out.contains("the runtime layer is already removed (version 2"), "{out}");
    let out = site.ok(&["firmware-config", "history"]).await;
    assert!(row(&out, &["2 ", "- (unset)"]).contains("CHG-9 static only"), "{out}");

    // Back to the layer before the unset: an upgrade, no flag needed; then the unset again.
    let out = site.ok(&["firmware-config", "rollback", "--to", "1", "--yes"]).await;
    assert!(out.contains("firmware config version 3 stored (2 host model tables"), "{out}");
    let out = site.ok(&["firmware-config", "rollback", "--to", "2", "--yes", "--allow-downgrade"]).await;
    assert!(out.contains("firmware config version 4 stored: the runtime layer is removed"), "{out}");
    let store = site.store().await;
    let latest = store.firmware_config_latest().await.unwrap().unwrap();
    store.close().await;
    assert!(latest.removes_layer, "{latest:?}");
}

#[tokio::test]
async fn diff_shows_the_rows_without_storing_or_asking() {
    let site = site_with_ceiling_one().await;
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let out = site.ok(&["firmware-config", "diff", "--file", doc.to_str().unwrap()]).await;
    assert!(row(&out, &["PowerEdge R760", "7.10.30.00", "7.20.10.00"]).contains("UPGRADE"), "{out}");
    assert!(!out.contains("would start"), "only the rows: {out}");
    assert_eq!(counts(&site).await.0, 0, "diff stores nothing");

    site.ok(&["firmware-config", "set", "--yes", "--file", doc.to_str().unwrap()]).await;
    let before = counts(&site).await;
    let empty = site.write("empty.toml", "# static only\n");
    // A downgrade is shown, not refused; the test's stdin is no terminal, so a prompt would fail.
    let out = site.ok(&["firmware-config", "diff", "--file", empty.to_str().unwrap()]).await;
    assert!(row(&out, &["PowerEdge R760", "7.20.10.00", "7.10.30.00"]).contains("DOWNGRADE"), "{out}");
    assert!(row(&out, &["GB200 NVL", "25.01"]).contains("REMOVED"), "{out}");
    let out = site.ok(&["firmware-config", "diff", "--file", doc.to_str().unwrap()]).await;
    assert!(out.contains("no change: the document is identical to firmware config version 1"), "{out}");
    let v = json(&site.ok(&["--format", "json", "firmware-config", "diff", "--file", empty.to_str().unwrap()]).await);
    assert_eq!((v["changed"].as_bool(), v["stored"].as_bool()), (Some(true), Some(false)), "{v}");
    assert_eq!(v["downgrades"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(counts(&site).await, before, "diff stores and audits nothing");
}

#[tokio::test]
async fn the_message_is_kept_with_the_version_and_shown_in_history() {
    let site = Site::new();
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    site.ok(&["firmware-config", "set", "--yes", "--message", "CHG-1234 iDRAC 7.20", "--file", doc.to_str().unwrap()])
        .await;
    let empty = site.write("empty.toml", "# static only\n");
    site.ok(&["firmware-config", "set", "--yes", "--allow-downgrade", "--file", empty.to_str().unwrap()]).await;
    site.ok(&["firmware-config", "rollback", "--to", "1", "--yes", "--message", "CHG-1240 redo"]).await;

    let out = site.ok(&["firmware-config", "history"]).await;
    assert!(out.lines().next().unwrap().contains("MESSAGE"), "{out}");
    let version = |n: &str| out.lines().find(|l| l.starts_with(n)).unwrap_or_else(|| panic!("{n}:\n{out}"));
    assert!(version("1 ").contains("CHG-1234 iDRAC 7.20"), "{out}");
    assert!(version("3 ").contains("CHG-1240 redo"), "{out}");
    let history = json(&site.ok(&["--format", "json", "firmware-config", "history"]).await);
    let messages: Vec<&serde_json::Value> = history.as_array().unwrap().iter().map(|v| &v["message"]).collect();
    assert_eq!(
        messages,
        [&serde_json::json!("CHG-1240 redo"), &serde_json::Value::Null, &serde_json::json!("CHG-1234 iDRAC 7.20")]
    );
    let store = site.store().await;
    let audit = store.audit_list(1).await.unwrap();
    store.close().await;
    assert_eq!(audit[0].action, "firmware-config rollback");
    assert!(audit[0].detail.ends_with("; message: CHG-1240 redo"), "{:?}", audit[0]);
}

/// Runs `f` as `actor` on `site` (the CLI's library entry points take the actor from their
/// context; the binary sets it from the environment): its result and what it printed.
async fn as_actor<F, Fut>(site: &Site, actor: &str, f: F) -> (anyhow::Result<()>, String)
where
    F: FnOnce(hostfw_starter::context::Context) -> Fut,
    Fut: std::future::Future<Output = (hostfw_starter::context::Context, anyhow::Result<()>)>,
{
    let ctx = hostfw_starter::context::Context {
        site: hostfw_model::SiteConfig::load(&site.config).expect("site config"),
        store: site.store().await,
        format: hostfw_starter::cli::Format::Table,
        actor: actor.to_string(),
    };
    let ((ctx, res), out) = hostfw_starter::output::capture(f(ctx)).await;
    ctx.store.close().await;
    (res, out)
}

#[tokio::test]
async fn with_require_second_admin_a_change_waits_for_another_actor() {
    use hostfw_starter::firmware_config::{self, ChangeFlags};
    let site = Site::new();
    site.reconfigure(|toml| toml.firmware_global("require_second_admin", true));
    let doc = site.write("runtime.toml", RUNTIME_DOC);
    let flags = ChangeFlags { yes: true, message: Some("CHG-77".into()), ..ChangeFlags::default() };

    let (res, out) = as_actor(&site, "cli:alice", |ctx| async move {
        let res = firmware_config::set(&ctx, &doc, &flags).await;
        (ctx, res)
    })
    .await;
    res.unwrap();
    assert!(out.contains("stored as pending change 1, not in effect"), "{out}");
    assert_eq!(stored_versions(&site).await, 0, "a pending change is not a version");
    let out = site.ok(&["firmware-config", "pending"]).await;
    assert!(row(&out, &["1 ", "cli:alice", "firmware-config set"]).contains("CHG-77"), "{out}");

    let approve = |ctx: hostfw_starter::context::Context| async move {
        let res = firmware_config::approve(&ctx, 1, true).await;
        (ctx, res)
    };
    let (res, _) = as_actor(&site, "cli:alice", approve).await;
    let err = format!("{:#}", res.unwrap_err());
    assert!(err.contains("proposed by cli:alice: another admin must approve it"), "{err}");
    assert_eq!(stored_versions(&site).await, 0);

    let (res, out) = as_actor(&site, "cli:bob", approve).await;
    res.unwrap();
    assert!(row(&out, &["PowerEdge R760", "7.10.30.00", "7.20.10.00"]).contains("UPGRADE"), "previewed again: {out}");
    assert!(
        out.contains(
            "pending change 1 approved: firmware config version 1 stored (proposed by cli:alice, approved by cli:bob)"
        ),
        "{out}"
    );
    let store = site.store().await;
    let latest = store.firmware_config_latest().await.unwrap().unwrap();
    let audit = store.audit_list(2).await.unwrap();
    store.close().await;
    assert_eq!(
        (latest.document.as_str(), latest.actor.as_str(), latest.message.as_deref()),
        (RUNTIME_DOC, "cli:alice", Some("CHG-77"))
    );
    assert_eq!((audit[0].actor.as_str(), audit[0].action.as_str()), ("cli:bob", "firmware-config approve"));
    assert_eq!((audit[1].actor.as_str(), audit[1].action.as_str()), ("cli:alice", "firmware-config propose"));
    let (res, _) = as_actor(&site, "cli:carol", approve).await;
    assert!(format!("{:#}", res.unwrap_err()).contains("was approved by cli:bob already"));

    // A downgrade still needs --allow-downgrade to be proposed; a rejected change stores nothing.
    let (res, _) = as_actor(&site, "cli:alice", |ctx| async move {
        let res = firmware_config::unset(&ctx, &ChangeFlags { yes: true, ..ChangeFlags::default() }).await;
        (ctx, res)
    })
    .await;
    assert!(format!("{:#}", res.unwrap_err()).contains("needs --allow-downgrade"));
    let (res, _) = as_actor(&site, "cli:alice", |ctx| async move {
        let flags = ChangeFlags { yes: true, allow_downgrade: true, ..ChangeFlags::default() };
        let res = firmware_config::unset(&ctx, &flags).await;
        (ctx, res)
    })
    .await;
    res.unwrap();
    let out = site.ok(&["firmware-config", "reject", "--revision", "2", "--message", "not now"]).await;
    assert!(out.contains("pending change 2 (proposed by cli:alice) rejected"), "{out}");
    let (res, _) = as_actor(&site, "cli:bob", |ctx| async move {
        let res = firmware_config::approve(&ctx, 2, true).await;
        (ctx, res)
    })
    .await;
    let err = format!("{:#}", res.unwrap_err());
    assert!(err.contains("pending firmware config change 2 was rejected by cli:"), "{err}");
    assert_eq!(stored_versions(&site).await, 1);
    assert!(site.ok(&["firmware-config", "pending"]).await.lines().count() <= 1, "nothing left pending");
}
