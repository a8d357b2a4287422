//! The Core-local script lock: before a script runs for a machine's component, make sure no earlier
//! run of it is still going (one orphaned by a worker that was SIGKILLed or restarted by systemd:
//! `kill_on_drop` and the group kill never ran, and the script lives on in its own process group).
//!
//! Owns the process identity of a run (pid, its start time in clock ticks from `/proc/<pid>/stat`
//! field 22, the host's boot id, the worker's host name), the verdict on an earlier run (alive,
//! gone, or not checkable from here), and the claim-or-wait loop. The lock row itself lives in the
//! site database (`hostfw_store::ScriptLock`), so every worker of the site sees it.
//!
//! The verdict on an earlier run recorded by this host in this boot:
//! - its pid runs with the recorded start time (and is not a zombie): alive;
//! - its pid runs with another start time: the pid was reused. Linux frees a pid number only when
//!   no process and no process group uses it any more, so the script's whole group is gone;
//! - no process has its pid: gone, unless its process group still has members (a child the
//!   script left behind), which count as the run still going. Zombies count as gone.
//!
//! A run recorded by another host (or before its pid was recorded) cannot be checked from here:
//! the waiter waits until its worker releases the lock or the run's deadline passes. The deadline
//! holds even with that worker dead, because the script runs under coreutils `timeout`, which
//! kills the whole group at `script_timeout` plus [`HARD_TIMEOUT_MARGIN`] on its own.
//!
//! A run recorded by this host in an earlier boot is gone (the host restarted since).

use std::future::Future;
use std::time::{Duration, Instant};

use hostfw_store::{ScriptLock, Store, StoreError};

pub use crate::tunables::DEADLINE_GRACE;
pub use crate::tunables::HARD_TIMEOUT_MARGIN;
pub use crate::tunables::SCRIPT_POLL_EVERY as POLL_EVERY;
pub use crate::tunables::STALE_MARGIN;
use hostfw_script_runner::process::{boot_id, group_has_live_members};
/// `/proc` as the runner reads it (one reading for Scout and the Core-local route).
pub use hostfw_script_runner::process::{kill_group, proc_stat, ProcStat};

/// Who this worker is, as recorded in a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThisHost {
    pub name: String,
    pub boot_id: String,
}

impl ThisHost {
    /// Read the host name and boot id from `/proc` (Linux).
    pub fn read() -> ThisHost {
        let name =
            std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default();
        ThisHost { name, boot_id: boot_id() }
    }
}

/// What can be said about the run a lock records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its process (group) runs on this host.
    Alive { pid: u32 },
    /// It is no longer running; why we know.
    Gone(String),
    /// Cannot be checked from here; why.
    Unverifiable(String),
}

/// Judge the run `lock` records, from `here`.
pub fn judge(lock: &ScriptLock, here: &ThisHost) -> Verdict {
    if lock.worker_host != here.name {
        return Verdict::Unverifiable(format!("it runs on worker host {}, not on {}", lock.worker_host, here.name));
    }
    if lock.boot_id != here.boot_id {
        return Verdict::Gone("this host has rebooted since it started".to_string());
    }
    let Some(pid) = lock.pid.and_then(|p| u32::try_from(p).ok()) else {
        return Verdict::Unverifiable("its worker died before recording the script's process".to_string());
    };
    match proc_stat(pid) {
        Some(stat) if !stat.zombie && lock.pid_start_ticks == Some(stat.start_ticks as i64) => Verdict::Alive { pid },
        Some(stat) if !stat.zombie => {
            Verdict::Gone(format!("pid {pid} now belongs to another process (started at tick {})", stat.start_ticks))
        }
        _ if group_has_live_members(pid) => Verdict::Alive { pid },
        _ => Verdict::Gone(format!("process {pid} and its group have exited")),
    }
}

/// One line naming the run a lock records.
pub fn describe(lock: &ScriptLock) -> String {
    let started = hostfw_model::rfc3339_utc(lock.started_at_ms);
    let pid = lock.pid.map_or_else(|| "pid not recorded".to_string(), |p| format!("pid {p}"));
    format!("an earlier run of {} ({pid} on worker host {}, started {started})", lock.script, lock.worker_host)
}

/// How a claim ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The lock is ours: run the script.
    Claimed,
    /// An earlier run held it. It is over now (ended, killed, or past its deadline) and its lock
    /// was removed, but its outcome is unknown: do not run again, let the inventory decide. The
    /// text says what was found and done.
    EarlierRun { report: String, killed: bool },
}

