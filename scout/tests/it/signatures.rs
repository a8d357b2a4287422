//! Signed packages: a task signed by the trusted key runs (also before its `not_after`); a
//! tampered script (one byte), tampered metadata (timeouts), a package signed for another
//! vendor/model, another component or another firmware version than the task's target, a package
//! past its `not_after`, a manifest of an older hostfw (with the command that re-signs it), a
//! task of an older worker (no vendor/model), other artifacts than the signed ones, a signature by
//! another key, a malformed or missing signature, and a Scout with no key are each refused naming
//! the package, with nothing downloaded and nothing run (the script would leave a marker file).
//! `allow_unsigned` without a key runs an unsigned task.

use crate::common;

use common::{manifest_of, served, signed, signed_text, signed_with, signing_key, task, FileServer, Harness};
use hostfw_scout::TrustedKey;
use hostfw_workflows::scout::{ScoutResult, ScoutTask};

fn marker_script(h: &Harness) -> (String, std::path::PathBuf) {
    let marker = h.marker("ran");
    (format!("touch '{}'\n", marker.display()), marker)
}

/// Asserts `result` is a refusal naming the package and `problem`, and that nothing ran or was fetched.
fn refused(result: &ScoutResult, problem: &str, marker: &std::path::Path, server: &FileServer) {
    assert!(!result.success && result.exit_code.is_none(), "{result:?}");
    let error = result.error.as_deref().unwrap_or_default();
    assert!(error.contains("scout package dell/r760/bmc refused") || error.contains("scout package "), "{error}");
    assert!(error.contains(problem), "{error}");
    assert!(!marker.exists(), "the script ran");
    assert_eq!(server.hits("upgrade.sh"), 0, "the script was downloaded");
}

#[tokio::test]
async fn a_signed_package_runs() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let result = h.run_as_is(signed(task(&server, &script, vec![]))).await.unwrap();
    assert!(result.success, "{result:?}");
    assert!(marker.exists());
}

#[tokio::test]
async fn a_script_changed_by_one_byte_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let genuine = task(&server, &script, vec![]);
    let manifest = manifest_of(&genuine);
    // The worker digests the script it has on disk: one byte changed after signing.
    let tampered = task(&server, &script.replacen("touch", "touCh", 1), vec![]);
    let t = signed_with(tampered, &manifest, &signing_key());
    let result = h.run_as_is(t).await.unwrap();
    refused(&result, "differs from the signed", &marker, &server);
    assert!(result.error.unwrap().contains("dell/r760/bmc"));
}

#[tokio::test]
async fn changed_metadata_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let mut t = signed(task(&server, &script, vec![]));
    t.execution_timeout_secs = 3600;
    refused(&h.run_as_is(t).await.unwrap(), "timeouts differ from the signed metadata", &marker, &server);
}

#[tokio::test]
async fn another_components_package_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let t = task(&server, &script, vec![]);
    let mut manifest = manifest_of(&t);
    manifest.package = "dell/r760/uefi".into();
    let result = h.run_as_is(signed_with(t, &manifest, &signing_key())).await.unwrap();
    refused(&result, "signed for component uefi, not for component bmc", &marker, &server);
}

#[tokio::test]
async fn a_package_signed_for_another_model_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    // The r750's signed package copied into the r760's package directory: same script, same
    // component, same version.
    let t = task(&server, &script, vec![]);
    let mut manifest = manifest_of(&t);
    manifest.package = "dell/r750/bmc".into();
    let result = h.run_as_is(signed_with(t.clone(), &manifest, &signing_key())).await.unwrap();
    refused(&result, "signed for vendor/model dell/r750, but the task is for dell/r760", &marker, &server);
    assert!(result.error.unwrap().contains("scout package dell/r750/bmc refused"));

    let t = ScoutTask { upgrade_task_id: "other-vendor".into(), ..t };
    let mut manifest = manifest_of(&t);
    manifest.package = "lenovo/r760/bmc".into();
    let result = h.run_as_is(signed_with(t, &manifest, &signing_key())).await.unwrap();
    refused(&result, "signed for vendor/model lenovo/r760, but the task is for dell/r760", &marker, &server);
}

#[tokio::test]
async fn a_package_signed_for_another_version_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    // An older signed package served again for a newer target (or the other way round).
    let t = task(&server, &script, vec![]);
    let mut manifest = manifest_of(&t);
    manifest.version = "1.2.2".into();
    let result = h.run_as_is(signed_with(t, &manifest, &signing_key())).await.unwrap();
    refused(&result, "signed for firmware version 1.2.2, but the task's target version is 1.2.3", &marker, &server);
}

#[tokio::test]
async fn a_package_past_its_not_after_is_refused_and_one_before_it_runs() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let t = task(&server, &script, vec![]);
    let mut manifest = manifest_of(&t);
    manifest.not_after_ms = Some(hostfw_model::parse_not_after("2020-01-31").unwrap());
    let result = h.run_as_is(signed_with(t.clone(), &manifest, &signing_key())).await.unwrap();
    refused(
        &result,
        "its signature expired at 2020-01-31T23:59:59Z (not_after; Scout's clock says 20",
        &marker,
        &server,
    );

    let t = ScoutTask { upgrade_task_id: "not-yet-expired".into(), ..t };
    manifest.not_after_ms = Some(hostfw_model::parse_not_after("2999-12-31").unwrap());
    let result = h.run_as_is(signed_with(t, &manifest, &signing_key())).await.unwrap();
    assert!(result.success, "{result:?}");
    assert!(marker.exists());
}

