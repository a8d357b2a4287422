//! The script's life: killed with its whole process group at the execution timeout, killed when
//! the activity is cancelled, heartbeats while it runs.

use crate::common;

use std::time::{Duration, Instant};

use common::{process_gone, read_pid, task, wait_until, FileServer, Harness};
use temporalio_common::ActivityError;
use temporalio_sdk::testing::ActivityEnvironmentError;

/// A script that records its own pid and its background child's, then waits on a long sleep.
fn sleeper(h: &Harness) -> (String, std::path::PathBuf, std::path::PathBuf) {
    let sh_pid = h.marker("sh.pid");
    let child_pid = h.marker("child.pid");
    let script = format!(
        "echo started\necho $$ > '{}.tmp'; mv '{0}.tmp' '{0}'\nsleep 30 &\necho $! > '{1}.tmp'; mv '{1}.tmp' '{1}'\nwait\n",
        sh_pid.display(),
        child_pid.display()
    );
    (script, sh_pid, child_pid)
}

#[tokio::test]
async fn script_is_killed_at_the_timeout_with_its_children() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, sh_pid, child_pid) = sleeper(&h);
    let mut t = task(&server, &script, vec![]);
    t.execution_timeout_secs = 1;
    let start = Instant::now();
    let result = h.run(t).await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(8), "took {:?}", start.elapsed());
    assert!(!result.success);
    assert_eq!(result.exit_code, None);
    assert_eq!(result.error.as_deref(), Some("timed out after 1 s"));
    assert_eq!(result.stdout, "started\n");
    let (sh, child) = (read_pid(&sh_pid), read_pid(&child_pid));
    wait_until("the script and its child to die", Duration::from_secs(5), || process_gone(sh) && process_gone(child))
        .await;
    assert!(h.work_root_is_empty());
    let heartbeats = h.heartbeats.lock().unwrap().clone();
    assert!(heartbeats.iter().any(|p| p == "running upgrade.sh"), "heartbeats: {heartbeats:?}");
}

#[tokio::test]
async fn cancellation_kills_the_script_and_reports_cancelled() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, sh_pid, child_pid) = sleeper(&h);
    let t = task(&server, &script, vec![]);
    let start = Instant::now();
    let canceller = async {
        wait_until("the script to start", Duration::from_secs(10), || child_pid.exists()).await;
        h.env.cancel();
    };
    let (result, ()) = tokio::join!(h.run(t), canceller);
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    match result {
        Err(ActivityEnvironmentError::Activity(ActivityError::Cancelled { .. })) => {}
        other => panic!("expected Cancelled, got {other:?}"),
    }
    let (sh, child) = (read_pid(&sh_pid), read_pid(&child_pid));
    wait_until("the script and its child to die", Duration::from_secs(5), || process_gone(sh) && process_gone(child))
        .await;
    assert!(h.work_root_is_empty(), "the working directory outlived the cancelled task");
}
