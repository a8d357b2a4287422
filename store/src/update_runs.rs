//! Past update runs for window fit (migration 0014, `update_runs`): when a host's run ends well,
//! how long it took, keyed by vendor, model and component set; and the durations read back for
//! the scheduler.
//!
//! Owns the `update_runs` table. A run is recorded only from `Store::target_finish` (the restore),
//! in its transaction, from the run's own rows: its start is the state history's entry into
//! `HostReprovision`, moved later by the time the run spent waiting in `FailedFirmwareUpgrade`
//! (retry intervals are not work a window must hold: `finished_at_ms - started_at_ms` is the time
//! the run worked), its components are the `target_hosts` attempts made since. It must not
//! decide whether a host fits its window (`hostfw_model::gates::window_fit`).

use std::collections::BTreeMap;

use hostfw_model::gates::{UpdateDurations, WINDOW_FIT_RUNS_KEPT};
use hostfw_model::{ComponentType, HostState, HostSubstate};
use sqlx::{AnyConnection, Row};

use crate::error::{Result, StoreError};
use crate::Store;

/// History entries read back to find where the run began (a run writes a few dozen).
const HISTORY_SCAN: i64 = 2000;

/// Where a run began, and how long of it the host only waited for its next attempt.
struct RunStart {
    /// When `machine_id`'s current `HostReprovision` stretch began: the oldest entry of the newest
    /// unbroken run of `HostReprovision` entries (the restore's own entry, newer, is skipped).
    at_ms: i64,
    /// Time spent in `FailedFirmwareUpgrade` during the stretch (the retry interval and the
    /// record of the failure): each such entry lasts until the next entry.
    waited_ms: i64,
}

async fn run_start(conn: &mut AnyConnection, machine_id: &str) -> std::result::Result<Option<RunStart>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT state, substate, at_ms FROM state_history WHERE machine_id = $1 ORDER BY seq DESC LIMIT $2",
    )
    .bind(machine_id)
    .bind(HISTORY_SCAN)
    .fetch_all(&mut *conn)
    .await?;
    let updating = HostState::HostReprovision.to_string();
    let failed = HostSubstate::FailedFirmwareUpgrade.to_string();
    let mut start: Option<RunStart> = None;
    // The time of the entry after this one (rows come newest first).
    let mut next_at: Option<i64> = None;
    for row in rows {
        let state: String = row.try_get("state")?;
        let at: i64 = row.try_get("at_ms")?;
        match (state == updating, &mut start) {
            (true, start) => {
                let substate: Option<String> = row.try_get("substate")?;
                let waited = match (substate.as_deref() == Some(failed.as_str()), next_at) {
                    (true, Some(next)) => (next - at).max(0),
                    _ => 0,
                };
                let waited_ms = start.as_ref().map_or(0, |s| s.waited_ms) + waited;
                *start = Some(RunStart { at_ms: at, waited_ms });
            }
            (false, Some(_)) => break,
            (false, None) => {}
        }
        next_at = Some(at);
    }
    Ok(start)
}

