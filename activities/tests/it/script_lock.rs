//! The Core-local script lock (`script_lock`), on a real SQLite site database with real
//! processes: a free lock is claimed; a lock whose process is dead, whose pid was reused, or whose
//! host rebooted is taken over at once; a live earlier run is waited for (and killed after
//! `script_orphan_wait`); a run on another worker host is waited for until it is released or
//! past its deadline; a waiter can be cancelled.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hostfw_activities::script_lock::{
    claim_or_wait, judge, proc_stat, Claim, ClaimError, ThisHost, Verdict, WaitPolicy, DEADLINE_GRACE,
};
use hostfw_store::{ScriptLock, Store};
use tokio::process::{Child, Command};

struct Db {
    store: Store,
    _dir: tempfile::TempDir,
}

async fn db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("site.db").display())).await.unwrap();
    Db { store, _dir: dir }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A lock for m1/uefi as a run on this host, with no process recorded yet.
fn lock(holder: &str, here: &ThisHost) -> ScriptLock {
    ScriptLock {
        machine_id: "m1".into(),
        component: "uefi".into(),
        holder: holder.into(),
        script: "scripts/flash.sh".into(),
        worker_host: here.name.clone(),
        boot_id: here.boot_id.clone(),
        pid: None,
        pid_start_ticks: None,
        started_at_ms: now_ms(),
        deadline_ms: now_ms() + 3_600_000,
    }
}

/// `sleep 60` in its own process group, as a script runs.
fn sleeper() -> Child {
    Command::new("sleep").arg("60").stdin(Stdio::null()).process_group(0).kill_on_drop(true).spawn().unwrap()
}

/// A lock recording `child` as the earlier run.
fn held_by(child: &Child, here: &ThisHost) -> ScriptLock {
    let pid = child.id().unwrap();
    let mut l = lock("earlier", here);
    l.pid = Some(i64::from(pid));
    l.pid_start_ticks = Some(proc_stat(pid).unwrap().start_ticks as i64);
    l
}

fn policy(orphan_wait: Duration) -> WaitPolicy {
    WaitPolicy { orphan_wait, poll: Duration::from_millis(100), stale_before_ms: i64::MIN }
}

/// Record `earlier`'s lock, then claim for run `b` (waiting up to a minute): the earlier run is
/// taken over at once; its report.
async fn taken_over(db: &Db, earlier: &ScriptLock, here: &ThisHost) -> String {
    db.store.script_lock_claim(earlier).await.unwrap();
    let beats = Beats::default();
    let got = claim_or_wait(&db.store, &lock("b", here), here, &policy(Duration::from_secs(60)), beats.sink(), never())
        .await
        .unwrap();
    let Claim::EarlierRun { report, .. } = got else { panic!("{got:?}") };
    report
}

/// Heartbeats a waiter sent, shared with the test.
#[derive(Clone, Default)]
struct Beats(Arc<Mutex<Vec<String>>>);

impl Beats {
    fn sink(&self) -> impl FnMut(String) -> std::future::Ready<()> + '_ {
        move |what| {
            self.0.lock().unwrap().push(what);
            std::future::ready(())
        }
    }
    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn never() -> std::future::Pending<()> {
    std::future::pending()
}

#[tokio::test]
async fn a_free_lock_is_claimed_and_a_second_claim_finds_it() {
    let db = db().await;
    let here = ThisHost::read();
    assert!(!here.name.is_empty() && !here.boot_id.is_empty(), "{here:?}");
    let beats = Beats::default();
    let got =
        claim_or_wait(&db.store, &lock("a", &here), &here, &policy(Duration::from_secs(60)), beats.sink(), never())
            .await
            .unwrap();
    assert_eq!(got, Claim::Claimed);
    assert_eq!(db.store.script_lock_get("m1", "uefi").await.unwrap().unwrap().holder, "a");
}

#[tokio::test]
async fn a_stale_lock_whose_process_died_is_taken_over_without_waiting() {
    let db = db().await;
    let here = ThisHost::read();
    let mut child = sleeper();
    let earlier = held_by(&child, &here);
    child.kill().await.unwrap(); // killed and reaped
    assert!(matches!(judge(&earlier, &here), Verdict::Gone(_)));
    db.store.script_lock_claim(&earlier).await.unwrap();

    let beats = Beats::default();
    let started = Instant::now();
    let got =
        claim_or_wait(&db.store, &lock("b", &here), &here, &policy(Duration::from_secs(60)), beats.sink(), never())
            .await
            .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "no wait for a dead process");
    let Claim::EarlierRun { report, killed } = got else { panic!("{got:?}") };
    assert!(!killed);
    assert!(report.contains("have exited") && report.contains("scripts/flash.sh"), "{report}");
    assert_eq!(db.store.script_lock_get("m1", "uefi").await.unwrap(), None, "the stale lock was removed");
    // The next run claims it.
    let got =
        claim_or_wait(&db.store, &lock("c", &here), &here, &policy(Duration::from_secs(60)), beats.sink(), never())
            .await
            .unwrap();
    assert_eq!(got, Claim::Claimed);
}

