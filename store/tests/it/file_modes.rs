//! Files holding secrets warn when others can read them: an existing SQLite site database (and
//! its WAL) with group/other permissions, and a site key file readable by group or others.

use std::io::Write;
use std::os::unix::fs::PermissionsExt as _;
use std::sync::{Arc, Mutex};

use hostfw_store::{SiteKey, Store};

/// Captures what `tracing` writes while the returned guard lives (this thread only).
fn capture() -> (Arc<Mutex<Vec<u8>>>, tracing::subscriber::DefaultGuard) {
    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = Sink(buf.clone());
    let subscriber = tracing_subscriber::fmt().with_writer(move || sink.clone()).with_ansi(false).finish();
    (buf, tracing::subscriber::set_default(subscriber))
}

fn text(buf: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap()).into_owned()
}

#[tokio::test]
async fn a_world_readable_sqlite_database_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.db");
    let url = format!("sqlite://{}", path.display());
    Store::connect(&url).await.unwrap().close().await;

    let (logs, _guard) = capture();
    Store::connect(&url).await.unwrap().close().await;
    assert!(!text(&logs).contains("readable by group or others"), "0600 file warned: {}", text(&logs));

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    Store::connect(&url).await.unwrap().close().await;
    let logs = text(&logs);
    assert!(logs.contains("WARN") && logs.contains("readable by group or others"), "{logs}");
    assert!(logs.contains(&path.display().to_string()) && logs.contains("644"), "{logs}");
}

#[test]
fn a_shared_key_file_is_used_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("site.key");
    SiteKey::from_bytes([4; 32]).write_new_file(&file).unwrap();
    let (logs, _guard) = capture();
    SiteKey::from_file(&file).unwrap();
    assert!(!text(&logs).contains("chmod 600"), "{}", text(&logs));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let key = SiteKey::from_file(&file).unwrap();
    assert_eq!(key.id(), SiteKey::from_bytes([4; 32]).id());
    let logs = text(&logs);
    assert!(logs.contains("WARN") && logs.contains("site.key") && logs.contains("chmod 600"), "{logs}");
}
