//! The operator's brakes in the site database (migration 0019): freezes (`freezes`) and rollout
//! targets paused by hand (`target_pauses`), each change audited in its own transaction.
//!
//! Owns the two tables. A freeze is set with a scope (the whole site or a selector, parsed by
//! `hostfw_model::gates::FreezeScope`), a required reason and a `drain` flag; lifting it keeps
//! its row (who lifted it, when). A manual pause is one row per target; `hostfw budget resume`
//! deletes it with the target's error-budget record (`error_budget::target_resume`). Bad input
//! (an empty reason, a bad selector, a freeze that is not in force) changes nothing. It must not
//! decide which hosts a freeze holds (that is `gates::freeze`, from the records read here).
//! Each freeze set or lifted and each manual pause records its webhook event
//! (`notifications`) in the same transaction.

use hostfw_model::gates::{check_reason, Freeze, FreezeScope, OperatorPause, Target};
use hostfw_model::{ComponentType, NotificationKind};
use sqlx::Row;

use crate::audit::audit_append_in;
use crate::error::{Result, StoreError};
use crate::notifications::notify_in;
use crate::{now_ms, Store};

/// The audit action of `hostfw freeze`.
pub const AUDIT_FREEZE_SET: &str = "freeze.set";
/// The audit action of `hostfw unfreeze`.
pub const AUDIT_FREEZE_LIFT: &str = "freeze.lift";
/// The audit action of `hostfw budget pause`.
pub const AUDIT_BUDGET_PAUSE: &str = "budget.pause";

/// Which freezes `unfreeze` lifts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FreezeSelector {
    /// The freeze with this id.
    Id(i64),
    /// Every freeze in force with this scope: `None` the whole site, else a selector
    /// (`model=...`, `label=...`).
    Scope(Option<String>),
}

fn parse_scope(op: &'static str, selector: Option<&str>) -> Result<FreezeScope> {
    match selector {
        None => Ok(FreezeScope::Site),
        Some(text) => FreezeScope::parse(text).map_err(|e| StoreError::Invalid {
            op,
            id: text.to_string(),
            reason: e.to_string(),
        }),
    }
}

fn freeze_of(row: &sqlx::any::AnyRow) -> Result<Freeze> {
    const OP: &str = "freeze_list";
    let id: i64 = row.try_get("id").map_err(StoreError::db(OP, ""))?;
    let scope: String = row.try_get("scope").map_err(StoreError::db(OP, id.to_string()))?;
    let scope = FreezeScope::parse_stored(&scope).map_err(|e| StoreError::Corrupt {
        op: OP,
        id: id.to_string(),
        detail: e.to_string(),
    })?;
    let get = |e| StoreError::db(OP, id.to_string())(e);
    Ok(Freeze {
        id,
        scope,
        reason: row.try_get("reason").map_err(get)?,
        drain: row.try_get::<i64, _>("drain").map_err(get)? != 0,
        by: row.try_get("set_by").map_err(get)?,
        at_ms: row.try_get("set_at_ms").map_err(get)?,
    })
}