#[tokio::test]
async fn a_stale_lock_of_a_run_that_ended_before_the_caller_looked_is_just_taken() {
    let db = db().await;
    let here = ThisHost::read();
    let mut child = sleeper();
    let mut earlier = held_by(&child, &here);
    child.kill().await.unwrap();
    earlier.deadline_ms = now_ms() - 10 * 60_000;
    db.store.script_lock_claim(&earlier).await.unwrap();
    let wait = WaitPolicy { stale_before_ms: now_ms() - 5 * 60_000, ..policy(Duration::from_secs(60)) };
    let beats = Beats::default();
    let got = claim_or_wait(&db.store, &lock("b", &here), &here, &wait, beats.sink(), never()).await.unwrap();
    assert_eq!(got, Claim::Claimed, "a run over before the caller's inventory read does not stop a rerun");
    assert_eq!(db.store.script_lock_get("m1", "uefi").await.unwrap().unwrap().holder, "b");
}

#[tokio::test]
async fn a_lock_whose_pid_now_belongs_to_another_process_is_taken_over() {
    let db = db().await;
    let here = ThisHost::read();
    // The test process itself stands for the process that got the recorded pid.
    let me = std::process::id();
    let mut earlier = lock("earlier", &here);
    earlier.pid = Some(i64::from(me));
    earlier.pid_start_ticks = Some(proc_stat(me).unwrap().start_ticks as i64 + 1);
    let report = taken_over(&db, &earlier, &here).await;
    assert!(report.contains("now belongs to another process"), "{report}");
}

#[tokio::test]
async fn a_lock_from_before_a_reboot_is_taken_over() {
    let db = db().await;
    let here = ThisHost::read();
    let child = sleeper();
    let mut earlier = held_by(&child, &here);
    earlier.boot_id = "an-earlier-boot".into();
    let report = taken_over(&db, &earlier, &here).await;
    assert!(report.contains("rebooted"), "{report}");
}

#[tokio::test]
async fn a_live_earlier_run_is_waited_for_until_it_ends() {
    let db = db().await;
    let here = ThisHost::read();
    let mut child = sleeper();
    db.store.script_lock_claim(&held_by(&child, &here)).await.unwrap();
    let beats = Beats::default();
    let (mine, wait) = (lock("b", &here), policy(Duration::from_secs(60)));
    let claim = claim_or_wait(&db.store, &mine, &here, &wait, beats.sink(), never());
    let ender = async {
        until("the waiter to heartbeat three times", || beats.count() >= 3).await;
        assert!(proc_stat(child.id().unwrap()).is_some(), "the earlier run is still alive");
        let ended_at = Instant::now();
        child.kill().await.unwrap();
        ended_at
    };
    let (got, ended_at) = tokio::join!(claim, ender);
    let Claim::EarlierRun { report, killed } = got.unwrap() else { panic!("not an earlier run") };
    assert!(!killed, "the waiter did not kill it: {report}");
    assert!(report.contains("waited"), "{report}");
    assert!(ended_at.elapsed() < Duration::from_secs(2), "noticed promptly");
    assert!(beats.0.lock().unwrap()[0].contains("waiting for an earlier run of scripts/flash.sh"), "{:?}", beats.0);
    assert_eq!(db.store.script_lock_get("m1", "uefi").await.unwrap(), None);
}