/// Why a claim did not end.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("cancelled while waiting for an earlier run of the script")]
    Cancelled,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a waiter behaves.
#[derive(Debug, Clone)]
pub struct WaitPolicy {
    /// `host_reprovision.script_orphan_wait`: after this long, an earlier run still alive on this
    /// host is killed.
    pub orphan_wait: Duration,
    pub poll: Duration,
    /// An earlier run that is gone and whose deadline (so also its end) came before this instant
    /// (unix ms) ended before the caller's view of the host was taken: its lock is just stale,
    /// and is taken over with no report. The script activity passes its scheduled time minus
    /// [`STALE_MARGIN`]; `i64::MIN` never takes over silently.
    pub stale_before_ms: i64,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Claim `lock` (its machine and component). If an earlier run holds it, wait (heartbeating
/// through `heartbeat`, stopped by `cancelled`) until that run is over: it ends, its worker
/// releases the lock, it reaches its deadline, or (alive on this host) it has run
/// `policy.orphan_wait` past the start of the wait and is killed. Then its lock is removed and
/// [`Claim::EarlierRun`] says what happened; the caller must not start the script.
pub async fn claim_or_wait<H, F>(
    store: &Store,
    lock: &ScriptLock,
    here: &ThisHost,
    policy: &WaitPolicy,
    mut heartbeat: H,
    cancelled: impl Future<Output = ()>,
) -> Result<Claim, ClaimError>
where
    H: FnMut(String) -> F,
    F: Future<Output = ()>,
{
    let Some(mut earlier) = store.script_lock_claim(lock).await? else { return Ok(Claim::Claimed) };
    tokio::pin!(cancelled);
    let began = Instant::now();
    let mut killed: Option<String> = None;
    tracing::warn!(machine_id = %lock.machine_id, component = %lock.component, "{} holds the script lock; checking it", describe(&earlier));
    loop {
        let waited = began.elapsed().as_secs();
        match store.script_lock_get(&lock.machine_id, &lock.component).await? {
            None => {
                let report = format!("{} was released by its worker after a {waited} s wait", describe(&earlier));
                return Ok(Claim::EarlierRun { report, killed: killed.is_some() });
            }
            Some(current) if current.holder != earlier.holder => earlier = current,
            Some(_) => {}
        }
        let over = match judge(&earlier, here) {
            Verdict::Gone(why) if killed.is_none() && earlier.deadline_ms < policy.stale_before_ms => {
                tracing::info!(machine_id = %lock.machine_id, component = %lock.component,
                    "{} ended long before this run was scheduled ({why}); taking over its stale lock", describe(&earlier));
                store.script_lock_release(&earlier.machine_id, &earlier.component, &earlier.holder).await?;
                match store.script_lock_claim(lock).await? {
                    None => return Ok(Claim::Claimed),
                    Some(next) => earlier = next,
                }
                continue;
            }
            Verdict::Gone(why) => Some(why),
            Verdict::Alive { pid } => {
                let past_deadline = now_ms() >= earlier.deadline_ms;
                if killed.is_none() && (began.elapsed() >= policy.orphan_wait || past_deadline) {
                    let why = if past_deadline {
                        "its deadline passed".to_string()
                    } else {
                        format!("it was still running after script_orphan_wait ({} s)", policy.orphan_wait.as_secs())
                    };
                    tracing::warn!(machine_id = %lock.machine_id, component = %lock.component, pid,
                        "{}: {why}; killing its process group", describe(&earlier));
                    kill_group(pid);
                    killed = Some(why);
                }
                None
            }
            Verdict::Unverifiable(why) => (now_ms() >= earlier.deadline_ms + DEADLINE_GRACE.as_millis() as i64)
                .then(|| format!("{why}; its deadline has passed, by which its own timeout killed it")),
        };
        if let Some(why) = over {
            store.script_lock_release(&earlier.machine_id, &earlier.component, &earlier.holder).await?;
            let action = match &killed {
                Some(reason) => format!("{reason}, so its process group was killed after a {waited} s wait"),
                None => format!("waited {waited} s"),
            };
            let report = format!("{} is over ({why}); {action}", describe(&earlier));
            return Ok(Claim::EarlierRun { report, killed: killed.is_some() });
        }
        heartbeat(format!("waiting for {} to end ({waited} s)", describe(&earlier))).await;
        tokio::select! {
            _ = tokio::time::sleep(policy.poll) => {}
            _ = &mut cancelled => return Err(ClaimError::Cancelled),
        }
    }
}