/// Records `machine_id`'s run ending at `at_ms`, on `conn` (the restore's transaction, before its
/// attempts are closed). Nothing is recorded when the host never entered `HostReprovision`, made
/// no attempt since, or a failure stands on one of the run's attempts.
pub(crate) async fn record_run_in(
    conn: &mut AnyConnection,
    machine_id: &str,
    at_ms: i64,
) -> std::result::Result<(), sqlx::Error> {
    let Some(RunStart { at_ms: start, waited_ms }) = run_start(conn, machine_id).await? else { return Ok(()) };
    let attempts = sqlx::query(
        "SELECT vendor, model, component, failed_at_ms, attempted_at_ms, finished_at_ms FROM target_hosts \
         WHERE machine_id = $1 AND attempted_at_ms >= $2 ORDER BY component",
    )
    .bind(machine_id)
    .bind(start)
    .fetch_all(&mut *conn)
    .await?;
    let mut set: Vec<String> = Vec::new();
    let mut key: Option<(String, String)> = None;
    for row in &attempts {
        let attempted: i64 = row.try_get("attempted_at_ms")?;
        let failed = row.try_get::<Option<i64>, _>("failed_at_ms")?.is_some_and(|f| f >= attempted);
        let finished = row.try_get::<Option<i64>, _>("finished_at_ms")?.is_some_and(|f| f >= attempted);
        if failed || finished {
            return Ok(());
        }
        key.get_or_insert((row.try_get("vendor")?, row.try_get("model")?));
        set.push(row.try_get("component")?);
    }
    let Some((vendor, model)) = key else { return Ok(()) };
    set.sort();
    set.dedup();
    let components = set.join(",");
    sqlx::query(
        "INSERT INTO update_runs (machine_id, vendor, model, components, started_at_ms, finished_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (machine_id, started_at_ms) DO NOTHING",
    )
    .bind(machine_id)
    .bind(&vendor)
    .bind(&model)
    .bind(&components)
    .bind(start.saturating_add(waited_ms))
    .bind(at_ms)
    .execute(&mut *conn)
    .await?;
    // Keep the newest runs of the set only.
    sqlx::query(
        "DELETE FROM update_runs WHERE vendor = $1 AND model = $2 AND components = $3 AND finished_at_ms < \
         (SELECT MIN(finished_at_ms) FROM (SELECT finished_at_ms FROM update_runs \
          WHERE vendor = $1 AND model = $2 AND components = $3 ORDER BY finished_at_ms DESC LIMIT $4) AS newest)",
    )
    .bind(&vendor)
    .bind(&model)
    .bind(&components)
    .bind(i64::from(WINDOW_FIT_RUNS_KEPT))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

impl Store {
    /// The durations of the past runs on record, per vendor, model and component set (in that
    /// order), newest first, at most `WINDOW_FIT_RUNS_KEPT` each.
    pub async fn update_durations(&self) -> Result<Vec<UpdateDurations>> {
        const OP: &str = "update_durations";
        let rows = sqlx::query(
            "SELECT vendor, model, components, finished_at_ms - started_at_ms AS took_ms FROM update_runs \
             ORDER BY vendor, model, components, finished_at_ms DESC",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        let mut sets: BTreeMap<(String, String, String), Vec<i64>> = BTreeMap::new();
        for row in rows {
            let get = |c: &str| row.try_get::<String, _>(c).map_err(StoreError::db(OP, ""));
            let durations = sets.entry((get("vendor")?, get("model")?, get("components")?)).or_default();
            if durations.len() < WINDOW_FIT_RUNS_KEPT as usize {
                durations.push(row.try_get("took_ms").map_err(StoreError::db(OP, ""))?);
            }
        }
        sets.into_iter()
            .map(|((vendor, model, components), durations_ms)| {
                let components = components
                    .split(',')
                    .map(|c| {
                        c.parse::<ComponentType>().map_err(|e| StoreError::Corrupt {
                            op: OP,
                            id: format!("{vendor} {model}"),
                            detail: e.to_string(),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(UpdateDurations { vendor, model, components, durations_ms })
            })
            .collect()
    }

    /// Records one past run of `machine_id` directly, as the restore would have (tests seed a
    /// site's update history with it).
    pub async fn update_run_insert(
        &self,
        machine_id: &str,
        vendor: &str,
        model: &str,
        components: &[ComponentType],
        started_at_ms: i64,
        finished_at_ms: i64,
    ) -> Result<()> {
        const OP: &str = "update_run_insert";
        let mut names: Vec<String> = components.iter().map(ToString::to_string).collect();
        names.sort();
        names.dedup();
        sqlx::query(
            "INSERT INTO update_runs (machine_id, vendor, model, components, started_at_ms, finished_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (machine_id, started_at_ms) DO NOTHING",
        )
        .bind(machine_id)
        .bind(vendor)
        .bind(model)
        .bind(names.join(","))
        .bind(started_at_ms)
        .bind(finished_at_ms)
        .execute(&self.writer)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        Ok(())
    }
}