#[tokio::test]
async fn a_live_earlier_run_is_killed_after_the_orphan_wait() {
    let db = db().await;
    let here = ThisHost::read();
    let mut child = sleeper();
    let pid = child.id().unwrap();
    db.store.script_lock_claim(&held_by(&child, &here)).await.unwrap();
    let beats = Beats::default();
    let started = Instant::now();
    let (mine, wait) = (lock("b", &here), policy(Duration::from_secs(1)));
    let claim = claim_or_wait(&db.store, &mine, &here, &wait, beats.sink(), never());
    // The test is the earlier run's parent: reap it when it dies, as init does for an orphan.
    let (got, status) = tokio::join!(claim, child.wait());
    let Claim::EarlierRun { report, killed } = got.unwrap() else { panic!("not an earlier run") };
    assert!(killed, "{report}");
    assert!(report.contains("process group was killed") && report.contains("script_orphan_wait"), "{report}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.unwrap().signal(), Some(9), "SIGKILLed");
    assert!(started.elapsed() >= Duration::from_secs(1) && started.elapsed() < Duration::from_secs(10));
    assert!(proc_stat(pid).is_none());
}

#[tokio::test]
async fn a_run_on_another_host_is_waited_for_until_released() {
    let db = db().await;
    let here = ThisHost::read();
    let mut earlier = lock("elsewhere", &here);
    earlier.worker_host = "another-worker".into();
    earlier.pid = Some(1);
    db.store.script_lock_claim(&earlier).await.unwrap();
    let beats = Beats::default();
    let (mine, wait) = (lock("b", &here), policy(Duration::from_millis(1)));
    let claim = claim_or_wait(&db.store, &mine, &here, &wait, beats.sink(), never());
    let releaser = async {
        until("the waiter to heartbeat three times", || beats.count() >= 3).await;
        assert!(db.store.script_lock_release("m1", "uefi", "elsewhere").await.unwrap());
    };
    let (got, ()) = tokio::join!(claim, releaser);
    let Claim::EarlierRun { report, killed } = got.unwrap() else { panic!("not an earlier run") };
    assert!(!killed, "nothing on another host is killed from here");
    assert!(report.contains("released by its worker") && report.contains("another-worker"), "{report}");
}

#[tokio::test]
async fn a_run_on_another_host_is_over_at_its_deadline() {
    let db = db().await;
    let here = ThisHost::read();
    let mut earlier = lock("elsewhere", &here);
    earlier.worker_host = "another-worker".into();
    earlier.deadline_ms = now_ms() + 500;
    db.store.script_lock_claim(&earlier).await.unwrap();
    let beats = Beats::default();
    let started = Instant::now();
    let got =
        claim_or_wait(&db.store, &lock("b", &here), &here, &policy(Duration::from_millis(1)), beats.sink(), never())
            .await
            .unwrap();
    let Claim::EarlierRun { report, .. } = got else { panic!("{got:?}") };
    assert!(report.contains("deadline has passed"), "{report}");
    assert!(started.elapsed() >= DEADLINE_GRACE, "waited past the deadline and its grace: {:?}", started.elapsed());
}

#[tokio::test]
async fn a_waiter_is_cancelled() {
    let db = db().await;
    let here = ThisHost::read();
    let child = sleeper();
    db.store.script_lock_claim(&held_by(&child, &here)).await.unwrap();
    let beats = Beats::default();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let cancelled = async {
        let _ = rx.await;
    };
    let (mine, wait) = (lock("b", &here), policy(Duration::from_secs(60)));
    let claim = claim_or_wait(&db.store, &mine, &here, &wait, beats.sink(), cancelled);
    let canceller = async {
        until("the waiter to heartbeat", || beats.count() >= 1).await;
        tx.send(()).unwrap();
    };
    let (got, ()) = tokio::join!(claim, canceller);
    assert!(matches!(got, Err(ClaimError::Cancelled)), "{got:?}");
    assert!(db.store.script_lock_get("m1", "uefi").await.unwrap().is_some(), "the live run keeps its lock");
}

#[tokio::test]
async fn an_earlier_run_that_is_a_zombie_is_over() {
    // An orphan's exit is reaped by init, which a container may not run: a zombie is over.
    use std::os::unix::process::CommandExt;
    let db = db().await;
    let here = ThisHost::read();
    let mut child = std::process::Command::new("sleep").arg("60").process_group(0).spawn().unwrap();
    let pid = child.id();
    let mut earlier = lock("earlier", &here);
    earlier.pid = Some(i64::from(pid));
    earlier.pid_start_ticks = Some(proc_stat(pid).unwrap().start_ticks as i64);
    db.store.script_lock_claim(&earlier).await.unwrap();
    child.kill().unwrap(); // not reaped: a zombie
    until("the process to be a zombie", || proc_stat(pid).is_some_and(|s| s.zombie)).await;
    let beats = Beats::default();
    let got =
        claim_or_wait(&db.store, &lock("b", &here), &here, &policy(Duration::from_secs(60)), beats.sink(), never())
            .await
            .unwrap();
    assert!(matches!(got, Claim::EarlierRun { killed: false, .. }), "{got:?}");
    child.wait().unwrap();
}
