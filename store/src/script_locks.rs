//! The `script_locks` table: which Core-local script run holds a machine's component, and the
//! identity of its process, so a rerun never overlaps a script orphaned by a dead worker.
//!
//! Owns claiming, reading, recording the process of, and releasing a lock row, each guarded by the
//! holder token so a stale holder cannot release a lock someone else took over. It must not decide
//! whether a recorded process is still alive (the script activity does, on the host that ran it).

use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::Store;

/// One script run's claim on (machine, component).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptLock {
    pub machine_id: String,
    pub component: String,
    /// Unique per run: only this token releases the row or records its process.
    pub holder: String,
    /// The script path, for messages.
    pub script: String,
    /// Host name of the worker that started the script.
    pub worker_host: String,
    /// That host's boot id (`/proc/sys/kernel/random/boot_id`) when the script started.
    pub boot_id: String,
    /// The script's process (group leader); `None` between the claim and the spawn.
    pub pid: Option<i64>,
    /// Start time of `pid` in clock ticks after boot (`/proc/<pid>/stat` field 22).
    pub pid_start_ticks: Option<i64>,
    pub started_at_ms: i64,
    /// When the run is over at the latest: the script is killed by then even with its worker dead.
    pub deadline_ms: i64,
}

const COLUMNS: &str =
    "machine_id, component, holder, script, worker_host, boot_id, pid, pid_start_ticks, started_at_ms, deadline_ms";

fn from_row(r: &AnyRow) -> std::result::Result<ScriptLock, sqlx::Error> {
    Ok(ScriptLock {
        machine_id: r.try_get("machine_id")?,
        component: r.try_get("component")?,
        holder: r.try_get("holder")?,
        script: r.try_get("script")?,
        worker_host: r.try_get("worker_host")?,
        boot_id: r.try_get("boot_id")?,
        pid: r.try_get("pid")?,
        pid_start_ticks: r.try_get("pid_start_ticks")?,
        started_at_ms: r.try_get("started_at_ms")?,
        deadline_ms: r.try_get("deadline_ms")?,
    })
}

impl Store {
    /// Claim (machine, component) for `lock`. `None` when claimed; otherwise the lock that holds it.
    pub async fn script_lock_claim(&self, lock: &ScriptLock) -> Result<Option<ScriptLock>> {
        const OP: &str = "script_lock_claim";
        loop {
            let done = sqlx::query(&format!(
                "INSERT INTO script_locks ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                 ON CONFLICT (machine_id, component) DO NOTHING"
            ))
            .bind(&lock.machine_id)
            .bind(&lock.component)
            .bind(&lock.holder)
            .bind(&lock.script)
            .bind(&lock.worker_host)
            .bind(&lock.boot_id)
            .bind(lock.pid)
            .bind(lock.pid_start_ticks)
            .bind(lock.started_at_ms)
            .bind(lock.deadline_ms)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db(OP, &lock.machine_id))?;
            if done.rows_affected() == 1 {
                return Ok(None);
            }
            // Held: return the holder, unless it was released in between (then claim again).
            if let Some(held) = self.script_lock_get(&lock.machine_id, &lock.component).await? {
                return Ok(Some(held));
            }
        }
    }

    /// The lock on (machine, component), if any.
    pub async fn script_lock_get(&self, machine_id: &str, component: &str) -> Result<Option<ScriptLock>> {
        const OP: &str = "script_lock_get";
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM script_locks WHERE machine_id = $1 AND component = $2"))
            .bind(machine_id)
            .bind(component)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        row.as_ref().map(from_row).transpose().map_err(StoreError::db(OP, machine_id))
    }

    /// Record the process `holder` started. False when `holder` no longer holds the lock.
    pub async fn script_lock_set_process(
        &self,
        machine_id: &str,
        component: &str,
        holder: &str,
        pid: i64,
        pid_start_ticks: Option<i64>,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE script_locks SET pid = $1, pid_start_ticks = $2 WHERE machine_id = $3 AND component = $4 AND holder = $5",
        )
        .bind(pid)
        .bind(pid_start_ticks)
        .bind(machine_id)
        .bind(component)
        .bind(holder)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db("script_lock_set_process", machine_id))?;
        Ok(done.rows_affected() == 1)
    }

    /// Release `holder`'s lock on (machine, component). False when `holder` did not hold it.
    pub async fn script_lock_release(&self, machine_id: &str, component: &str, holder: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM script_locks WHERE machine_id = $1 AND component = $2 AND holder = $3")
            .bind(machine_id)
            .bind(component)
            .bind(holder)
            .execute(&self.writer)
            .await
            .map_err(StoreError::db("script_lock_release", machine_id))?;
        Ok(done.rows_affected() == 1)
    }
}
