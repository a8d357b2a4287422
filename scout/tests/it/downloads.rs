//! Downloads and digests: a mismatch on the script or any artifact means the script never runs;
//! transient HTTP failures are retried, permanent ones are not.

use crate::common;

use common::{served, sha256_hex, task, FileServer, Harness};

fn marker_script(marker: &std::path::Path) -> String {
    format!("touch '{}'\n", marker.display())
}

#[tokio::test]
async fn script_digest_mismatch_never_runs_the_script() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let marker = h.marker("script-ran");
    let script = marker_script(&marker);
    let mut t = task(&server, &script, vec![]);
    let expected = sha256_hex(b"some other script");
    t.script.sha256 = expected.clone();
    let result = h.run(t).await.unwrap();
    assert!(!result.success);
    assert_eq!(result.exit_code, None);
    assert_eq!(
        result.error.as_deref(),
        Some(
            format!("sha256 mismatch for upgrade.sh: expected {expected}, got {}", sha256_hex(script.as_bytes()))
                .as_str()
        )
    );
    assert!(!marker.exists(), "the script ran despite a digest mismatch");
    assert!(h.work_root_is_empty());
}

#[tokio::test]
async fn artifact_digest_mismatch_never_runs_the_script() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let marker = h.marker("script-ran");
    let good = served(&server, "a.bin", b"first artifact");
    let mut bad = served(&server, "b.bin", b"tampered image");
    let expected = sha256_hex(b"genuine image");
    bad.sha256 = expected.clone();
    let result = h.run(task(&server, &marker_script(&marker), vec![good, bad])).await.unwrap();
    assert!(!result.success);
    assert_eq!(result.exit_code, None);
    assert_eq!(
        result.error.as_deref(),
        Some(format!("sha256 mismatch for b.bin: expected {expected}, got {}", sha256_hex(b"tampered image")).as_str())
    );
    assert!(!marker.exists(), "the script ran despite an artifact digest mismatch");
    assert!(h.work_root_is_empty());
}

#[tokio::test]
async fn uppercase_expected_digest_matches() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let mut t = task(&server, "exit 0\n", vec![]);
    t.script.sha256 = t.script.sha256.to_uppercase();
    let result = h.run(t).await.unwrap();
    assert!(result.success, "{result:?}");
}

#[tokio::test]
async fn transient_503_is_retried_then_succeeds() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let fw = served(&server, "fw.bin", b"IMAGE");
    server.fail_next("upgrade.sh", 1);
    server.fail_next("fw.bin", 2);
    let result = h.run(task(&server, "cat \"$DOWNLOAD_DIR/fw.bin\"\n", vec![fw])).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(result.stdout, "IMAGE");
    assert_eq!(server.hits("upgrade.sh"), 2);
    assert_eq!(server.hits("fw.bin"), 3);
}

#[tokio::test]
async fn persistent_503_fails_after_three_tries() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let marker = h.marker("script-ran");
    let t = task(&server, &marker_script(&marker), vec![]);
    server.fail_next("upgrade.sh", 10);
    let result = h.run(t).await.unwrap();
    assert!(!result.success);
    let error = result.error.unwrap();
    assert!(error.starts_with("download of upgrade.sh from http://"), "{error}");
    assert!(error.ends_with("failed after 3 tries: HTTP 503 Service Unavailable"), "{error}");
    assert_eq!(server.hits("upgrade.sh"), 3);
    assert!(!marker.exists());
}

#[tokio::test]
async fn not_found_is_not_retried() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let mut missing = served(&server, "fw.bin", b"IMAGE");
    missing.url = format!("{}/nope.bin", server.base);
    let result = h.run(task(&server, "exit 0\n", vec![missing])).await.unwrap();
    assert!(!result.success);
    assert!(result.error.unwrap().ends_with("failed after 1 tries: HTTP 404 Not Found"));
    assert_eq!(server.hits("nope.bin"), 1);
}

#[tokio::test]
async fn unreachable_server_is_a_download_failure_not_an_agent_error() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let mut t = task(&server, "exit 0\n", vec![]);
    // Port 9 (discard) on localhost: connection refused.
    t.script.url = "http://127.0.0.1:9/upgrade.sh".to_string();
    let result = h.run(t).await.unwrap();
    assert!(!result.success);
    assert!(result.error.unwrap().contains("failed after 3 tries"));
}
