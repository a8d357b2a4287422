//! The agent's Temporal settings (`TEMPORAL_*`, e.g. an API key) never reach the script.
//! Alone in its own test binary because it sets a process environment variable.

#[path = "it/common/mod.rs"]
mod common;

use common::{task, FileServer, Harness};

#[tokio::test]
async fn temporal_settings_are_not_passed_to_the_script() {
    // Set before anything else runs in this process (no other test shares it).
    std::env::set_var("TEMPORAL_API_KEY", "secret-for-test");
    let server = FileServer::start().await;
    let h = Harness::new();
    let script = "echo \"key=${TEMPORAL_API_KEY:-unset}\"\necho \"path=${PATH:+set}\"\n";
    let result = h.run(task(&server, script, vec![])).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(result.stdout, "key=unset\npath=set\n");
}