#[tokio::test]
async fn a_manifest_of_an_older_hostfw_is_refused_with_the_command_that_re_signs_it() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let t = task(&server, &script, vec![]);
    // Exactly what hostfw wrote before vendor, model and version were bound, validly signed.
    let v1 = format!(
        "hostfw-scout-manifest v1\npackage dell/r760/bmc\nscript upgrade.sh sha256 {}\n\
         execution_timeout_seconds 20\nartifact_download_timeout_seconds 20\n",
        t.script.sha256
    );
    let result = h.run_as_is(signed_text(t, &v1, &signing_key())).await.unwrap();
    refused(&result, "signed by an older hostfw", &marker, &server);
    let error = result.error.unwrap();
    assert!(error.starts_with("scout package dell/r760/bmc refused"), "{error}");
    assert!(
        error.contains(
            "re-sign it with `hostfw scout-package sign --key scout-signing.key --version 1.2.3 \
             <scout_scripts_directory>/dell/r760/bmc`"
        ),
        "{error}"
    );
}

#[tokio::test]
async fn a_task_of_an_older_worker_without_vendor_and_model_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let signed_task = signed(task(&server, &script, vec![]));
    // The task as an older worker sends it: no `vendor`, no `model`. It still decodes.
    let mut json = serde_json::to_value(&signed_task).unwrap();
    let object = json.as_object_mut().unwrap();
    assert!(object.remove("vendor").is_some() && object.remove("model").is_some());
    let old: ScoutTask = serde_json::from_value(json).unwrap();
    assert_eq!((old.vendor.as_str(), old.model.as_str()), ("", ""));
    let result = h.run_as_is(old).await.unwrap();
    refused(&result, "the task names no vendor and model", &marker, &server);
}

#[tokio::test]
async fn artifacts_other_than_the_signed_ones_are_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let signed_fw = served(&server, "fw.bin", b"genuine");
    let t = task(&server, &script, vec![served(&server, "fw.bin", b"other image")]);
    let mut manifest = manifest_of(&t);
    manifest.artifacts = vec![(signed_fw.file_name, signed_fw.sha256)];
    let result = h.run_as_is(signed_with(t, &manifest, &signing_key())).await.unwrap();
    refused(&result, "artifacts differ from the signed ones", &marker, &server);
    assert_eq!(server.hits("fw.bin"), 0);
}

#[tokio::test]
async fn a_signature_by_another_key_is_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let t = task(&server, &script, vec![]);
    let manifest = manifest_of(&t);
    let other = ed25519_dalek::SigningKey::from_bytes(&[12; 32]);
    let result = h.run_as_is(signed_with(t, &manifest, &other)).await.unwrap();
    refused(&result, "does not verify with trusted key", &marker, &server);
}

#[tokio::test]
async fn missing_or_malformed_signatures_are_refused() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = marker_script(&h);
    let unsigned = task(&server, &script, vec![]);
    refused(&h.run_as_is(unsigned.clone()).await.unwrap(), "not signed", &marker, &server);

    // Each case its own task id: Scout reports a task id's recorded result instead of rerunning it.
    let unsigned = |id: &str| ScoutTask { upgrade_task_id: id.to_string(), ..unsigned.clone() };
    let mut no_sig = signed(unsigned("no-sig"));
    no_sig.signature = None;
    refused(&h.run_as_is(no_sig).await.unwrap(), "not signed", &marker, &server);

    let mut bad: ScoutTask = signed(unsigned("bad-sig"));
    bad.signature = Some("bm90IGEgc2lnbmF0dXJl".into());
    refused(&h.run_as_is(bad).await.unwrap(), "malformed", &marker, &server);

    let mut edited = signed(unsigned("edited"));
    edited.manifest = edited.manifest.map(|m| m.replace("20\n", "21\n"));
    refused(&h.run_as_is(edited).await.unwrap(), "does not verify", &marker, &server);
}

#[tokio::test]
async fn a_scout_without_a_key_refuses_unless_unsigned_is_allowed() {
    let server = FileServer::start().await;
    let keyless = Harness::with_trust(None, false);
    let (script, marker) = marker_script(&keyless);
    let result = keyless.run_as_is(signed(task(&server, &script, vec![]))).await.unwrap();
    refused(&result, "no trusted signing key", &marker, &server);

    let server = FileServer::start().await;
    let dev = Harness::with_trust(None, true);
    let (script, marker) = marker_script(&dev);
    let result = dev.run_as_is(task(&server, &script, vec![])).await.unwrap();
    assert!(result.success, "{result:?}");
    assert!(marker.exists());

    // A trusted key wins over allow_unsigned.
    let trusted = TrustedKey::from_bytes(signing_key().verifying_key().as_bytes()).unwrap();
    let server = FileServer::start().await;
    let strict = Harness::with_trust(Some(trusted), true);
    let (script, marker) = marker_script(&strict);
    refused(&strict.run_as_is(task(&server, &script, vec![])).await.unwrap(), "not signed", &marker, &server);
}