/// The first freeze in force that covers machine `id`, read in `tx` (the request's own
/// transaction, after the machine's lock), so a request made from a plan read before the freeze
/// committed is refused rather than started.
pub(crate) async fn freeze_covering_in(tx: &mut sqlx::Transaction<'_, sqlx::Any>, id: &str) -> Result<Option<Freeze>> {
    const OP: &str = "request_create";
    let machine = sqlx::query("SELECT vendor, model, labels FROM machines WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut **tx)
        .await
        .map_err(StoreError::db(OP, id))?;
    let Some(machine) = machine else { return Ok(None) };
    let vendor: Option<String> = machine.try_get("vendor").map_err(StoreError::db(OP, id))?;
    let model: Option<String> = machine.try_get("model").map_err(StoreError::db(OP, id))?;
    let labels: String = machine.try_get("labels").map_err(StoreError::db(OP, id))?;
    let labels = crate::machines::labels_from_db(&labels).map_err(|detail| StoreError::Corrupt {
        op: OP,
        id: id.to_string(),
        detail,
    })?;
    let rows = sqlx::query(
        "SELECT id, scope, reason, drain, set_by, set_at_ms FROM freezes WHERE lifted_at_ms IS NULL ORDER BY id",
    )
    .fetch_all(&mut **tx)
    .await
    .map_err(StoreError::db(OP, id))?;
    for row in &rows {
        let freeze = freeze_of(row)?;
        if freeze.scope.covers(vendor.as_deref(), model.as_deref(), &labels) {
            return Ok(Some(freeze));
        }
    }
    Ok(None)
}

impl Store {
    /// Sets a freeze on `selector`'s scope (`None`: the whole site) as `actor`, audited in the
    /// same transaction. An empty reason or a bad selector is refused and changes nothing.
    pub async fn freeze_set(&self, actor: &str, selector: Option<&str>, reason: &str, drain: bool) -> Result<Freeze> {
        const OP: &str = "freeze_set";
        let scope = parse_scope(OP, selector)?;
        let key = scope.key();
        check_reason(reason).map_err(|e| StoreError::Invalid { op: OP, id: key.clone(), reason: e.to_string() })?;
        let at_ms = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, &key))?;
        let id: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) + 1 FROM freezes")
            .fetch_one(&mut *tx)
            .await
            .map_err(StoreError::db(OP, &key))?;
        sqlx::query(
            "INSERT INTO freezes (id, scope, reason, drain, set_by, set_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id)
        .bind(&key)
        .bind(reason.trim())
        .bind(i64::from(drain))
        .bind(actor)
        .bind(at_ms)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, &key))?;
        let detail = format!(
            "freeze {id} set on {key}{}: {}",
            if drain { " (drain: hosts in flight finish)" } else { "" },
            reason.trim()
        );
        audit_append_in(&mut tx, actor, AUDIT_FREEZE_SET, &key, &detail, at_ms)
            .await
            .map_err(StoreError::db(OP, &key))?;
        let data = serde_json::json!({
            "action": "set", "freeze_id": id, "scope": key, "reason": reason.trim(), "drain": drain, "by": actor,
        });
        notify_in(&mut tx, NotificationKind::FreezeChanged, &key, data, at_ms)
            .await
            .map_err(StoreError::db(OP, &key))?;
        crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, &key))?;
        tx.commit().await.map_err(StoreError::db(OP, &key))?;
        Ok(Freeze { id, scope, reason: reason.trim().to_string(), drain, by: actor.to_string(), at_ms })
    }

    /// The freezes in force, oldest first.
    pub async fn freeze_list(&self) -> Result<Vec<Freeze>> {
        let rows = sqlx::query(
            "SELECT id, scope, reason, drain, set_by, set_at_ms FROM freezes WHERE lifted_at_ms IS NULL ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("freeze_list", ""))?;
        rows.iter().map(freeze_of).collect()
    }

    /// Lifts the freezes `which` names as `actor`, each audited in the same transaction; returns
    /// them. A freeze that is not in force (an unknown id, a scope with no freeze) is refused
    /// (`NotFound`) and nothing changes.
    pub async fn unfreeze(&self, actor: &str, which: &FreezeSelector) -> Result<Vec<Freeze>> {
        const OP: &str = "unfreeze";
        let (id_text, lifted): (String, Vec<Freeze>) = match which {
            FreezeSelector::Id(id) => {
                (id.to_string(), self.freeze_list().await?.into_iter().filter(|f| f.id == *id).collect())
            }
            FreezeSelector::Scope(selector) => {
                let scope = parse_scope(OP, selector.as_deref())?;
                (scope.key(), self.freeze_list().await?.into_iter().filter(|f| f.scope == scope).collect())
            }
        };
        if lifted.is_empty() {
            return Err(StoreError::not_found("freeze in force", id_text));
        }
        let at_ms = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, &id_text))?;
        for f in &lifted {
            let done = sqlx::query(
                "UPDATE freezes SET lifted_by = $2, lifted_at_ms = $3 WHERE id = $1 AND lifted_at_ms IS NULL",
            )
            .bind(f.id)
            .bind(actor)
            .bind(at_ms)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::db(OP, &id_text))?;
            if done.rows_affected() != 1 {
                // Lifted by someone else meanwhile: change nothing.
                tx.rollback().await.map_err(StoreError::db(OP, &id_text))?;
                return Err(StoreError::not_found("freeze in force", f.id.to_string()));
            }
            let detail = format!("freeze {} on {} lifted (set by {}: {})", f.id, f.scope, f.by, f.reason);
            audit_append_in(&mut tx, actor, AUDIT_FREEZE_LIFT, &f.scope.key(), &detail, at_ms)
                .await
                .map_err(StoreError::db(OP, &id_text))?;
            let data = serde_json::json!({
                "action": "lifted", "freeze_id": f.id, "scope": f.scope.key(), "reason": f.reason, "drain": f.drain,
                "by": actor, "set_by": f.by,
            });
            notify_in(&mut tx, NotificationKind::FreezeChanged, &f.scope.key(), data, at_ms)
                .await
                .map_err(StoreError::db(OP, &id_text))?;
        }
        tx.commit().await.map_err(StoreError::db(OP, &id_text))?;
        Ok(lifted)
    }

    /// Pauses `target` by hand as `actor` with `reason`, audited in the same transaction. A
    /// target paused already keeps its first pause (returned). An empty reason changes nothing.
    pub async fn target_pause(&self, target: &Target, actor: &str, reason: &str) -> Result<OperatorPause> {
        const OP: &str = "target_pause";
        let id = target.to_string();
        check_reason(reason).map_err(|e| StoreError::Invalid { op: OP, id: id.clone(), reason: e.to_string() })?;
        if let Some(p) = self.target_pauses().await?.into_iter().find(|p| &p.target == target) {
            return Ok(p);
        }
        let at_ms = now_ms();
        let mut tx = self.begin_write().await.map_err(StoreError::db(OP, &id))?;
        sqlx::query(
            "INSERT INTO target_pauses (vendor, model, component, version, paused_by, reason, paused_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&target.vendor)
        .bind(&target.model)
        .bind(target.component.to_string())
        .bind(&target.version)
        .bind(actor)
        .bind(reason.trim())
        .bind(at_ms)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::db(OP, &id))?;
        let detail = format!("target paused by hand: {}", reason.trim());
        audit_append_in(&mut tx, actor, AUDIT_BUDGET_PAUSE, &id, &detail, at_ms)
            .await
            .map_err(StoreError::db(OP, &id))?;
        let data = serde_json::json!({
            "cause": "operator", "vendor": target.vendor, "model": target.model,
            "component": target.component.to_string(), "version": target.version, "by": actor, "reason": reason.trim(),
        });
        notify_in(&mut tx, NotificationKind::TargetPaused, &id, data, at_ms).await.map_err(StoreError::db(OP, &id))?;
        crate::gate_fence::bump_in(&mut tx).await.map_err(StoreError::db(OP, &id))?;
        tx.commit().await.map_err(StoreError::db(OP, &id))?;
        Ok(OperatorPause { target: target.clone(), by: actor.to_string(), reason: reason.trim().to_string(), at_ms })
    }

    /// The targets paused by hand, in target order.
    pub async fn target_pauses(&self) -> Result<Vec<OperatorPause>> {
        const OP: &str = "target_pauses";
        let rows = sqlx::query(
            "SELECT vendor, model, component, version, paused_by, reason, paused_at_ms FROM target_pauses \
             ORDER BY vendor, model, component, version",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db(OP, ""))?;
        rows.iter()
            .map(|row| {
                let vendor: String = row.try_get("vendor").map_err(StoreError::db(OP, ""))?;
                let get = |e| StoreError::db(OP, vendor.clone())(e);
                let component: String = row.try_get("component").map_err(get)?;
                let component: ComponentType = component.parse().map_err(|e: hostfw_model::ParseNameError| {
                    StoreError::Corrupt { op: OP, id: vendor.clone(), detail: e.to_string() }
                })?;
                Ok(OperatorPause {
                    target: Target {
                        vendor: vendor.clone(),
                        model: row.try_get("model").map_err(get)?,
                        component,
                        version: row.try_get("version").map_err(get)?,
                    },
                    by: row.try_get("paused_by").map_err(get)?,
                    reason: row.try_get("reason").map_err(get)?,
                    at_ms: row.try_get("paused_at_ms").map_err(get)?,
                })
            })
            .collect()
    }
}

/// Inside `target_resume`'s transaction: deletes `target`'s manual pause; true when there was one.
pub(crate) async fn pause_clear_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    target: &Target,
) -> std::result::Result<bool, sqlx::Error> {
    let done =
        sqlx::query("DELETE FROM target_pauses WHERE vendor = $1 AND model = $2 AND component = $3 AND version = $4")
            .bind(&target.vendor)
            .bind(&target.model)
            .bind(target.component.to_string())
            .bind(&target.version)
            .execute(&mut **tx)
            .await?;
    Ok(done.rows_affected() > 0)
}
