//! Each upgrade task id runs its script at most once (issue 11, finding 9): Temporal retries the
//! Scout activity, the script is not idempotent. A repeated task reports the first run's result;
//! a second attempt while the first runs waits for it; a task left by an agent process that died
//! is reported as interrupted (after its script ends), never as success and never run again;
//! only a task whose script had surely not started runs.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::{task, wait_until, FileServer, Harness};
use hostfw_scout::ledger::{Ledger, TaskRecord};
use hostfw_scout::process::ProcessId;
use temporalio_common::ActivityError;
use temporalio_sdk::testing::ActivityEnvironmentError;

/// A script that appends a line to `marker` for each run, prints, then ends with `exit`.
fn counting(h: &Harness, exit: i32, pause: &str) -> (String, std::path::PathBuf) {
    let marker = h.marker("runs");
    let script =
        format!("echo \"ran $$\" >> '{}'\n{pause}\necho \"flashed\"\necho oops >&2\nexit {exit}\n", marker.display());
    (script, marker)
}

fn runs(marker: &std::path::Path) -> usize {
    std::fs::read_to_string(marker).map(|s| s.lines().count()).unwrap_or(0)
}

#[tokio::test]
async fn the_same_task_twice_runs_the_script_once_and_reports_the_first_result_both_times() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = counting(&h, 3, "");
    let t = task(&server, &script, vec![]);
    let first = h.run(t.clone()).await.unwrap();
    assert_eq!((first.success, first.exit_code), (false, Some(3)), "{first:?}");
    assert_eq!(first.stdout, "flashed\n");
    let second = h.run(t.clone()).await.unwrap();
    assert_eq!(second, first, "the retry reports the first run's result");
    assert_eq!(runs(&marker), 1, "the script ran once");
    // So does a new agent process on the same state directory (Scout restarted).
    let restarted = Harness::with_state_dir(&h.state_dir);
    assert_eq!(restarted.run(t).await.unwrap(), first);
    assert_eq!(runs(&marker), 1, "the script ran once");
    assert_eq!(server.hits("upgrade.sh"), 1, "nothing downloaded again");
}

#[tokio::test]
async fn a_second_attempt_while_the_first_runs_waits_for_its_result() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = counting(&h, 0, "sleep 1");
    let t = task(&server, &script, vec![]);
    let (a, b) = tokio::join!(h.run(t.clone()), h.run(t));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(a.success, "{a:?}");
    assert_eq!(a, b, "both attempts report the one run");
    assert_eq!(runs(&marker), 1, "the script ran once");
}

#[tokio::test]
async fn a_task_left_by_a_dead_agent_is_reported_interrupted_after_its_script_ends_and_not_rerun() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = counting(&h, 0, "");
    let t = task(&server, &script, vec![]);
    // What a killed agent leaves: a record of the task with the script's process, which (in its
    // own process group) outlived the agent.
    let mut orphan = tokio::process::Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let orphan_pid = orphan.id().unwrap();
    let dead_agent = ProcessId { pid: 999_999_999, start_ticks: 1, boot_id: "gone".into() };
    Ledger::new(&h.state_dir)
        .write(&TaskRecord {
            task_id: t.upgrade_task_id.clone(),
            agent: Some(dead_agent),
            agent_instance: "an-agent-that-died".into(),
            spawning: true,
            script: ProcessId::of(orphan_pid),
            deadline_ms: None,
            result: None,
        })
        .unwrap();

    let ender = async {
        wait_until("the retry to wait for the orphan", Duration::from_secs(10), || {
            h.heartbeats
                .lock()
                .unwrap()
                .iter()
                .any(|p| p.contains(&format!("waiting for the script (pid {orphan_pid})")))
        })
        .await;
        orphan.kill().await.unwrap();
    };
    let (result, ()) = tokio::join!(h.run(t.clone()), ender);
    let result = result.unwrap();
    assert!(!result.success, "an interrupted task is never reported as success: {result:?}");
    assert_eq!(result.exit_code, None);
    let error = result.error.clone().unwrap();
    assert!(error.starts_with("interrupted:") && error.contains(&format!("(pid {orphan_pid}) ended after")), "{error}");
    assert!(error.contains("inventory decides"), "{error}");
    assert_eq!(runs(&marker), 0, "the script was not run again");
    assert_eq!(server.hits("upgrade.sh"), 0, "nothing downloaded");
    // The verdict is recorded: another retry reports the same.
    assert_eq!(h.run(t).await.unwrap(), result);
}

#[tokio::test]
async fn a_task_whose_agent_died_before_its_script_started_runs() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = counting(&h, 0, "");
    let t = task(&server, &script, vec![]);
    Ledger::new(&h.state_dir)
        .write(&TaskRecord {
            task_id: t.upgrade_task_id.clone(),
            agent: None,
            agent_instance: "an-agent-that-died-while-downloading".into(),
            spawning: false,
            script: None,
            deadline_ms: None,
            result: None,
        })
        .unwrap();
    let result = h.run(t).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(runs(&marker), 1);
}

#[tokio::test]
async fn a_task_cancelled_mid_script_is_not_rerun_by_its_retry() {
    let server = FileServer::start().await;
    let h = Harness::new();
    let (script, marker) = counting(&h, 0, "sleep 30");
    let t = task(&server, &script, vec![]);
    let canceller = async {
        wait_until("the script to start", Duration::from_secs(10), || runs(&marker) == 1).await;
        h.env.cancel();
    };
    let (first, ()) = tokio::join!(h.run(t.clone()), canceller);
    assert!(matches!(first, Err(ActivityEnvironmentError::Activity(ActivityError::Cancelled { .. }))), "{first:?}");
    // The retry, on the restarted agent.
    let retry = Harness::with_state_dir(&h.state_dir).run(t).await.unwrap();
    assert!(!retry.success);
    assert!(retry.error.unwrap().contains("cancelled while the script ran"));
    assert_eq!(runs(&marker), 1, "the script ran once");
}
