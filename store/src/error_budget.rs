//! The error budget's record in the site database (migrations 0012 and 0013, `target_hosts`):
//! which hosts began installing each rollout target, which of them failed and why, when each
//! attempt ended (the canary waves' running hosts and soak); the canary waves' record per target
//! (migration 0017, `target_waves`: the host count frozen when its first wave started and the
//! wave reached); and the resume that clears a target's record (and its manual pause,
//! `brakes`).
//!
//! Owns the `target_hosts` and `target_waves` tables. Every time written here is the site
//! database's (`Store::db_now_ms`), never a worker's: the soak compares times that different
//! workers recorded. It must not decide whether a target is paused or which wave it is in (that
//! is `hostfw_model::gates::budget` and `gates::waves`, from the records read here).

use std::collections::BTreeMap;

use hostfw_model::gates::{ErrorBudget, OperatorPause, Target, TargetFailure, TargetRecord, WaveMark, WaveRecord};
use hostfw_model::{ComponentType, NotificationKind};
use sqlx::Row;

use crate::audit::audit_append_in;
use crate::brakes::pause_clear_in;
use crate::error::{Result, StoreError};
use crate::gate_fence::GateFence;
use crate::update_runs::record_run_in;
use crate::{now_ms, Store};

/// The audit action of `hostfw budget resume`.
pub const AUDIT_BUDGET_RESUME: &str = "budget.resume";

type Key = (String, String, String, String);

/// What `target_resume` cleared: the target's error-budget record and its manual pause (each
/// when there was one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumed {
    pub record: Option<TargetRecord>,
    pub pause: Option<OperatorPause>,
}

fn target_of(key: Key, op: &'static str) -> Result<Target> {
    let (vendor, model, component, version) = key;
    let component: ComponentType = component.parse().map_err(|e: hostfw_model::ParseNameError| {
        StoreError::Corrupt { op, id: vendor.clone(), detail: e.to_string() }
    })?;
    Ok(Target { vendor, model, component, version })
}

/// The target columns of a `target_hosts` row.
fn key_of(row: &sqlx::any::AnyRow) -> std::result::Result<Key, sqlx::Error> {
    Ok((row.try_get("vendor")?, row.try_get("model")?, row.try_get("component")?, row.try_get("version")?))
}

impl Store {
    /// `machine_id` begins installing `target` (now, by the database's clock). Idempotent: a
    /// host is recorded once per target, and a failure recorded before is kept.
    pub async fn target_attempt(&self, target: &Target, machine_id: &str) -> Result<()> {
        const OP: &str = "target_attempt";
        let at_ms = self.db_now_ms().await?;
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        let bind = |q: sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments<'static>>| {
            q.bind(target.vendor.clone())
                .bind(target.model.clone())
                .bind(target.component.to_string())
                .bind(target.version.clone())
                .bind(machine_id.to_string())
                .bind(at_ms)
        };
        let first = bind(sqlx::query(
            "INSERT INTO target_hosts (vendor, model, component, version, machine_id, attempted_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (vendor, model, component, version, machine_id) DO NOTHING",
        ))
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?
        .rows_affected()
            == 1;
        if first {
            // One more attempted host: it may spend the target's error budget.
            crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, machine_id))?;
        } else {
            bind(sqlx::query(
                "UPDATE target_hosts SET attempted_at_ms = $6 \
                 WHERE vendor = $1 AND model = $2 AND component = $3 AND version = $4 AND machine_id = $5",
            ))
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, machine_id))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, machine_id))?;
        Ok(())
    }

    /// `machine_id`'s attempt of `component` at `version` failed for `reason` (now, by the
    /// database's clock). Returns whether it
    /// was recorded: only the first failure after the host's latest attempt began is (a failure
    /// recorded twice, e.g. when a changed retry budget re-records it, keeps its first reason),
    /// and only while an attempt is on record (a host whose target was resumed since it began
    /// has none: the failure is not counted against the fresh budget).
    pub async fn target_failure(
        &self,
        machine_id: &str,
        component: ComponentType,
        version: &str,
        reason: &str,
    ) -> Result<bool> {
        self.target_failure_under(machine_id, component, version, reason, None).await
    }

    /// [`Store::target_failure`] under the site's error `budget`: when this failure spends the
    /// budget of the host's target (it was not spent before), the `target_paused` webhook event
    /// (cause `error_budget`, the rule) is written in the same transaction. The rule is
    /// `ErrorBudget::spent` over every failed host of the target, as the scheduler counts them.
    pub async fn target_failure_under(
        &self,
        machine_id: &str,
        component: ComponentType,
        version: &str,
        reason: &str,
        budget: Option<&ErrorBudget>,
    ) -> Result<bool> {
        const OP: &str = "target_failure";
        let at_ms = self.db_now_ms().await?;
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        let counts = "SELECT t.vendor, t.model, COUNT(*) AS hosts, \
               SUM(CASE WHEN t.failed_at_ms IS NOT NULL THEN 1 ELSE 0 END) AS failed \
             FROM target_hosts t JOIN target_hosts me ON me.vendor = t.vendor AND me.model = t.model \
               AND me.component = t.component AND me.version = t.version \
             WHERE me.machine_id = $1 AND me.component = $2 AND me.version = $3 GROUP BY t.vendor, t.model";
        let read =
            |row: Option<sqlx::any::AnyRow>| -> std::result::Result<Option<(String, String, u32, u32)>, sqlx::Error> {
                let Some(row) = row else { return Ok(None) };
                let n = |v: Option<i64>| u32::try_from(v.unwrap_or(0).max(0)).unwrap_or(u32::MAX);
                Ok(Some((
                    row.try_get("vendor")?,
                    row.try_get("model")?,
                    n(row.try_get("hosts")?),
                    n(row.try_get("failed")?),
                )))
            };
        let before = match budget {
            Some(_) => read(
                sqlx::query(counts)
                    .bind(machine_id)
                    .bind(component.to_string())
                    .bind(version)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(StoreError::db(OP, machine_id))?,
            )
            .map_err(StoreError::db(OP, machine_id))?,
            None => None,
        };
        let done = sqlx::query(
            "UPDATE target_hosts SET failed_at_ms = $4, failure = $5 \
             WHERE machine_id = $1 AND component = $2 AND version = $3 \
               AND (failed_at_ms IS NULL OR failed_at_ms < attempted_at_ms)",
        )
        .bind(machine_id)
        .bind(component.to_string())
        .bind(version)
        .bind(at_ms)
        .bind(reason)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        let recorded = done.rows_affected() > 0;
        if let (true, Some(budget), Some((vendor, model, hosts, failed_before))) = (recorded, budget, before) {
            let after = read(
                sqlx::query(counts)
                    .bind(machine_id)
                    .bind(component.to_string())
                    .bind(version)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(StoreError::db(OP, machine_id))?,
            )
            .map_err(StoreError::db(OP, machine_id))?;
            let failed_after = after.map_or(failed_before, |a| a.3);
            if let (None, Some(rule)) = (budget.spent(hosts, failed_before), budget.spent(hosts, failed_after)) {
                let target = Target { vendor, model, component, version: version.to_string() };
                let data = serde_json::json!({
                    "cause": "error_budget", "vendor": target.vendor, "model": target.model,
                    "component": component.to_string(), "version": version, "rule": rule,
                    "attempted_hosts": hosts, "failed_hosts": failed_after, "last_failure": machine_id,
                    "reason": reason,
                });
                crate::notifications::notify_in(
                    &mut tx,
                    NotificationKind::TargetPaused,
                    &target.to_string(),
                    data,
                    at_ms,
                )
                .await
                .map_err(StoreError::db(OP, machine_id))?;
            }
        }
        if recorded {
            // A failure may spend the target's budget or hold its next canary wave.
            crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, machine_id))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, machine_id))?;
        Ok(recorded)
    }

    /// Every target on record: its attempted hosts and its failures (oldest first), in target
    /// order. Counts are read in the database; only failed rows are read one by one.
    pub async fn target_records(&self) -> Result<Vec<TargetRecord>> {
        const OP: &str = "target_records";
        let counts = sqlx::query(
            "SELECT vendor, model, component, version, COUNT(*) AS hosts, MAX(attempted_at_ms) AS last_attempt, \
             MAX(finished_at_ms) AS last_finished, MAX(failed_at_ms) AS last_failed, \
             SUM(CASE WHEN failed_at_ms IS NOT NULL AND failed_at_ms >= attempted_at_ms THEN 1 ELSE 0 END) \
               AS failed_last FROM target_hosts \
             GROUP BY vendor, model, component, version",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        let mut records: BTreeMap<Key, TargetRecord> = BTreeMap::new();
        for row in counts {
            let key = key_of(&row).map_err(StoreError::db(OP, ""))?;
            let hosts: i64 = row.try_get("hosts").map_err(StoreError::db(OP, ""))?;
            let at = |column: &str| row.try_get::<Option<i64>, _>(column).map_err(StoreError::db(OP, ""));
            let last_done_ms = at("last_finished")?.max(at("last_failed")?);
            let last_attempt_ms = at("last_attempt")?;
            let failed_last = at("failed_last")?.unwrap_or(0);
            let target = target_of(key.clone(), OP)?;
            let attempted_hosts = u32::try_from(hosts).unwrap_or(u32::MAX);
            records.insert(
                key,
                TargetRecord {
                    target,
                    attempted_hosts,
                    failures: Vec::new(),
                    open: Vec::new(),
                    finished: Vec::new(),
                    last_done_ms,
                    last_attempt_ms,
                    failed_last: u32::try_from(failed_last).unwrap_or(u32::MAX),
                    waves: None,
                },
            );
        }
        // The canary waves' record. A target whose first wave started but none of whose hosts
        // has planned its install yet has this row only.
        let waves = sqlx::query("SELECT vendor, model, component, version, hosts, wave FROM target_waves")
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::db(OP, ""))?;
        for row in waves {
            let key = key_of(&row).map_err(StoreError::db(OP, ""))?;
            let number = |column: &str| {
                row.try_get::<i64, _>(column)
                    .map(|n| u32::try_from(n.max(0)).unwrap_or(u32::MAX))
                    .map_err(StoreError::db(OP, ""))
            };
            let record = WaveRecord { hosts: number("hosts")?, wave: number("wave")? };
            let target = target_of(key.clone(), OP)?;
            records
                .entry(key)
                .or_insert_with(|| TargetRecord {
                    target,
                    attempted_hosts: 0,
                    failures: Vec::new(),
                    open: Vec::new(),
                    finished: Vec::new(),
                    last_done_ms: None,
                    last_attempt_ms: None,
                    failed_last: 0,
                    waves: None,
                })
                .waves = Some(record);
        }
        let failed = sqlx::query(
            "SELECT vendor, model, component, version, machine_id, failed_at_ms, failure FROM target_hosts \
             WHERE failed_at_ms IS NOT NULL ORDER BY failed_at_ms, machine_id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        for row in failed {
            let key = key_of(&row).map_err(StoreError::db(OP, ""))?;
            let failure = TargetFailure {
                machine_id: row.try_get("machine_id").map_err(StoreError::db(OP, ""))?,
                reason: row
                    .try_get::<Option<String>, _>("failure")
                    .map_err(StoreError::db(OP, ""))?
                    .unwrap_or_default(),
                at_ms: row.try_get("failed_at_ms").map_err(StoreError::db(OP, ""))?,
            };
            // A row inserted between the two reads has no count yet: it is read next time.
            if let Some(record) = records.get_mut(&key) {
                record.failures.push(failure);
            }
        }
        // Attempts still open: at most the hosts in flight, so few rows.
        let open = self
            .attempts_where(
                OP,
                "(failed_at_ms IS NULL OR failed_at_ms < attempted_at_ms) \
                 AND (finished_at_ms IS NULL OR finished_at_ms < attempted_at_ms)",
            )
            .await?;
        for (key, machine_id) in open {
            if let Some(record) = records.get_mut(&key) {
                record.open.push(machine_id);
            }
        }
        // Attempts that finished and never failed: with the two lists above, every attempted
        // host by name (the canary waves count each host once).
        let finished = self
            .attempts_where(
                OP,
                "failed_at_ms IS NULL AND finished_at_ms IS NOT NULL AND finished_at_ms >= attempted_at_ms",
            )
            .await?;
        for (key, machine_id) in finished {
            if let Some(record) = records.get_mut(&key) {
                record.finished.push(machine_id);
            }
        }
        Ok(records.into_values().collect())
    }

    /// The target and machine id of every attempt row matching `condition` (a fixed SQL
    /// condition on `target_hosts`), in machine id order.
    async fn attempts_where(&self, op: &'static str, condition: &str) -> Result<Vec<(Key, String)>> {
        let rows = sqlx::query(&format!(
            "SELECT vendor, model, component, version, machine_id FROM target_hosts WHERE {condition} \
             ORDER BY machine_id"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(op, ""))?;
        rows.iter()
            .map(|row| Ok((key_of(row)?, row.try_get("machine_id")?)))
            .collect::<std::result::Result<_, sqlx::Error>>()
            .map_err(StoreError::db(op, ""))
    }

    /// Writes the canary waves' record the scheduler's pass decided (`gates::wave_marks`): each
    /// target's host count and wave reached, only ever larger than what is recorded, and only
    /// while the target still has at least the attempts the pass read (a `hostfw budget resume`
    /// since then cleared them: the stale mark is dropped, the next pass decides afresh). In one
    /// transaction, written only while the gate `fence` the pass read before its view has not
    /// moved (else `GateMoved`, nothing written: a resume, a stale pass's view). Returns the
    /// targets whose mark was dropped.
    pub async fn target_waves_mark(&self, marks: &[WaveMark], fence: &GateFence) -> Result<Vec<Target>> {
        const OP: &str = "target_waves_mark";
        if marks.is_empty() {
            return Ok(Vec::new());
        }
        let at_ms = self.db_now_ms().await?;
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, ""))?;
        let mut dropped = Vec::new();
        for m in marks {
            let t = &m.target;
            let before: Option<i64> = sqlx::query_scalar(
                "SELECT wave FROM target_waves WHERE vendor = $1 AND model = $2 AND component = $3 AND version = $4",
            )
            .bind(&t.vendor)
            .bind(&t.model)
            .bind(t.component.to_string())
            .bind(&t.version)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::db(OP, t.to_string()))?;
            let done = sqlx::query(
                "INSERT INTO target_waves (vendor, model, component, version, hosts, wave, updated_at_ms) \
                 SELECT $1, $2, $3, $4, $5, $6, $7 \
                 WHERE (SELECT COUNT(*) FROM target_hosts \
                        WHERE vendor = $1 AND model = $2 AND component = $3 AND version = $4) >= $8 \
                 ON CONFLICT (vendor, model, component, version) DO UPDATE SET \
                   hosts = CASE WHEN excluded.hosts > target_waves.hosts THEN excluded.hosts ELSE target_waves.hosts END, \
                   wave = CASE WHEN excluded.wave > target_waves.wave THEN excluded.wave ELSE target_waves.wave END, \
                   updated_at_ms = excluded.updated_at_ms",
            )
            .bind(&t.vendor)
            .bind(&t.model)
            .bind(t.component.to_string())
            .bind(&t.version)
            .bind(i64::from(m.record.hosts))
            .bind(i64::from(m.record.wave))
            .bind(at_ms)
            .bind(i64::from(m.attempted_hosts))
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, t.to_string()))?;
            if done.rows_affected() == 0 {
                dropped.push(t.clone());
            } else if before.is_none_or(|w| i64::from(m.record.wave) > w) {
                // A wave opened: its webhook event, in the mark's transaction (`notifications`).
                let data = serde_json::json!({
                    "vendor": t.vendor, "model": t.model, "component": t.component.to_string(),
                    "version": t.version, "wave": m.record.wave, "hosts": m.record.hosts,
                });
                crate::notifications::notify_in(&mut tx, NotificationKind::WaveOpened, &t.to_string(), data, at_ms)
                    .await
                    .map_err(StoreError::db(OP, t.to_string()))?;
            }
        }
        // The fence last, as every write takes it.
        if !crate::gate_fence::hold_in(&mut tx, fence).await.map_err(StoreError::db(OP, ""))? {
            tx.rollback().await.map_err(StoreError::db(OP, ""))?;
            return Err(StoreError::GateMoved { decision: "mark the canary waves".to_string(), read: fence.epoch() });
        }
        tx.commit().await.map_err(StoreError::db(OP, ""))?;
        Ok(dropped)
    }

    /// `machine_id`'s update run ended (its workflow restored it): each of its attempts still
    /// open ends now (by the database's clock). A failed attempt keeps its failure. Returns how
    /// many ended. A run that ended well is recorded for window fit first, in the same
    /// transaction (`update_runs`).
    pub async fn target_finish(&self, machine_id: &str) -> Result<u64> {
        const OP: &str = "target_finish";
        let at_ms = self.db_now_ms().await?;
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, machine_id))?;
        // The run's end by this process's clock, like its start (the state history's entry).
        record_run_in(&mut tx, machine_id, now_ms()).await.map_err(StoreError::db(OP, machine_id))?;
        let done = sqlx::query(
            "UPDATE target_hosts SET finished_at_ms = $2 \
             WHERE machine_id = $1 AND (finished_at_ms IS NULL OR finished_at_ms < attempted_at_ms)",
        )
        .bind(machine_id)
        .bind(at_ms)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, machine_id))?;
        // A run that ended moves window fit's past durations (a longer p90 may no longer fit).
        crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, machine_id))?;
        tx.commit().await.map_err(StoreError::db(OP, machine_id))?;
        Ok(done.rows_affected())
    }

    /// Clears `target`'s record (its error budget starts again from nothing, its canary waves from
    /// the first with the hosts counted afresh) and its manual pause (`hostfw budget pause`), and
    /// audits it as `actor`, in one transaction. Returns what was cleared (`None`: nothing was on
    /// record nor paused, and nothing is written).
    pub async fn target_resume(&self, target: &Target, actor: &str) -> Result<Option<Resumed>> {
        const OP: &str = "target_resume";
        let id = target.to_string();
        let record = self.target_records().await?.into_iter().find(|r| &r.target == target);
        let pause = self.target_pauses().await?.into_iter().find(|p| &p.target == target);
        if record.is_none() && pause.is_none() {
            return Ok(None);
        }
        let before = record.clone().unwrap_or_else(|| TargetRecord {
            target: target.clone(),
            attempted_hosts: 0,
            failures: Vec::new(),
            open: Vec::new(),
            finished: Vec::new(),
            last_done_ms: None,
            last_attempt_ms: None,
            failed_last: 0,
            waves: None,
        });
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, &id))?;
        let deleted = sqlx::query(
            "DELETE FROM target_hosts WHERE vendor = $1 AND model = $2 AND component = $3 AND version = $4",
        )
        .bind(&target.vendor)
        .bind(&target.model)
        .bind(target.component.to_string())
        .bind(&target.version)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, &id))?;
        sqlx::query("DELETE FROM target_waves WHERE vendor = $1 AND model = $2 AND component = $3 AND version = $4")
            .bind(&target.vendor)
            .bind(&target.model)
            .bind(target.component.to_string())
            .bind(&target.version)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, &id))?;
        let failed: Vec<&str> = before.failures.iter().map(|f| f.machine_id.as_str()).collect();
        let waves = match before.waves {
            Some(w) => format!(
                "; canary waves start again from the first (wave {} of a target of {} hosts was reached)",
                w.wave, w.hosts
            ),
            None => String::new(),
        };
        let unpaused = pause_clear_in(&mut tx, target).await.map_err(StoreError::db(OP, &id))?;
        let manual = match (&pause, unpaused) {
            (Some(p), true) => format!("; the pause set by {} ({}) is lifted", p.by, p.reason),
            _ => String::new(),
        };
        let detail = format!(
            "error budget reset: {} rows cleared ({} hosts attempted, {} failed: {}){waves}{manual}",
            deleted.rows_affected(),
            before.attempted_hosts,
            failed.len(),
            if failed.is_empty() { "none".to_string() } else { failed.join(", ") }
        );
        audit_append_in(&mut tx, actor, AUDIT_BUDGET_RESUME, &id, &detail, now_ms())
            .await
            .map_err(StoreError::db(OP, &id))?;
        // The target's canary waves start again from the first: a pass that read the old ones
        // must not fill the new first wave from them.
        crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, &id))?;
        tx.commit().await.map_err(StoreError::db(OP, &id))?;
        Ok(Some(Resumed { record, pause: pause.filter(|_| unpaused) }))
    }
}
